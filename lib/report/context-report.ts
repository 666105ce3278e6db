// The context report (schema version 1): measurements only — no prompts, payloads, file contents or secrets.
import { ContextPolicyName, PreviewMode, StepProtocol } from "../policy.ts";
import { z } from "zod";
import { Outcome } from "../outcome.ts";
import { addUsage, NULL_USAGE, Phase, ServerTimings, Usage } from "../vocabulary/turn.ts";
import { ContextBudget } from "../run-events.ts";
import { SandboxState } from "../sandbox-state.ts";
import { Cost } from "../prices.ts";
import { CallCache, RunCache } from "../cache-explanation.ts";
import { RunFinish, WorkspaceChanges } from "../vocabulary/reports.ts";

export const REPORT_SCHEMA_VERSION = 1;

/** The bytes of a finish summary or a printed text a report keeps (the result object keeps them whole). */
export const REPORT_TEXT_LIMIT = 4096;

const count = z.number().int().nonnegative();
const RecordingDigest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

const PhaseStats = z.strictObject({
  requests: count.describe("Model requests in this phase (executions for the execution phase)"),
  request_bytes: z.strictObject({
    total: count.describe("Sum of request bytes: UTF-8 length of JSON.stringify(TurnRequest)"),
    max: count.describe("Largest single request"),
  }),
  elapsed_ms: z.number().nonnegative().describe("Wall-clock time spent in this phase"),
});
export type PhaseStats = z.infer<typeof PhaseStats>;

export const CallRecord = z.strictObject({
  phase: Phase,
  step: count.describe("Step the call belongs to (0 for classification)"),
  request_bytes: count,
  elapsed_ms: z.number().nonnegative(),
  usage: Usage.describe("Provider-reported counters for this call"),
  checkpoint: z.boolean().describe("A checkpoint was made just before this request (the cacheable prefix changed)"),
  lookup: z.boolean().describe("The model answered with a lookup instead of a decision"),
  // The cache explanation (#30): its own block.
  cache: CallCache.optional(),
  timings: ServerTimings.optional().describe(
    "A local server's own timings of the call (tokens evaluated and reused, milliseconds for each); absent when the " +
      "server sent none",
  ),
});
export type CallRecord = z.infer<typeof CallRecord>;

/** One step as the report keeps it: what was done to what, and how it went — never contents, output or prompts. */
export const StepRecord = z.strictObject({
  step: count,
  action: z.string().nullable().describe("The chosen action; null when the step was refused before one was chosen"),
  target: z.string().nullable().describe("Its path, command or query (clipped); null for actions without one"),
  report: z.string().describe("The execution report's kind (read, edit, test, command, refusal, finish, …)"),
  status: z.string().describe("ok, failed, timed_out or refused"),
  exit_code: z.number().int().nullable().describe("A test's or command's exit status (null: none, or killed)"),
  revision: z.string().describe("The workspace revision after the step"),
  lines_added: count.nullable().optional().describe("Lines the step added (null: unknown; absent: not counted)"),
  lines_removed: count.nullable().optional().describe("Lines the step removed, likewise"),
  refusal: z.string().optional().describe(
    "A refused step's code (tests_not_current, lookup_limit, invalid_answer, …); absent for other steps",
  ),
});
export type StepRecord = z.infer<typeof StepRecord>;

