// The catalog: models, slices and routes from one JSON or JSONC file. The zod schema is the type and the source of
// the JSON Schema editors validate with; loadCatalog renders every failure as the file, the field path and what was
// expected.
import { ContextPolicyName } from "./policy.ts";
import { z } from "zod";
import { StartupError } from "./errors.ts";
import { ProviderConfig } from "./providers/provider-config.ts";
import { SandboxSettings, SliceRequest } from "./slice.ts";
import { formatIssuePath } from "./zod-error.ts";

/** Where the request text goes in a slice's intent template. */
export const REQUEST_PLACEHOLDER = "{{request}}";

const Name = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.-]*$/,
    'expected a name of letters, digits, ".", "_" or "-" (not starting with a symbol)',
  );

const Path = z.string().min(1);

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** The SliceRequest fields a catalog slice sets as they are; the rest it names (model), templates (intent) or resolves
 * relative to the catalog (workspace). */
const { instructions, actions, test, limits, commands } = SliceRequest.shape;

export const CatalogSlice = z.strictObject({
  description: z.string().min(1).describe(
    "What the slice is for, in a line; classification chooses among slices by it",
  ),
  intent: z
    .string()
    .refine((text) => text.includes(REQUEST_PLACEHOLDER), `expected a template containing ${REQUEST_PLACEHOLDER}`)
    .describe(`Intent template; ${REQUEST_PLACEHOLDER} is replaced by the request text`),
  instructions: instructions.describe("How to work; sent verbatim, first in every request"),
  actions,
  test: test.describe("The slice's test command"),
  model: Name.describe("Name of the entry in models that runs this slice"),
  limits: limits.describe("Limits of one run"),
  commands,
  sandbox: SandboxSettings.optional().describe(
    "Where test and command processes run and what they see (docs/sandbox.md); merged over defaults.sandbox",
  ),
  workspace: Path.optional().describe("Workspace directory, relative to the catalog file; --workspace overrides it"),
  context_policy: ContextPolicyName.optional().describe("legacy or bounded; --context-policy overrides it"),
  context_report: Path.optional().describe(
    "Context report path, relative to the catalog file; --context-report overrides it",
  ),
});
export type CatalogSlice = z.infer<typeof CatalogSlice>;

export const PatternRule = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .refine(isRegExp, "expected a valid JavaScript regular expression")
    .describe("Regular expression (JavaScript syntax) searched for in the request text"),
  ignore_case: z.boolean().optional().describe("Match without regard to letter case"),
  slice: Name.describe("Slice to run when the pattern matches"),
});
export type PatternRule = z.infer<typeof PatternRule>;

export const Classification = z.strictObject({
  model: Name.describe("Name of the entry in models that classifies"),
  slices: z.array(Name).min(1).optional().describe("Candidate slices, in this order; all slices when absent"),
  instructions: z.string().min(1).optional().describe(
    "Instructions of the classification request; a built-in text when absent",
  ),
});
export type Classification = z.infer<typeof Classification>;

export const Routes = z.strictObject({
  rules: z.array(PatternRule).optional().describe("Pattern rules, tried first, in order; the first match wins"),
  classification: Classification.optional().describe("A model call choosing among named slices, when no rule matched"),
  default: Name.optional().describe(
    "Slice to run when no rule matched and classification chose none (or is not configured)",
  ),
});
export type Routes = z.infer<typeof Routes>;

export const CatalogDefaults = z.strictObject({
  sandbox: SandboxSettings.optional().describe("Sandbox settings of every slice (a slice's own win, key by key)"),
  workspace: Path.optional().describe("Workspace of slices that name none, relative to the catalog file"),
  context_policy: ContextPolicyName.optional().describe(
    "Policy of slices that name none, and of the classification request",
  ),
  context_report: Path.optional().describe(
    "Context report path, relative to the catalog file; also used for routing failures",
  ),
});

type CatalogShape = {
  models: Record<string, ProviderConfig>;
  slices: Record<string, CatalogSlice>;
  routes?: Routes;
};

const known = (names: Record<string, unknown>) =>
  Object.keys(names).map((n) => JSON.stringify(n)).join(", ") || "(none)";

