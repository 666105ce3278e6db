// The governed loop: selection -> arguments -> execution (or, single-call, one call for the action with its
// arguments -> execution), until finish, a limit, a failure or a suspension.
// Pure orchestration: the provider, executor and clock are passed in (recording wraps the provider and executor).
import { Archive } from "../context/archive.ts";
import {
  applyReport,
  type Briefing,
  initialBriefing,
  type LastTest,
  settleRevision,
  viewBriefing,
  type WorkingState,
} from "../context/briefing.ts";
import { createContext, type TailView } from "../context/context.ts";
import { budgetForContext, BYTES_PER_TOKEN } from "../context/budget.ts";
import { PREVIEW_MODES, type PreviewSizes } from "../context/render-event.ts";
import {
  CONTEXT_POLICIES,
  type ContextPolicyName,
  DEFAULT_PREVIEW_MODE,
  DEFAULT_STEP_PROTOCOL,
  type PreviewMode,
  type StepProtocol,
} from "../policy.ts";
import { errorMessage, InterruptedError, LoomError } from "../errors.ts";
import type { Outcome } from "../outcome.ts";
import { endingOf, INTERNAL_ERROR } from "../ending.ts";
import { createEvent, MAX_EVENT_BYTES } from "../context/events.ts";
import type { Executor } from "../vocabulary/executor.ts";
import type { ExecutionReport, FinishStatus } from "../vocabulary/reports.ts";
import { availableActions, type SliceRequest } from "../slice.ts";
import type { ResultStore } from "../context/store.ts";
import type { StageRun } from "./stage.ts";
import { decide, decideInOneCall, selectionStage, singleCallStage, tasksSection } from "./decision.ts";
import { costCap, MAX_INVALID_STEPS, NO_ANSWER, unverifiedFinish } from "./limits.ts";
import { CacheLedger } from "../cache-explanation.ts";
import type { ModelPrice } from "../prices.ts";
import type { Provider } from "../vocabulary/turn.ts";
import { type LoopEvent, stepOutcome } from "../run-events.ts";

export type LoopOptions = {
  policy: ContextPolicyName;
  provider: Provider;
  executor: Executor;
  store: ResultStore;
  now: () => number;
  signal?: AbortSignal;
  archiveLimits?: { maxEvents?: number; maxBytes?: number };
  /** Each model call, checkpoint, lookup and executed step as it happens: the run report is their fold. */
  onEvent?: (event: LoopEvent) => void;
  /** Bounded preview sizes above the SPEC's floors (the benchmark's frontier); default: the request's `previews`. */
  previews?: PreviewSizes;
  /** The run's cost so far in US dollars (its usage at the model's price): with limits.max_cost_usd, no call starts
   * once it has reached the cap. */
  spent?: () => number;
  /** After the last step: the workspace's revision if it changed outside any action (a leftover writer), else null. */
  /** Told when a step's action starts executing (the progress line names it while a test or command runs). */
  onExecute?: (step: number, action: string) => void;
  settle?: () => string | null;
  /** The model's prices, for what each cache miss cost (null: unknown, the misses are counted in tokens only). */
  price?: ModelPrice | null;
};

export type LoopResult = {
  outcome: Outcome;
  error: { code: string; message: string } | null;
  finish: { status: FinishStatus; summary: string } | null;
  steps: number;
  revision: string;
  last_test: LastTest | null;
  tests_current: boolean;
  /** The final revision's tests ran and passed: tests_current at the end, after the workspace settled (SPEC §6). */
  verified: boolean;
  printed: string[];
  reports: ExecutionReport[];
  /** What the run's report says of the loop beyond its events (the lifecycle's run-ended event carries it); not
   * the glossary's "ending" (how a command ended, lib/ending.ts). */
  closing: {
    /** The error in Loom's own words (never text a provider or process wrote). */
    error: { code: string; message: string } | null;
    elapsed_ms: number;
    archive: { events: number; bytes: number };
  };
};

/** The loop's part of a run that never started (a startup, routing or usage failure): no step, nothing tested. The
 * one shape of it: the lifecycle's RunResult and a command's result object without a run both take it. */
export const NOT_STARTED: Readonly<Omit<LoopResult, "outcome" | "error" | "closing">> = Object.freeze({
  finish: null,
  steps: 0,
  revision: "r0",
  last_test: null,
  tests_current: false,
  verified: false,
  printed: [],
  reports: [],
});