export const ContextReport = z.strictObject({
  schema_version: z.literal(REPORT_SCHEMA_VERSION),
  loom_version: z.string(),
  policy: ContextPolicyName,
  step_protocol: StepProtocol.optional().describe(
    "two-call (a selection and an arguments call per step) or single-call (one call per step); absent in reports of " +
      "runs that never reached the loop",
  ),
  previews: PreviewMode.optional().describe(
    "Bounded only: how much of each retained output its requests preview (compact, balanced, wide); absent for " +
      "legacy and in reports of older versions",
  ),
  slice: z.string().nullable().describe("Catalog slice name, when routed from a catalog"),
  outcome: Outcome,
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
  phases: z.strictObject({
    classification: PhaseStats,
    selection: PhaseStats,
    arguments: PhaseStats,
    execution: PhaseStats,
  }),
  steps: count.describe("Steps begun"),
  model_calls: count,
  checkpoints: count.describe("Checkpoints made (bounded policy)"),
  prefix_changes: count.describe(
    "Times the cacheable prefix changed between consecutive requests (each can invalidate a provider cache)",
  ),
  retired_events: count,
  archive: z
    .strictObject({ events: count, bytes: count })
    .describe("Archive size at the end of the run"),
  retrievals: z.strictObject({
    result: count,
    list_history: count,
    read_history: count,
    omitted: count.describe("Lookup responses omitted whole because they did not fit the ceiling"),
    errors: count.describe(
      "Lookups answered with an error: malformed or unknown reference, or not a valid lookup at all (counted here only)",
    ),
  }),
  refusals: count,
  total_elapsed_ms: z.number().nonnegative(),
  usage: Usage.describe("Sum over all calls; null for a counter no call reported"),
  final_usage: Usage.nullable().describe("Usage of a run that ended normally (completed, step limit, suspended)"),
  partial_usage: Usage.nullable().describe("Usage observed before the run ended with an error"),
  calls: z.array(CallRecord).describe("One entry per model call, in order"),
  sandbox: SandboxState.nullable().optional(),
  verified: z.boolean().optional().describe(
    "The final revision's tests ran and passed (tests_current at the end); absent in reports of older versions",
  ),
  cost: Cost.nullable().optional().describe(
    "The money the usage counters imply at a dated price table; null when the model has no known price or a " +
      "counter was not reported (never estimated from bytes); absent in reports of older versions",
  ),
  finish: RunFinish.nullable().optional().describe(
    "The model's finish (its status and summary; the summary clipped to 4 KB): Loom's own output, shown on the " +
      "report's pages; null when the run did not finish; absent in reports of older versions",
  ),
  printed: z.array(z.string()).optional().describe(
    "What the run's print steps printed, in order (each clipped to 4 KB); absent when nothing was printed",
  ),
  recording: RecordingDigest.optional().describe(
    "A replay's recording: sha256 of its bytes as read (absent for a run), so batches pair and resume by recording",
  ),
  step_log: z.array(StepRecord).optional().describe(
    "One entry per step, in order: action, target, status, revision, test result, lines (since loom 0.6.0)",
  ),
  changes: WorkspaceChanges.nullable().optional().describe(
    "The files the run changed against its starting revision, with lines added and removed; null when the workspace " +
      "did not run for real (a replay without --execute); absent in reports of older versions",
  ),
  context_budget: ContextBudget.optional().describe(
    "Bounded on a local server whose context holds less than 64 KiB of request: the ceiling, trigger and target the " +
      "run used instead of 64/48/32 KiB; absent otherwise",
  ),
  server_timings: ServerTimings.optional().describe(
    "The server's timings summed over the calls that sent them (a local run's cost: tokens and seconds); absent " +
      "when no call did",
  ),
  // The cache explanation (#30): its own block.
  cache: RunCache.optional().describe(
    "The prompt cache over the run: read share and breaks by cause; absent when no call's body was described",
  ),
});
export type ContextReport = z.infer<typeof ContextReport>;

/** Request bytes over the model-call phases: their sum, and the largest single request. */
export function requestBytes(phases: ContextReport["phases"]): { total: number; max: number } {
  const calls = [phases.classification, phases.selection, phases.arguments];
  return {
    total: calls.reduce((sum, phase) => sum + phase.request_bytes.total, 0),
    max: Math.max(...calls.map((phase) => phase.request_bytes.max)),
  };
}

const emptyPhase = (): PhaseStats => ({ requests: 0, request_bytes: { total: 0, max: 0 }, elapsed_ms: 0 });

