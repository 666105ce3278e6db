// Renders zod issues as one line in Loom's words: the field path, then what was expected. One formatter for every
// file Loom validates (catalogs, requests, recordings, reports), so their errors read alike.
import { z } from "zod";
import { clipText } from "./clip.ts";

function formatIssuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(root)";
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

/**
 * Zod's default for a missing field is "expected string, received undefined"; say it is missing instead. Pass it to
 * safeParse (`{ error: MISSING_FIELDS }`).
 */
export const MISSING_FIELDS: z.core.$ZodErrorMap = (issue) =>
  issue.code === "invalid_type" && issue.input === undefined
    ? `required field missing (expected ${issue.expected === "record" ? "object" : issue.expected})`
    : undefined;

/** The keys a strict object at `path` of `schema` accepts, for "unknown key" messages. */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const unwrap = (s: z.ZodType): z.ZodType => {
    for (;;) {
      if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) {
        s = s.unwrap() as z.ZodType;
      } else if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
      else return s;
    }
  };
  let at = unwrap(schema);
  for (const part of path) {
    if (at instanceof z.ZodObject) at = at.shape[String(part)];
    else if (at instanceof z.ZodRecord) at = at.valueType as z.ZodType;
    else if (at instanceof z.ZodArray) at = at.element as z.ZodType;
    else return [];
    if (!at) return [];
    at = unwrap(at);
  }
  return at instanceof z.ZodObject ? Object.keys(at.shape) : [];
}

/**
 * One line per problem: field path, then what was expected. `schema` names the keys an unknown key could have been.
 * `worded` also rewords zod's own texts for choices, sizes and missing fields ("expected one of …", "expected at least
 * 1"): for files people write. The loop's re-asks and refusals keep the default, so replays of earlier recordings send
 * the same bytes and compare equal.
 */
export function describeIssues(
  error: z.ZodError,
  { schema, worded = false }: { schema?: z.ZodType; worded?: boolean } = {},
): string[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      const keys = schema ? keysAt(schema, issue.path) : [];
      const expected = keys.length > 0 ? ` (expected one of ${keys.join(", ")})` : "";
      return issue.keys.map((key) => `${formatIssuePath([...issue.path, key])}: unknown key${expected}`);
    }
    if (issue.code === "invalid_key") {
      const inner = issue.issues[0]?.message ?? issue.message;
      return [`${formatIssuePath(issue.path)}: invalid name, ${inner}`];
    }
    // An enum: zod says 'Invalid option: expected one of "a"|"b"'; say it as the catalog's errors do.
    if (worded && issue.code === "invalid_value" && issue.values.length > 1) {
      return [
        `${formatIssuePath(issue.path)}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`,
      ];
    }
    // Sizes in words: zod says "Too small: expected number to be >0".
    if (worded && (issue.code === "too_small" || issue.code === "too_big")) {
      const bound = Number(issue.code === "too_small" ? issue.minimum : issue.maximum);
      const inclusive = issue.inclusive !== false;
      const what = issue.origin === "array" || issue.origin === "set"
        ? `${bound} item${bound === 1 ? "" : "s"}`
        : issue.origin === "string"
        ? `${bound} character${bound === 1 ? "" : "s"}`
        : String(bound);
      const words = issue.code === "too_small"
        ? issue.origin === "array" && bound === 1
          ? "expected a non-empty list"
          : `expected ${inclusive ? "at least" : "more than"} ${what}`
        : `expected ${inclusive ? "at most" : "less than"} ${what}`;
      return [`${formatIssuePath(issue.path)}: ${words}`];
    }
    // A field that is absent: zod says "expected string, received undefined".
    if (worded && issue.code === "invalid_type" && /received undefined$/.test(issue.message)) {
      return [`${formatIssuePath(issue.path)}: required field missing (expected ${issue.expected})`];
    }
    // Zod words its own defaults "Invalid input: expected …"; keep only what was expected.
    return [`${formatIssuePath(issue.path)}: ${issue.message.replace(/^Invalid input: /, "")}`];
  });
}

export function formatZodError(
  error: z.ZodError,
  { limit = 3, schema, worded }: { limit?: number; schema?: z.ZodType; worded?: boolean } = {},
): string {
  // Messages can quote what was given (an unrecognized key); keep each one short.
  const issues = describeIssues(error, { schema, worded }).map((line) => clipText(line, 300));
  const more = issues.length > limit ? ` (+${issues.length - limit} more)` : "";
  return issues.slice(0, limit).join("; ") + more;
}