/** References between sections, which a JSON Schema cannot express: every model and slice named must exist. */
function checkReferences(catalog: CatalogShape, ctx: z.RefinementCtx): void {
  const refer = (kind: "model" | "slice", name: string, path: (string | number)[]) => {
    const table = kind === "model" ? catalog.models : catalog.slices;
    if (Object.hasOwn(table, name)) return;
    ctx.addIssue({
      code: "custom",
      path,
      message: `unknown ${kind} ${JSON.stringify(name)} (expected one of ${known(table)})`,
    });
  };
  if (Object.keys(catalog.slices).length === 0) {
    ctx.addIssue({ code: "custom", path: ["slices"], message: "expected at least one slice" });
  }
  for (const [name, slice] of Object.entries(catalog.slices)) refer("model", slice.model, ["slices", name, "model"]);
  const routes = catalog.routes ?? {};
  (routes.rules ?? []).forEach((rule, i) => refer("slice", rule.slice, ["routes", "rules", i, "slice"]));
  if (routes.classification) {
    refer("model", routes.classification.model, ["routes", "classification", "model"]);
    (routes.classification.slices ?? []).forEach((name, i) =>
      refer("slice", name, ["routes", "classification", "slices", i])
    );
  }
  if (routes.default !== undefined) refer("slice", routes.default, ["routes", "default"]);
}

export const Catalog = z
  .strictObject({
    $schema: z.string().optional().describe(
      "JSON Schema of this file, for editors (e.g. schemas/catalog.schema.json); ignored by Loom",
    ),
    defaults: CatalogDefaults.optional().describe("Settings for every slice that does not set its own"),
    models: z.record(Name, ProviderConfig).describe(
      "Model configurations by name; credentials only as names of environment variables",
    ),
    slices: z.record(Name, CatalogSlice).describe("Slices by name"),
    routes: Routes.optional().describe("How a request chooses a slice when --slice is not given"),
  })
  .superRefine(checkReferences);
export type Catalog = z.infer<typeof Catalog>;

/** The intent of a slice for one request. split/join, not replace(): "$&" in a request must stay literal. */
export function renderIntent(template: string, request: string): string {
  return template.split(REQUEST_PLACEHOLDER).join(request);
}

// ---- JSONC: JSON plus comments and trailing commas ----

export type JsoncResult = { ok: true; value: unknown } | { ok: false; line: number; column: number; message: string };

const MAX_DEPTH = 64;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Parses JSON with // and block comments and trailing commas. A small parser of our own rather than stripping and
 * calling JSON.parse: runtimes word (and place) JSON syntax errors differently, and duplicate keys must be errors,
 * not a silent last-one-wins.
 */
