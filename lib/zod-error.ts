// Renders zod issues as one line in Loom's words: the field path, then what was expected. One formatter for every
// file Loom validates (catalogs, requests, recordings, reports), so their errors read alike.
import { z } from "zod";
import { clipText } from "./clip.ts";

export function formatIssuePath(path: readonly PropertyKey[]): string {
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

/** One line per problem: field path, then what was expected. `schema` names the keys an unknown key could have been. */
export function describeIssues(error: z.ZodError, { schema }: { schema?: z.ZodType } = {}): string[] {
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
    if (issue.code === "invalid_value" && issue.values.length > 1) {
      return [
        `${formatIssuePath(issue.path)}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`,
      ];
    }
    // Zod words its own defaults "Invalid input: expected …"; keep only what was expected.
    return [`${formatIssuePath(issue.path)}: ${issue.message.replace(/^Invalid input: /, "")}`];
  });
}

export function formatZodError(
  error: z.ZodError,
  { limit = 3, schema }: { limit?: number; schema?: z.ZodType } = {},
): string {
  // Messages can quote what was given (an unrecognized key); keep each one short.
  const issues = describeIssues(error, { schema }).map((line) => clipText(line, 300));
  const more = issues.length > limit ? ` (+${issues.length - limit} more)` : "";
  return issues.slice(0, limit).join("; ") + more;
}
