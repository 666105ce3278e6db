// A run's event stream and its ending: every event as delivered, the caller's sinks, the cost so far, the routing
// told once, and the run-ended event (how the run ended, what it cost, changed and printed). The report is the fold
// of this stream.
import { type CatalogKnown } from "../catalog/plan.ts";
import { REPORT_TEXT_LIMIT } from "../report/context-report.ts";
import { clipText } from "../text/clip.ts";
import { addUsage, NULL_USAGE, type Usage } from "../vocabulary/turn.ts";
import type { LoomError } from "../errors.ts";
import { endingOf } from "../ending.ts";
import { workspaceChanges } from "../vocabulary/reports.ts";
import type { LoopResult } from "../loop/loop.ts";
import type { Outcome } from "../outcome.ts";
import type { RunEvent } from "../run-events.ts";
import { redactHeld } from "../io/held-keys.ts";
import type { WorkspaceExecutor } from "../workspace/workspace-executor.ts";
import type { SandboxState } from "../sandbox-state.ts";
import { type Cost, costOf, costOfCalls, type ModelPrice, priceOf, type PriceTable } from "../prices.ts";
import type { RunHooks, RunInput, RunResult } from "./run-options.ts";
import type { PreviewSizes } from "../context/render-event.ts";
import { OUTPUT_FORMAT_VERSION } from "../run-events.ts";
import { VERSION } from "../version.ts";
import { NOT_STARTED, previewModeOf } from "../loop/loop.ts";
import type { SliceRequest } from "../slice.ts";
import type { RunSettings } from "../settings/settings.ts";
import type { ContextReport } from "../report/context-report.ts";
import type { ComparingExecutor } from "../recording/replay.ts";
import { unverifiedReason } from "../context/briefing.ts";
import { resolve } from "node:path";

/** A run's event stream: every event as delivered (the report is their fold), the caller's sinks (onEvent, the
 * progress line), the cost so far at the model's price, and the routing told once. */
export function runStream(
  options: Pick<RunHooks, "onEvent" | "onProgress" | "replay">,
  known: CatalogKnown,
) {
  // Every event of the run, as delivered: the report is their fold.
  const events: RunEvent[] = [];
  let maxSteps = 0;
  // The model's price once the run is prepared (null: none known); what the cost so far and the cap read.
  let price: ModelPrice | null = null;
  const spent = () => spentAt(events, price);
  const emit = (event: RunEvent) => {
    events.push(event);
    options.onEvent?.(event);
    // The progress line is a sink of the stream: the call in flight, out of the step limit run-started gave, and
    // what the calls before it cost.
    if (event.type === "run-started") maxSteps = event.max_steps;
    if (event.type === "call-started") {
      const { type: _, ...call } = event;
      // A cost is shown only when every call so far reported its counters: "$0.0000" for a recording without usage
      // would be a claim, not a measurement.
      // A replay's money is the recorded run's, never spent now: it is said once, labelled, at the end.
      const known = price !== null && !options.replay &&
        events.every((e) => e.type !== "model-called" || costOf(e.usage ?? NULL_USAGE, price) !== null);
      options.onProgress?.({ ...call, max_steps: maxSteps, cost_usd: known ? spent() : null });
    }
  };
  // The routing's model calls and choice, once: right after run-started, or before the ending of a run that never
  // started (a failed routing's classification calls still count in its report).
  let routingAnnounced = false;
  const announceRouting = () => {
    if (routingAnnounced) return;
    routingAnnounced = true;
    for (const call of known.calls) emit({ type: "model-called", ...call, step: 0 });
    if (known.route) {
      const { slice, via, rule } = known.route;
      emit({ type: "route-chosen", slice, via, rule });
    }
  };
  return {
    events,
    emit,
    announceRouting,
    spent,
    /** The progress line while an action runs (a test or command can take minutes): it names the action. */
    executing: (step: number, action: string) =>
      options.onProgress?.({
        step,
        phase: "execution",
        action,
        request_bytes: 0,
        checkpoint: false,
        max_steps: maxSteps,
        cost_usd: null,
      }),
    /** The model's price once the run is prepared; what the cost so far and the cap read. */
    setPrice: (to: ModelPrice | null) => {
      price = to;
    },
  };
}

/** The run-started event of a prepared run: what it runs, under which policy, protocol, previews and sandbox. */
export function runStarted(
  prepared: { request: SliceRequest; settings: RunSettings },
  { known, sandbox, replay, previews }: {
    known: CatalogKnown;
    sandbox: SandboxState | null;
    replay: RunHooks["replay"];
    previews: PreviewSizes | undefined;
  },
): RunEvent {
  return {
    type: "run-started",
    format_version: OUTPUT_FORMAT_VERSION,
    loom_version: VERSION,
    policy: known.policy,
    slice: known.slice,
    model: prepared.request.model,
    max_steps: prepared.request.limits.max_steps,
    workspace: replay && !replay.execute ? null : resolve(prepared.request.workspace),
    sandbox,
    step_protocol: prepared.settings.step_protocol.value,
    previews: previewModeOf(prepared.request, { policy: known.policy, previews }),
  };
}

/**
 * The run's result: its loop's (or NOT_STARTED's) fields, how it ended (endingOf: the outcome, an unwritten report,
 * a replay that diverged, a run required verified that is not), and what it says of its route, replay and sandbox.
 */