export function parseJsonc(text: string): JsoncResult {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  class Fail {
    constructor(readonly at: number, readonly message: string) {}
  }
  const fail = (message: string, at = i): never => {
    throw new Fail(at, message);
  };
  const describe =
    () => (i >= text.length ? "the end of the file" : text[i] === '"' ? "a string" : JSON.stringify(text[i]));
  const skip = () => {
    for (;;) {
      const c = text[i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r") i++;
      else if (c === "/" && text[i + 1] === "/") {
        while (i < text.length && text[i] !== "\n") i++;
      } else if (c === "/" && text[i + 1] === "*") {
        const end = text.indexOf("*/", i + 2);
        if (end === -1) fail("unterminated /* comment");
        i = end + 2;
      } else return;
    }
  };
  const string = (): string => {
    const start = i;
    for (i++;; i++) {
      if (i >= text.length || text[i] === "\n") fail("unterminated string", start);
      if (text[i] === "\\") i++;
      else if (text[i] === '"') break;
    }
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail("invalid string (bad escape or control character)", start);
    }
  };
  const value = (depth: number): unknown => {
    if (depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH} levels`);
    skip();
    const c = text[i];
    if (c === '"') return string();
    if (c === "{" || c === "[") {
      const object = c === "{";
      const close = object ? "}" : "]";
      const out: Record<string, unknown> | unknown[] = object ? {} : [];
      i++;
      for (;;) {
        skip();
        if (text[i] === close) break;
        if (object) {
          if (text[i] !== '"') fail(`expected a property name in double quotes or "}", found ${describe()}`);
          const at = i;
          const key = string();
          if (Object.hasOwn(out, key)) fail(`duplicate key ${JSON.stringify(key)}`, at);
          skip();
          if (text[i] !== ":") fail(`expected ":" after ${JSON.stringify(key)}, found ${describe()}`);
          i++;
          // defineProperty: a "__proto__" key is data, not a prototype change.
          Object.defineProperty(out, key, {
            value: value(depth + 1),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else (out as unknown[]).push(value(depth + 1));
        skip();
        if (text[i] === ",") i++;
        else if (text[i] !== close) fail(`expected "," or "${close}", found ${describe()}`);
      }
      i++;
      return out;
    }
    for (const [word, literal] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return literal;
      }
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number) {
      i += number[0].length;
      return Number(number[0]);
    }
    return fail(`expected a value, found ${describe()}`);
  };
  try {
    const result = value(0);
    skip();
    if (i < text.length) fail(`unexpected ${describe()} after the end of the value`);
    return { ok: true, value: result };
  } catch (error) {
    if (!(error instanceof Fail)) throw error;
    const before = text.slice(0, error.at);
    const line = before.split("\n").length;
    return { ok: false, line, column: error.at - before.lastIndexOf("\n"), message: error.message };
  }
}

// ---- loading ----

/** The keys a strict object at `path` accepts, for "unknown key" messages. */
function keysAt(path: readonly PropertyKey[]): string[] {
  let schema: z.ZodType = Catalog;
  for (const part of path) {
    while (schema instanceof z.ZodOptional) schema = schema.unwrap() as z.ZodType;
    if (schema instanceof z.ZodObject) schema = schema.shape[String(part)];
    else if (schema instanceof z.ZodRecord) schema = schema.valueType as z.ZodType;
    else if (schema instanceof z.ZodArray) schema = schema.element as z.ZodType;
    else return [];
    if (!schema) return [];
  }
  while (schema instanceof z.ZodOptional) schema = schema.unwrap() as z.ZodType;
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/** One line per problem: field path, then what was expected. */
export function catalogIssues(error: z.ZodError): string[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      const expected = keysAt(issue.path).join(", ");
      return issue.keys.map((key) =>
        `${formatIssuePath([...issue.path, key])}: unknown key (expected one of ${expected})`
      );
    }
    if (issue.code === "invalid_key") {
      const inner = issue.issues[0]?.message ?? issue.message;
      return [`${formatIssuePath(issue.path)}: invalid name, ${inner}`];
    }
    return [`${formatIssuePath(issue.path)}: ${issue.message}`];
  });
}

// Zod's default for a missing field is "expected string, received undefined"; say it is missing instead.
const missingFields: z.core.$ZodErrorMap = (issue) =>
  issue.code === "invalid_type" && issue.input === undefined
    ? `required field missing (expected ${issue.expected === "record" ? "object" : issue.expected})`
    : undefined;

/**
 * Parses and validates a catalog. `file` names it in errors (as the user wrote it). Throws StartupError
 * "catalog_invalid" with the first few problems on one line.
 */
export function loadCatalog(text: string, { file, limit = 3 }: { file: string; limit?: number }): Catalog {
  const where = `Invalid catalog ${JSON.stringify(file)}`;
  const json = parseJsonc(text);
  if (!json.ok) {
    throw new StartupError(`${where}: line ${json.line}, column ${json.column}: ${json.message}`, "catalog_invalid");
  }
  const parsed = Catalog.safeParse(json.value, { error: missingFields });
  if (parsed.success) return parsed.data;
  const issues = catalogIssues(parsed.error);
  const more = issues.length > limit ? ` (+${issues.length - limit} more)` : "";
  throw new StartupError(`${where}: ${issues.slice(0, limit).join("; ")}${more}`, "catalog_invalid");
}

/** The catalog's JSON Schema, as shipped in schemas/catalog.schema.json. */
export function catalogJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(Catalog) as Record<string, unknown>;
}
