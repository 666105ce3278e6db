// What `--output-format stream-json` writes: one event per line as a run happens, then one result. The zod schema is
// the type and the source of the published JSON Schema (`loom schema events`). Events are measurements and names,
// never payloads: no prompt, file content or command output (a finish summary is the model's own words and is in the
// result, as in --output-format json). The result object is also exactly what --output-format json prints.
import { z } from "zod";
import { Cost } from "./prices.ts";
import { ContextPolicyName, PreviewMode, StepProtocol } from "./policy.ts";
import { Outcome } from "./outcome.ts";
import { Phase, ServerTimings, Usage } from "./vocabulary/turn.ts";
import { type ExecutionReport, FinishStatus, RunFinish, WorkspaceChanges } from "./vocabulary/reports.ts";
import { clipText } from "./text/clip.ts";
import { safeMessage } from "./text/safe-text.ts";
import { LookupKind } from "./vocabulary/answer.ts";
import { stepTarget } from "./vocabulary/actions.ts";
import { SandboxState } from "./sandbox-state.ts";
import { CallCache } from "./cache-explanation.ts";

/** Version of the event and result format; bumped on a breaking change. */
export const OUTPUT_FORMAT_VERSION = 1;

const count = z.number().int().nonnegative();

/** The most of a command's argv a step event repeats, in UTF-8 bytes. */
const TARGET_LIMIT = 120;
const StepStatus = z.enum(["ok", "failed", "timed_out", "refused"]);
type StepStatus = z.infer<typeof StepStatus>;

const RunStarted = z.strictObject({
  type: z.literal("run-started"),
  format_version: z.literal(OUTPUT_FORMAT_VERSION),
  loom_version: z.string(),
  policy: ContextPolicyName,
  slice: z.string().nullable().describe("The catalog slice, or null for a request file or prompt"),
  model: z.string().describe("The model id as the request names it"),
  max_steps: count,
  workspace: z.string().nullable().describe("The workspace folder; null for a replay without execution"),
  sandbox: SandboxState.nullable(),
  step_protocol: StepProtocol.describe("two-call or single-call model calls per step (since loom 0.5.0)"),
  previews: PreviewMode.nullable().describe(
    "Bounded only: the preview mode of retained outputs; null for legacy (since loom 0.5.0)",
  ),
}).describe(
  "The first event of a run that started: what it runs (routing, if any, is done and follows as its classification " +
    "model-called and route-chosen events); a run that fails before it can be described has none",
);

const RouteChosen = z.strictObject({
  type: z.literal("route-chosen"),
  slice: z.string(),
  via: z.string().describe("pattern, classification, default or slice_flag"),
  rule: z.number().int().nullable().describe("Index of the pattern rule that matched, from 0"),
}).describe("A catalog request was routed to a slice");

const CallStarted = z.strictObject({
  type: z.literal("call-started"),
  step: count,
  phase: Phase,
  request_bytes: count.describe("UTF-8 bytes of the serialized TurnRequest"),
  checkpoint: z.boolean().describe("A checkpoint was taken before this call"),
}).describe("A model call of the loop is about to be sent (its model-called follows); since loom 0.5.0");

/** What the progress line shows: the call in flight, out of the run's step limit (a sink of call-started). */
export type Progress = {
  step: number;
  /** The model call in flight, or "execution": the step's action running (a test, a command, an edit). */
  phase: Phase | "execution";
  request_bytes: number;
  checkpoint: boolean;
  max_steps: number;
  /** What the run's calls before this one cost, in US dollars; null when the model has no known price or a call
   * reported no counters, or the run is a replay (its cost is the recorded run's, said once at the end). */
  cost_usd: number | null;
  /** The action running, for the execution phase. */
  action?: string;
};

const ModelCalled = z.strictObject({
  type: z.literal("model-called"),
  step: count.describe("0 for the classification call before the first step"),
  phase: Phase,
  request_bytes: count.describe("UTF-8 bytes of the serialized TurnRequest"),
  checkpoint: z.boolean().describe("A checkpoint was taken before this call"),
  lookup: z.boolean().describe("The answer was a lookup, not a decision"),
  usage: Usage.nullable().describe("The provider's counters for this call; null when not reported"),
  elapsed_ms: z.number().nonnegative(),
  // The cache explanation (#30): its own block, absent when the adapter does not describe its bodies (replay).
  cache: CallCache.optional(),
  timings: ServerTimings.optional().describe(
    "The server's own timings of the call, when it sent them (since loom 0.5.0)",
  ),
}).describe(
  "A model call returned, or was sent and failed (a provider error or an interrupt: then its usage counters are null)",
);