export async function runLoop(request: SliceRequest, options: LoopOptions): Promise<LoopResult> {
  const { policy, executor, store, now, signal } = options;
  const started = now();
  const actions = availableActions(request);
  const protocol: StepProtocol = request.step_protocol ?? DEFAULT_STEP_PROTOCOL;
  const onEvent = options.onEvent ?? (() => {});
  // A request held to the ceiling must fit a local server's context: a smaller one scales the ceiling, trigger and
  // target.
  const sized = CONTEXT_POLICIES[policy].ceiling ? await sizedToServer(options.provider, signal) : null;
  if (sized) onEvent({ type: "context-sized", ...sized });
  const context = createContext(policy, {
    instructions: request.instructions,
    intent: request.intent,
    tasks: tasksSection(request, actions, protocol),
    store,
    previews: options.previews ?? PREVIEW_MODES[request.previews ?? DEFAULT_PREVIEW_MODE],
    ...(sized
      ? { budget: { ceiling: sized.ceiling_bytes, trigger: sized.trigger_bytes, target: sized.target_bytes } }
      : {}),
  });
  const archive = new Archive(options.archiveLimits);
  const run: StageRun = {
    context,
    provider: options.provider,
    store,
    archive,
    model: request.model,
    now,
    signal,
    onEvent,
    beforeCall: costCap(request, options.spent),
    cache: new CacheLedger({ price: options.price ?? null }),
  };
  const reports: ExecutionReport[] = [];
  const printed: string[] = [];
  let briefing: Briefing = initialBriefing(executor.revision);
  let finish: LoopResult["finish"] = null;
  let ended: { outcome: Outcome; error: LoopResult["error"]; reportError?: LoopResult["error"] } | null = null;
  let step = 0;
  let invalidSteps = 0;

  // The working state changes only when an execution report changes the briefing (or retirement the tail it names):
  // the counters that move on every call ride on the candidates (SPEC §4).
  const state = (view: TailView): WorkingState =>
    viewBriefing(briefing, { retained: view.retains, abbreviate: (digest) => store.abbreviate(digest) });
  const counters = (lookupsUsed: number) => ({
    step,
    max_steps: request.limits.max_steps,
    lookups_used: lookupsUsed,
  });
  const selection = protocol === "single-call" ? singleCallStage(actions) : selectionStage(actions);
  const capacity = (at: number) => ({
    outcome: "archive_capacity_exceeded" as const,
    error: {
      code: "archive_capacity_exceeded",
      message: `Archive capacity exceeded at step ${at}: it holds at most ${archive.limits.events} events and ` +
        `${archive.limits.bytes} bytes (now ${archive.length} events, ${archive.bytes} bytes); no further model requests`,
    },
  });

  try {
    while (ended === null) {
      if (signal?.aborted) throw new InterruptedError();
      if (step >= request.limits.max_steps) {
        const max = request.limits.max_steps;
        const message = `Step limit reached: ${max} step${max === 1 ? "" : "s"} without finish`;
        ended = { outcome: "step_limit", error: { code: "step_limit", message } };
        break;
      }
      // An archive without room for the largest event could not keep the next step's: ask the model nothing more.
      if (!archive.fits(MAX_EVENT_BYTES)) {
        ended = capacity(step + 1);
        break;
      }
      step += 1;

      const decided = protocol === "single-call"
        ? await decideInOneCall(run, { step, selection, state, counters })
        : await decide(run, { step, selection, state, counters });
      if (decided.kind === "suspend") {
        ended = { outcome: "suspended", error: { code: "lookup_limit", message: `Run suspended: ${decided.reason}` } };
        break;
      }
      const { action, args, reason } = decided;
      let report: ExecutionReport;
      const unverified = decided.kind === "act" ? unverifiedFinish(request, { action, args, briefing, step }) : null;
      const executed = decided.kind === "act" && unverified === null;
      let executedMs = 0;
      if (decided.kind === "refused") report = decided.refusal;
      else if (unverified !== null) report = unverified;
      else {
        const t0 = now();
        options.onExecute?.(step, decided.action);
        report = await executor.execute(decided.action, args, { step, signal });
        executedMs = Math.max(0, now() - t0);
      }
      reports.push(report);
      const ran = report.kind === "test" || report.kind === "command" ? report : null;
      briefing = applyReport(briefing, report, { sizeOf: (digest) => store.size(digest) ?? 0, step });
      onEvent({
        type: "step-executed",
        step,
        action: action ?? null,
        report: report.kind,
        exit_code: ran ? ran.exit_code : null,
        timed_out: ran ? ran.timed_out : null,
        refusal: report.kind === "refusal" ? report.code : null,
        elapsed_ms: executedMs,
        ...stepOutcome(args, report),
        revision: briefing.latest_revision,
        executed,
        ...linesOf(executed ? executor.lines?.() : undefined),
      });
      if (report.kind === "print") printed.push(store.get(report.text) ?? "");
      if (report.kind === "finish") finish = { status: report.status, summary: report.summary };

      const sealed = createEvent({ seq: archive.length + 1, step, action, args, reason, report }, store);
      if (!archive.fits(sealed.bytes)) ended = capacity(step);
      else {
        archive.append(sealed);
        context.append(sealed);
        if (report.kind === "finish") ended = { outcome: "completed", error: null };
      }
      invalidSteps = report.kind === "refusal" && NO_ANSWER.has(report.code) ? invalidSteps + 1 : 0;
      if (ended === null && invalidSteps >= MAX_INVALID_STEPS) {
        const message =
          `No valid answer in ${invalidSteps} steps in a row (each asked twice, or its lookups failed); the run stops ` +
          `rather than spend its remaining ${request.limits.max_steps - step} steps`;
        ended = { outcome: "invalid_answers", error: { code: "invalid_answers", message } };
      }
    }
  } catch (caught) {
    ended = failure(caught, signal);
  }
  const settled = options.settle?.() ?? null;
  if (settled !== null) briefing = settleRevision(briefing, settled);

  // The while loop leaves only with an ending set (or throws into the catch, which sets one).
  if (ended === null) throw new Error("the loop ended without an ending");
  const { outcome, error } = ended;
  const closing = {
    error: ended.reportError ?? error,
    elapsed_ms: Math.max(0, now() - started),
    archive: { events: archive.length, bytes: archive.bytes },
  };
  archive.clear();
  return {
    outcome,
    error,
    finish,
    steps: step,
    revision: briefing.latest_revision,
    last_test: briefing.last_test,
    tests_current: briefing.tests_current,
    verified: briefing.tests_current,
    printed,
    reports,
    closing,
  };
}