/** Aggregate of several run reports (batch replay): sums, plus one row per run. */
export const AggregateReport = z.strictObject({
  schema_version: z.literal(REPORT_SCHEMA_VERSION),
  kind: z.literal("aggregate"),
  loom_version: z.string(),
  policy: ContextPolicyName,
  runs: z.array(
    z.strictObject({
      name: z.string().describe("Recording file name"),
      report: z.string().nullable().describe("Path of the run's own report"),
      outcome: Outcome,
      model_calls: count,
      request_bytes: count,
      max_request_bytes: count,
      checkpoints: count,
      recording: RecordingDigest.optional().describe("The run's recording (sha256 of its bytes): its identity"),
    }),
  ),
  outcomes: z.record(z.string(), count),
  phases: ContextReport.shape.phases,
  model_calls: count,
  checkpoints: count,
  prefix_changes: count,
  total_elapsed_ms: z.number().nonnegative(),
  usage: Usage,
});
export type AggregateReport = z.infer<typeof AggregateReport>;

/** The figures an aggregate sums over its parts (runs, or the shards of a batch). */
type Totals = Pick<
  AggregateReport,
  "phases" | "outcomes" | "model_calls" | "checkpoints" | "prefix_changes" | "total_elapsed_ms" | "usage"
>;

function sumTotals(parts: readonly Totals[]): Totals {
  const phases = {
    classification: emptyPhase(),
    selection: emptyPhase(),
    arguments: emptyPhase(),
    execution: emptyPhase(),
  };
  const totals: Totals = {
    phases,
    outcomes: {},
    model_calls: 0,
    checkpoints: 0,
    prefix_changes: 0,
    total_elapsed_ms: 0,
    usage: { ...NULL_USAGE },
  };
  for (const part of parts) {
    for (const key of Object.keys(phases) as (keyof typeof phases)[]) {
      const into = phases[key];
      const from = part.phases[key];
      into.requests += from.requests;
      into.request_bytes.total += from.request_bytes.total;
      into.request_bytes.max = Math.max(into.request_bytes.max, from.request_bytes.max);
      into.elapsed_ms += from.elapsed_ms;
    }
    for (const [outcome, count] of Object.entries(part.outcomes)) {
      totals.outcomes[outcome] = (totals.outcomes[outcome] ?? 0) + count;
    }
    totals.usage = addUsage(totals.usage, part.usage);
    totals.model_calls += part.model_calls;
    totals.checkpoints += part.checkpoints;
    totals.prefix_changes += part.prefix_changes;
    totals.total_elapsed_ms += part.total_elapsed_ms;
  }
  return totals;
}

export function aggregateReports(
  entries: { name: string; path: string | null; report: ContextReport }[],
  { version, policy }: { version: string; policy: ContextPolicyName },
): AggregateReport {
  const totals = sumTotals(entries.map(({ report }) => ({ ...report, outcomes: { [report.outcome]: 1 } })));
  return {
    schema_version: REPORT_SCHEMA_VERSION,
    kind: "aggregate",
    loom_version: version,
    policy,
    runs: entries.map(({ name, path, report }) => ({
      name,
      report: path,
      outcome: report.outcome,
      model_calls: report.model_calls,
      request_bytes: requestBytes(report.phases).total,
      max_request_bytes: requestBytes(report.phases).max,
      checkpoints: report.checkpoints,
      ...(report.recording ? { recording: report.recording } : {}),
    })),
    ...totals,
  };
}

/**
 * One aggregate from several (the shards of a batch split over machines): sums, maxima, outcome counts and the runs
 * in the order given. Every shard must have replayed under the same policy.
 */
export function mergeAggregates(
  shards: AggregateReport[],
  { version }: { version: string },
): { ok: true; report: AggregateReport } | { ok: false; policies: string[] } {
  const policies = [...new Set(shards.map((s) => s.policy))];
  const [policy] = policies;
  if (policy === undefined || policies.length !== 1) return { ok: false, policies };
  return {
    ok: true,
    report: {
      schema_version: REPORT_SCHEMA_VERSION,
      kind: "aggregate",
      loom_version: version,
      policy,
      runs: shards.flatMap((s) => s.runs),
      ...sumTotals(shards),
    },
  };
}
