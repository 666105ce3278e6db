// The run report as a fold of the run's event stream: every figure it holds is a sum, a maximum or a copy of what
// the events say, in the order they came (the elapsed times too: nothing is measured again here).
import { NORMAL_OUTCOMES } from "../outcome.ts";
import { addUsage, NULL_USAGE } from "../vocabulary/turn.ts";
import type { RunEvent } from "../run-events.ts";
import { summarizeCache } from "../cache-explanation.ts";
import {
  type CallRecord,
  type ContextReport,
  type PhaseStats,
  REPORT_SCHEMA_VERSION,
  type StepRecord,
} from "./context-report.ts";

type RunStarted = Extract<RunEvent, { type: "run-started" }>;
type RunEnded = Extract<RunEvent, { type: "run-ended" }>;

const emptyPhase = (): PhaseStats => ({ requests: 0, request_bytes: { total: 0, max: 0 }, elapsed_ms: 0 });

/** Why a stream does not fold into a report: it never ended. */
export class UnendedStreamError extends Error {}

/**
 * The run report the events describe. `version` is the loom version that wrote them (run-started carries it; a run
 * that never started says it only in its report). Throws UnendedStreamError when the stream has no run-ended event.
 */
export function foldReport(events: readonly RunEvent[], { version }: { version: string }): ContextReport {
  const phases = {
    classification: emptyPhase(),
    selection: emptyPhase(),
    arguments: emptyPhase(),
    execution: emptyPhase(),
  };
  const calls: CallRecord[] = [];
  const stepLog: StepRecord[] = [];
  const retrievals = { result: 0, list_history: 0, read_history: 0, omitted: 0, errors: 0 };
  let usage = { ...NULL_USAGE };
  let checkpoints = 0;
  let retired = 0;
  let refusals = 0;
  let started: RunStarted | null = null;
  let budget: ContextReport["context_budget"];
  let timings: ContextReport["server_timings"];
  let ended: RunEnded | null = null;
  for (const event of events) {
    switch (event.type) {
      case "run-started":
        started = event;
        break;
      case "model-called": {
        const { type: _, ...measured } = event;
        const call: CallRecord = { ...measured, usage: measured.usage ?? { ...NULL_USAGE } };
        const phase = phases[call.phase];
        phase.requests += 1;
        phase.request_bytes.total += call.request_bytes;
        phase.request_bytes.max = Math.max(phase.request_bytes.max, call.request_bytes);
        phase.elapsed_ms += call.elapsed_ms;
        usage = addUsage(usage, call.usage);
        calls.push(call);
        if (call.timings) timings = addTimings(timings, call.timings);
        break;
      }
      case "context-sized": {
        const { type: _, ...sized } = event;
        budget = sized;
        break;
      }
      case "checkpoint-taken":
        checkpoints += 1;
        retired += event.retired;
        break;
      case "lookup-answered":
        if (event.kind) retrievals[event.kind] += 1;
        if (event.error) retrievals.errors += 1;
        if (event.omitted) retrievals.omitted += 1;
        break;
      case "step-executed":
        if (event.executed) {
          phases.execution.requests += 1;
          phases.execution.elapsed_ms += event.elapsed_ms;
        }
        if (event.report === "refusal") refusals += 1;
        stepLog.push({
          step: event.step,
          action: event.action,
          target: event.target,
          report: event.report,
          status: event.status,
          exit_code: event.exit_code,
          revision: event.revision,
          ...(event.lines_added !== undefined ? { lines_added: event.lines_added } : {}),
          ...(event.lines_removed !== undefined ? { lines_removed: event.lines_removed } : {}),
          ...(event.refusal ? { refusal: event.refusal } : {}),
        });
        break;
      case "run-ended":
        ended = event;
        break;
    }
  }
  if (ended === null) throw new UnendedStreamError("The event stream has no run-ended event: the run never ended");
  const normal = NORMAL_OUTCOMES.has(ended.outcome);
  const report: ContextReport = {
    schema_version: REPORT_SCHEMA_VERSION,
    loom_version: started?.loom_version ?? version,
    policy: ended.policy,
    slice: ended.slice,
    outcome: ended.outcome,
    error: ended.error,
    phases,
    steps: ended.steps,
    model_calls: calls.length,
    checkpoints,
    prefix_changes: checkpoints,
    retired_events: retired,
    archive: { ...ended.archive },
    retrievals,
    refusals,
    total_elapsed_ms: ended.elapsed_ms,
    usage,
    final_usage: normal ? { ...usage } : null,
    partial_usage: normal ? null : { ...usage },
    calls,
  };
  // A run that reached its loop says how it asked; one that never did, how it was to ask, when that was resolved.
  if (started !== null) {
    report.step_protocol = started.step_protocol;
    if (started.previews !== null) report.previews = started.previews;
  } else if (ended.step_protocol !== undefined) report.step_protocol = ended.step_protocol;
  report.sandbox = ended.sandbox;
  report.verified = ended.verified;
  if ("cost" in ended) report.cost = ended.cost;
  if (ended.finish !== undefined) report.finish = ended.finish;
  if (ended.printed !== undefined) report.printed = ended.printed;
  if (ended.recording !== undefined) report.recording = ended.recording;
  if (started !== null) report.step_log = stepLog;
  if (ended.changes !== undefined) report.changes = ended.changes;
  if (budget) report.context_budget = budget;
  if (timings) report.server_timings = timings;
  // The cache explanation (#30): the run's figures from its calls'.
  const cache = summarizeCache(calls);
  if (cache !== null) report.cache = cache;
  return report;
}

type Timings = NonNullable<ContextReport["server_timings"]>;

/** Server timings summed (milliseconds to the microsecond, as each call's are). */
function addTimings(a: Timings | undefined, b: Timings): Timings {
  if (!a) return { ...b };
  const ms = (x: number, y: number) => Math.round((x + y) * 1000) / 1000;
  return {
    prompt_n: a.prompt_n + b.prompt_n,
    cache_n: a.cache_n + b.cache_n,
    prompt_ms: ms(a.prompt_ms, b.prompt_ms),
    predicted_n: a.predicted_n + b.predicted_n,
    predicted_ms: ms(a.predicted_ms, b.predicted_ms),
  };
}