/** A bounded run's budget sized to a local server's context (a server that holds less than 64 KiB of request). */
export const ContextBudget = z.strictObject({
  context_tokens: count.describe("The server's context per request, in tokens (llama.cpp's n_ctx of a slot)"),
  output_tokens: count.describe("Of them, kept for the answer: the largest output cap of a call"),
  source: z.string().describe('Where the size was read: "/props" or "/v1/models"'),
  bytes_per_token: z.number().positive().describe("The conservative bytes per token the ceiling was sized with"),
  ceiling_bytes: count.describe("Every bounded request is at most this (64 KiB by default)"),
  trigger_bytes: count.describe("Retirement starts past this (48 KiB by default)"),
  target_bytes: count.describe("A retirement aims for this (32 KiB by default)"),
}).describe(
  "The server's context holds less than a 64 KiB request: the bounded ceiling, trigger and target were scaled to it",
);

const ContextSized = ContextBudget.extend({ type: z.literal("context-sized") }).describe(
  "Bounded, before the first call: the local server's context is smaller than the default ceiling, so the run's " +
    "ceiling, retirement trigger and target were scaled to it (since loom 0.5.0)",
);

const CheckpointTaken = z.strictObject({
  type: z.literal("checkpoint-taken"),
  step: count,
  phase: Phase,
  retired: count.describe("Events retired from the tail into the checkpoint"),
}).describe("Old events were retired into a checkpoint (the cacheable prefix changed)");

const LookupAnswered = z.strictObject({
  type: z.literal("lookup-answered"),
  step: count,
  phase: Phase,
  kind: LookupKind.nullable().describe("null for a malformed lookup"),
  error: z.boolean(),
  omitted: z.boolean().describe("The response did not fit under the ceiling and was replaced by an error entry"),
}).describe("A lookup the model asked for was answered in the next request");

const StepExecuted = z.strictObject({
  type: z.literal("step-executed"),
  step: count,
  action: z.string().nullable().describe("The chosen action; null when the step was refused before one was chosen"),
  report: z.string().describe(
    "The execution report's kind: read, list, search, edit, test, command, print, refusal, finish",
  ),
  exit_code: z.number().int().nullable().describe("For test and command reports: the exit status (null if killed)"),
  timed_out: z.boolean().nullable().describe("For test and command reports: whether it was killed at its timeout"),
  refusal: z.string().nullable().describe("For a refusal: its code"),
  elapsed_ms: z.number().nonnegative().describe("Time spent executing (0 for a refusal before execution)"),
  target: z.string().nullable().describe(
    `What the action worked on (stepTarget): its path, or the command's argv joined, or a search's query quoted, ` +
      `clipped to ${TARGET_LIMIT} bytes (credentials in URLs redacted); null for actions without one (run_tests, ` +
      "print, finish). Never file contents",
  ),
  status: StepStatus.describe(
    "ok; failed (a test or command exited non-zero or was killed, or the model finished with failure); timed_out; " +
      "refused",
  ),
  revision: z.string().describe("The workspace revision after the step (r0 at start, +1 per change)"),
  executed: z.boolean().describe(
    "The action was executed (false for a step refused on the model's answers alone) (since loom 0.5.0)",
  ),
  lines_added: count.nullable().optional().describe(
    "Lines the step added to the workspace's text files (null: a changed file is binary or too large; absent: not " +
      "executed, or an executor that does not count) (since loom 0.6.0)",
  ),
  lines_removed: count.nullable().optional().describe("Lines the step removed, likewise (since loom 0.6.0)"),
}).describe("A step's action was executed (or refused) and its typed report recorded");

/** What a step event says of an executed step: its target, its status (never contents, output or secrets). */
export function stepOutcome(
  args: Record<string, unknown>,
  report: ExecutionReport,
): { target: string | null; status: StepStatus } {
  const named = stepTarget(args);
  const target = named === null || typeof args.path === "string" ? named : clipText(safeMessage(named), TARGET_LIMIT);
  const status: StepStatus = report.kind === "refusal"
    ? "refused"
    : (report.kind === "test" || report.kind === "command") && report.timed_out
    ? "timed_out"
    : (report.kind === "test" || report.kind === "command") && report.exit_code !== 0
    ? "failed"
    : report.kind === "finish" && report.status === "failure"
    ? "failed"
    : "ok";
  return { target, status };
}

const VERIFIED = "The final revision's tests ran and passed (tests_current at the end): the field a pipeline should " +
  "trust, not status, which is the model's own claim (since loom 0.5.0)";

