// The catalog: models, slices and routes from one JSON or JSONC file. The zod schema is the type and the source of
// the JSON Schema editors validate with; loadCatalog renders every failure as the file, the field path and what was
// expected.
import { ContextPolicyName, PreviewMode, StepProtocol } from "../policy.ts";
import { z } from "zod";
import { StartupError } from "../errors.ts";
import { ProviderConfig } from "../settings/provider-config.ts";
import { SandboxSettings, SliceRequest, WorkspaceIgnore } from "../slice.ts";
import { describeJsonFailure, parseJsonc } from "../text/json-text.ts";
import { describeIssues, MISSING_FIELDS } from "../text/zod-error.ts";

export { type JsoncResult, parseJsonc } from "../text/json-text.ts";

/** Where the request text goes in a slice's intent template. */
const REQUEST_PLACEHOLDER = "{{request}}";

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

const CatalogSlice = z.strictObject({
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
  workspace_ignore: WorkspaceIgnore.optional(),
  context_policy: ContextPolicyName.optional().describe("legacy or bounded; --context-policy overrides it"),
  step_protocol: StepProtocol.optional().describe("two-call (default) or single-call; --step-protocol overrides it"),
  previews: PreviewMode.optional().describe("compact, balanced (default) or wide; --previews overrides it"),
  require_passing_tests: z.boolean().optional().describe(
    "Refuse a finish with status success unless the latest revision's tests passed; exit 1 when a run " +
      "completes unverified, any other ending keeping its own exit code (--require-passing-tests sets it for every " +
      "slice)",
  ),
  context_report: Path.optional().describe(
    "Context report path, relative to the catalog file; --context-report overrides it",
  ),
});
export type CatalogSlice = z.infer<typeof CatalogSlice>;

const PatternRule = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .refine(isRegExp, "expected a valid JavaScript regular expression")
    .describe("Regular expression (JavaScript syntax) searched for in the request text"),
  ignore_case: z.boolean().optional().describe("Match without regard to letter case"),
  slice: Name.describe("Slice to run when the pattern matches"),
});
export type PatternRule = z.infer<typeof PatternRule>;

const Classification = z.strictObject({
  model: Name.describe("Name of the entry in models that classifies"),
  slices: z.array(Name).min(1).optional().describe("Candidate slices, in this order; all slices when absent"),
  instructions: z.string().min(1).optional().describe(
    "Instructions of the classification request; a built-in text when absent",
  ),
});
export type Classification = z.infer<typeof Classification>;

const Routes = z.strictObject({
  rules: z.array(PatternRule).optional().describe("Pattern rules, tried first, in order; the first match wins"),
  classification: Classification.optional().describe("A model call choosing among named slices, when no rule matched"),
  default: Name.optional().describe(
    "Slice to run when no rule matched and classification chose none (or is not configured)",
  ),
});
export type Routes = z.infer<typeof Routes>;

const CatalogDefaults = z.strictObject({
  sandbox: SandboxSettings.optional().describe("Sandbox settings of every slice (a slice's own win, key by key)"),
  workspace: Path.optional().describe("Workspace of slices that name none, relative to the catalog file"),
  workspace_ignore: WorkspaceIgnore.optional(),
  context_policy: ContextPolicyName.optional().describe(
    "Policy of slices that name none, and of the classification request",
  ),
  step_protocol: StepProtocol.optional().describe("Step protocol of slices that name none"),
  previews: PreviewMode.optional().describe("Bounded previews of slices that name none"),
  context_report: Path.optional().describe(
    "Context report path, relative to the catalog file; also used for routing failures",
  ),
});

type CatalogShape = {
  models: Record<string, ProviderConfig>;
  slices: Record<string, CatalogSlice>;
  routes?: Routes;
};

const known = (names: Record<string, unknown>, kind: string) =>
  Object.keys(names).length === 0
    ? `the catalog defines no ${kind}s`
    : `expected one of ${Object.keys(names).map((n) => JSON.stringify(n)).join(", ")}`;

/** References between sections, which a JSON Schema cannot express: every model and slice named must exist. */
function checkReferences(catalog: CatalogShape, ctx: z.RefinementCtx): void {
  const refer = (kind: "model" | "slice", name: string, path: (string | number)[]) => {
    const table = kind === "model" ? catalog.models : catalog.slices;
    if (Object.hasOwn(table, name)) return;
    ctx.addIssue({
      code: "custom",
      path,
      message: `unknown ${kind} ${JSON.stringify(name)} (${known(table, kind)})`,
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

// ---- loading ----

/**
 * Parses and validates a catalog. `file` names it in errors (as the user wrote it). Throws StartupError
 * "catalog_invalid" with the first few problems on one line.
 */
export function loadCatalog(text: string, { file, limit = 3 }: { file: string; limit?: number }): Catalog {
  const where = `Invalid catalog ${JSON.stringify(file)}`;
  const json = parseJsonc(text);
  if (!json.ok) {
    throw new StartupError(`${where}: ${describeJsonFailure(json)}`, "catalog_invalid");
  }
  const parsed = Catalog.safeParse(json.value, { error: MISSING_FIELDS });
  if (parsed.success) return parsed.data;
  const issues = describeIssues(parsed.error, { schema: Catalog });
  const more = issues.length > limit ? ` (+${issues.length - limit} more)` : "";
  throw new StartupError(`${where}: ${issues.slice(0, limit).join("; ")}${more}`, "catalog_invalid");
}

/** The catalog's JSON Schema, as shipped in schemas/catalog.schema.json. */
export function catalogJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(Catalog) as Record<string, unknown>;
}