/**
 * The budget a local server's context allows, when it holds less than the default 64 KiB ceiling; null when the
 * provider has no server to ask, the server does not say, or the defaults fit. Asking never fails the run: a server
 * that cannot be asked fails the first call instead, in that call's words.
 */
async function sizedToServer(
  provider: Provider,
  signal: AbortSignal | undefined,
): Promise<Omit<Extract<LoopEvent, { type: "context-sized" }>, "type"> | null> {
  const server = await provider.serverContext?.({ signal }).catch(() => null) ?? null;
  if (server === null) return null;
  const budget = budgetForContext({ contextTokens: server.context_tokens, outputTokens: server.output_tokens });
  if (budget === null) return null;
  return {
    context_tokens: server.context_tokens,
    output_tokens: server.output_tokens,
    source: server.source,
    bytes_per_token: BYTES_PER_TOKEN,
    ceiling_bytes: budget.ceiling,
    trigger_bytes: budget.trigger,
    target_bytes: budget.target,
  };
}

/** The preview mode a run reports: bounded only, and not for a benchmark's own preview sizes (they name no mode). */
export function previewModeOf(
  request: SliceRequest,
  { policy, previews }: { policy: ContextPolicyName; previews?: PreviewSizes },
): PreviewMode | null {
  return CONTEXT_POLICIES[policy].previews && previews === undefined ? request.previews ?? DEFAULT_PREVIEW_MODE : null;
}

/** A step event's line counts: what the executor says of its last execute, when it says anything. */
function linesOf(lines: { added: number; removed: number } | null | undefined) {
  if (lines === undefined) return {};
  return { lines_added: lines?.added ?? null, lines_removed: lines?.removed ?? null };
}

/** How an error thrown inside the loop ends the run. Text Loom did not write stays out of the report's error. */
function failure(
  caught: unknown,
  signal: AbortSignal | undefined,
): { outcome: Outcome; error: LoopResult["error"]; reportError?: LoopResult["error"] } {
  const ended = endingOf({ threw: caught, aborted: signal?.aborted, inRun: true });
  const { outcome } = ended;
  // endingOf names a code for every thrown error (lib/ending.ts); null is only for a run that ran.
  const code = ended.code ?? INTERNAL_ERROR;
  if (outcome === "interrupted") {
    const message = caught instanceof InterruptedError ? caught.message : "Interrupted";
    return { outcome, error: { code, message } };
  }
  if (caught instanceof LoomError) {
    return {
      outcome,
      error: { code, message: caught.message },
      reportError: { code, message: caught.reportMessage },
    };
  }
  // A bug: the run's report says internal_error (never the message, which may quote anything); endingOf gives it the
  // table's internal_error exit code.
  return {
    outcome,
    error: { code, message: errorMessage(caught) },
    reportError: {
      code,
      message: `Internal error (${caught instanceof Error ? caught.name : typeof caught}); the message is on stderr`,
    },
  };
}