export function runResult(
  { input, loop, outcome, error, report, reportPath, unwritable, comparing, required, known, sandbox }: {
    input: RunInput;
    loop: LoopResult | null;
    outcome: Outcome;
    error: RunResult["error"];
    report: ContextReport;
    reportPath: string | null;
    unwritable: boolean;
    comparing: ComparingExecutor | undefined;
    required: boolean;
    known: CatalogKnown;
    sandbox: { state: SandboxState | null };
  },
): RunResult {
  const replay = comparing ? { compared: comparing.compared, differing_steps: comparing.differing } : undefined;
  const { exitCode, code } = endingOf({
    ran: outcome,
    errorCode: loop?.error?.code,
    reportUnwritten: unwritable,
    diverged: replay !== undefined && replay.differing_steps.length > 0,
    unverified: required && !(loop?.verified ?? false),
  });
  if (code === "unverified" && loop) {
    const why = unverifiedReason({ last_test: loop.last_test, latest_revision: loop.revision });
    error = { code, message: `The run ended NOT verified (passing tests were required): ${why}` };
  }
  const { closing: _, ...ran } = loop ?? { ...NOT_STARTED, printed: [], reports: [], closing: null };
  return {
    ...ran,
    outcome,
    error,
    report,
    report_path: reportPath,
    exit_code: exitCode,
    ...("catalog" in input ? { route: known.route } : {}),
    ...(replay ? { replay } : {}),
    sandbox: sandbox.state,
  };
}

/**
 * How the run ended and the run-ended event that says so: the loop's result, else the failure before or in it (a
 * run that never started), with the cost of its calls, the model's finish and what it printed (redacted, clipped),
 * and what it changed.
 */
export function runEnded(
  { loop, failure, known, events, model, sandbox, replay, prices, elapsed }: {
    loop: LoopResult | null;
    failure: LoomError | null;
    known: CatalogKnown;
    events: readonly RunEvent[];
    model: string | null;
    sandbox: { state: SandboxState | null; workspace?: WorkspaceExecutor };
    replay: RunHooks["replay"];
    prices: PriceTable;
    elapsed: () => number;
  },
): { outcome: Outcome; error: RunResult["error"]; event: RunEvent } {
  let outcome: Outcome;
  let error: RunResult["error"];
  let closing: LoopResult["closing"];
  if (loop) {
    ({ outcome, error, closing } = loop);
  } else {
    // No loop result: prepare() or the loop threw a LoomError (anything else was rethrown above).
    if (failure === null) throw new Error("a run without a loop result has a failure");
    outcome = endingOf({ threw: failure }).outcome;
    error = { code: failure.code, message: failure.message };
    closing = {
      error: { code: failure.code, message: failure.reportMessage },
      elapsed_ms: elapsed(),
      archive: { events: 0, bytes: 0 },
    };
  }
  const event: RunEvent = {
    type: "run-ended",
    policy: known.policy,
    slice: known.slice,
    outcome,
    error: closing.error,
    steps: loop?.steps ?? 0,
    elapsed_ms: closing.elapsed_ms,
    archive: closing.archive,
    sandbox: sandbox.state,
    verified: loop?.verified ?? false,
    // The cost block (SPEC §6): what the counters (measured, or recorded for a replay) cost at the price table.
    ...(model !== null
      ? {
        // Per call: a long-prompt price tier applies to each call's own prompt.
        cost: recordedIf(
          costOfCalls(
            events.flatMap((e) => e.type === "model-called" ? [e.usage ?? NULL_USAGE] : []),
            priceOf(prices, model),
            { total: usageOf(events) },
          ),
          replay !== undefined,
        ),
      }
      : {}),
    // The model's finish and what it printed: Loom's own output, which the report's pages show (keys redacted, then
    // clipped).
    ...(loop
      ? {
        finish: loop.finish
          ? { status: loop.finish.status, summary: clipText(redactHeld(loop.finish.summary), REPORT_TEXT_LIMIT) }
          : null,
      }
      : {}),
    ...(loop && loop.printed.length > 0
      ? { printed: loop.printed.map((text) => clipText(redactHeld(text), REPORT_TEXT_LIMIT)) }
      : {}),
    ...(replay?.digest ? { recording: replay.digest } : {}),
    // A run that never started still says the protocol it was to use (the flag's, the catalog's, the default).
    ...(loop === null && known.stepProtocol !== undefined ? { step_protocol: known.stepProtocol } : {}),
    // What the run changed, from Loom's own snapshot (a workspace that ran for real), else as its recording says.
    ...(sandbox.workspace
      ? { changes: workspaceChanges(sandbox.workspace.changes()) }
      : replay?.recording.changes
      ? { changes: replay.recording.changes }
      : {}),
  };
  return { outcome, error, event };
}
/**
 * What the run's model calls so far cost at `price`, in US dollars: each call's counters, a call that reported none
 * counting nothing (the report's cost block is null then; a cap can only count what was reported).
 */
function spentAt(events: readonly RunEvent[], price: ModelPrice | null): number {
  return events.reduce(
    (sum, event) => event.type === "model-called" && event.usage ? sum + (costOf(event.usage, price)?.total ?? 0) : sum,
    0,
  );
}

function usageOf(events: readonly RunEvent[]): Usage {
  return events.reduce(
    (sum, event) => event.type === "model-called" ? addUsage(sum, event.usage ?? NULL_USAGE) : sum,
    { ...NULL_USAGE },
  );
}

/** A replay's cost is marked recorded: the recorded run's calls at today's table, never money spent by the replay. */
function recordedIf(cost: Cost | null, replay: boolean): Cost | null {
  return cost !== null && replay ? { ...cost, recorded: true } : cost;
}