const RunEnded = z.strictObject({
  type: z.literal("run-ended"),
  policy: ContextPolicyName,
  slice: z.string().nullable(),
  outcome: Outcome,
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable().describe(
    "The error as the run report states it: Loom's own words, never text a provider or process wrote",
  ),
  steps: count.describe("Steps begun"),
  elapsed_ms: z.number().nonnegative().describe("The run's wall-clock time, as its report states it"),
  archive: z.strictObject({ events: count, bytes: count }).describe("Archive size at the end of the run"),
  sandbox: SandboxState.nullable(),
  verified: z.boolean().describe(VERIFIED),
  cost: Cost.nullable().optional().describe("The report's cost block; absent when the model was never known"),
  recording: z.string().optional().describe("A replay's recording digest (sha256 of its bytes)"),
  finish: RunFinish.nullable().optional().describe(
    "The model's finish, its summary clipped to 4 KB (the result holds it whole); null when the run did not finish " +
      "(since loom 0.6.0)",
  ),
  printed: z.array(z.string()).optional().describe(
    "What the print steps printed, each clipped to 4 KB; absent when nothing was printed (since loom 0.6.0)",
  ),
  step_protocol: StepProtocol.optional().describe(
    "The step protocol the run was to use, as resolved when it ended before run-started (a startup or routing " +
      "failure); absent when it was never resolved (since loom 0.6.0)",
  ),
  changes: WorkspaceChanges.nullable().optional().describe(
    "The files the run changed against its starting revision; null when the workspace was not run for real (a replay " +
      "without --execute, a failure before it) (since loom 0.6.0)",
  ),
}).describe(
  "The run is over and its report is about to be written: with the events before it, everything the run report " +
    "holds (since loom 0.5.0; the report is the fold of the stream)",
);

export const RunResultEvent = z.strictObject({
  type: z.literal("result"),
  format_version: z.literal(OUTPUT_FORMAT_VERSION),
  outcome: z.string().describe("A run outcome, or usage_error / internal_error when no run happened"),
  exit_code: z.number().int(),
  slice: z.string().nullable(),
  status: FinishStatus.nullable().describe(
    "The model's finish status, when it finished: its own claim; verified says whether the tests agree",
  ),
  summary: z.string().nullable().describe("The model's finish summary, whole"),
  steps: count,
  revision: z.string(),
  last_test: z.strictObject({ revision: z.string(), exit_code: z.number().int().nullable(), timed_out: z.boolean() })
    .nullable(),
  tests_current: z.boolean().describe(
    "The last test ran on the latest revision and passed (SPEC §4): a pass on r2 does not vouch for r3",
  ),
  verified: z.boolean().describe(VERIFIED),
  printed: z.array(z.string()),
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
  model_calls: count,
  request_bytes: z.strictObject({ total: count, max: count }),
  usage: Usage.describe("Provider usage summed over the run's calls (null counters were never reported)"),
  duration_ms: z.number().nonnegative(),
  cost: Cost.nullable().optional().describe("The money the usage implies at a dated price table (SPEC §6)"),
  report_path: z.string().nullable(),
  route: z.strictObject({ via: z.string(), rule: z.number().int().nullable() }).nullable().optional(),
  replay: z.strictObject({ compared: count, differing_steps: z.array(count) }).optional(),
  sandbox: SandboxState.nullable().optional(),
  actions: z.record(z.string(), count).optional().describe(
    'The steps by action, in order of first use ({"read_file": 3, "edit_file": 1, …}; "none" for a step refused ' +
      "before an action was chosen); absent when no step began (since loom 0.6.0)",
  ),
  changes: WorkspaceChanges.nullable().optional().describe(
    "The files the run changed, with lines added and removed (as the report's changes); null when the workspace " +
      "was not run for real (since loom 0.6.0)",
  ),
}).describe("How the run ended: the last line of stream-json, the one object of --output-format json");
export type RunResultEvent = z.infer<typeof RunResultEvent>;

/** The events the loop itself emits (the lifecycle adds run-started, route-chosen and run-ended, the command the
 * result). */
export type LoopEvent =
  | z.infer<typeof ContextSized>
  | z.infer<typeof CallStarted>
  | z.infer<typeof ModelCalled>
  | z.infer<typeof CheckpointTaken>
  | z.infer<typeof LookupAnswered>
  | z.infer<typeof StepExecuted>;

export const RunEvent = z.discriminatedUnion("type", [
  RunStarted,
  RouteChosen,
  ContextSized,
  CallStarted,
  ModelCalled,
  CheckpointTaken,
  LookupAnswered,
  StepExecuted,
  RunEnded,
  RunResultEvent,
]).describe("One line of loom's --output-format stream-json");
export type RunEvent = z.infer<typeof RunEvent>;

/** One model call as measured: a model-called event without its type (a catalog's classification call, step 0). */
export type ModelCall = Omit<Extract<RunEvent, { type: "model-called" }>, "type">;
