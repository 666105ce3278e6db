// SliceRequest: everything one slice needs.
import { z } from "zod";
import { ActionName } from "./vocabulary/actions.ts";
import { PreviewMode, StepProtocol } from "./policy.ts";
import { SandboxMode } from "./sandbox-state.ts";
import { ThinkingType } from "./models/models.ts";

export const TestSpec = z.strictObject({
  command: z.array(z.string()).min(1).describe("argv of the test command, run in the workspace without a shell"),
  timeout_ms: z.number().int().positive().describe("Kill the test process group after this many milliseconds"),
});

const Limits = z.strictObject({
  max_steps: z.number().int().positive().describe("Maximum number of executed actions"),
  command_timeout_ms: z.number().int().positive().optional().describe(
    "Timeout for run_command (default: test timeout)",
  ),
  max_cost_usd: z.number().positive().optional().describe(
    "No model call once the run's cost (its usage counters at the model's price) has reached this many US dollars: " +
      "the run ends cost_limit; --max-cost sets it",
  ),
});

export const SandboxSettings = z.strictObject({
  mode: SandboxMode.optional().describe(
    "auto (default): sandbox test and command processes when the OS sandbox is available, say once when not; " +
      "required: refuse to start without it (exit 3); off: run them unsandboxed. --sandbox overrides it",
  ),
  network: z.boolean().optional().describe("Network inside the sandbox (default false: no network at all)"),
  read_only: z.array(z.string().min(1)).optional().describe(
    "Absolute host paths mounted read-only inside the sandbox, for toolchains outside /usr (e.g. ~/.pyenv)",
  ),
  env: z.array(z.string().min(1)).optional().describe(
    "Host environment variables passed to test and command processes, besides PATH, LANG, LC_*, TZ, TERM and " +
      "NO_COLOR (every other variable is withheld)",
  ),
});
export type SandboxSettings = z.infer<typeof SandboxSettings>;

export const WorkspaceIgnore = z.array(z.string().min(1)).describe(
  "Paths whose changes do not make a new revision, as gitignore globs relative to the workspace (e.g. " +
    '"coverage/", "*.log"); default: the version-control folders and test caches listed in docs/sandbox.md. ' +
    "Listing any replaces the default",
);

export const SliceRequest = z.strictObject({
  intent: z.string().min(1).describe("What the user asked"),
  instructions: z.string().describe("How to work"),
  workspace: z.string().describe("Directory the executors work in; nothing outside it is touched"),
  actions: z.array(ActionName).min(1).describe("Actions the model may choose; finish is always available"),
  test: TestSpec,
  model: z.string().describe("Model name, resolved by the provider"),
  limits: Limits,
  commands: z
    .array(z.array(z.string()).min(1))
    .optional()
    .describe('argv prefixes run_command may run, e.g. [["node", "--version"]]; none when absent'),
  sandbox: SandboxSettings.optional().describe("Where test and command processes run and what they see"),
  workspace_ignore: WorkspaceIgnore.optional(),
  step_protocol: StepProtocol.optional().describe(
    "two-call (default: a selection call, then an arguments call) or single-call (one call per step); " +
      "--step-protocol overrides it",
  ),
  effort: z.string().min(1).optional().describe(
    "How hard the model reasons (Anthropic output_config.effort, OpenAI reasoning effort): one of the values the " +
      "model table lists for the model (loom models); default: the provider's. Loom validates the answer either way",
  ),
  thinking: ThinkingType.optional().describe(
    "Anthropic thinking.type (adaptive, disabled or between_tools) where the model table lists it; default: the model's",
  ),
  previews: PreviewMode.optional().describe(
    "Bounded only: compact (512 B), balanced (default: 512 B-2 KiB by room) or wide (1-4 KiB by room) previews of " +
      "retained outputs; --previews overrides it",
  ),
  require_passing_tests: z.boolean().optional().describe(
    "Refuse a finish with status success unless the latest revision's tests ran and passed (the model is told " +
      "tests_not_current), and exit 1 when the run completes unverified (any other ending keeps its own exit code); " +
      "--require-passing-tests sets it",
  ),
});
export type SliceRequest = z.infer<typeof SliceRequest>;

/**
 * The one way a SliceRequest is put together from its parts (a catalog slice, a prompt and its flags, an eval task): an
 * optional part that is undefined is left out, so the same parts make the same request.
 */
export function sliceRequest(parts: SliceRequest): SliceRequest {
  const {
    commands,
    sandbox,
    workspace_ignore,
    step_protocol,
    effort,
    thinking,
    previews,
    require_passing_tests,
    ...rest
  } = parts;
  return {
    ...rest,
    ...(commands ? { commands } : {}),
    ...(sandbox ? { sandbox } : {}),
    ...(workspace_ignore ? { workspace_ignore } : {}),
    ...(step_protocol ? { step_protocol } : {}),
    ...(effort ? { effort } : {}),
    ...(thinking ? { thinking } : {}),
    ...(previews ? { previews } : {}),
    ...(require_passing_tests !== undefined ? { require_passing_tests } : {}),
  };
}

/** Actions offered to the model, in catalogue order, with finish always present. */
export function availableActions(request: SliceRequest): ActionName[] {
  const wanted = new Set<ActionName>([...request.actions, "finish"]);
  return ActionName.options.filter((name) => wanted.has(name));
}

/** A request file: a SliceRequest that may name its JSON Schema for editors (`loom schema request`). */
export const SliceRequestFile = SliceRequest.extend({
  $schema: z.string().optional().describe(
    "JSON Schema of this file, for editors (e.g. from `loom schema request`); ignored by Loom",
  ),
}).describe("A SliceRequest file for loom run; relative paths resolve against the file's folder");
export type SliceRequestFile = z.infer<typeof SliceRequestFile>;
