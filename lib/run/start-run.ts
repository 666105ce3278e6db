// The run lifecycle behind runWithOptions and the commands: input -> prepared run -> loop -> one report, written once.
// A run is a value: every startup, routing and run failure comes back as a RunResult whose outcome says what
// happened; only a bug throws.
import { type ContextPolicyName, type StepProtocol } from "../policy.ts";
import { foldReport } from "../report/fold.ts";
import { describeFsError, LoomError } from "../errors.ts";
import { workspaceChanges } from "../vocabulary/reports.ts";
import { type LoopResult, runLoop } from "../loop/loop.ts";
import type { Outcome } from "../outcome.ts";
import { type RecordingSink } from "../recording/recorder.ts";
import { ComparingExecutor } from "../recording/replay.ts";
import { ResultStore } from "../context/store.ts";
import { VERSION } from "../version.ts";
import { pinOutputPath, writeFileAtomic } from "../io/files.ts";
import type { WorkspaceExecutor } from "../workspace/workspace-executor.ts";
import type { SandboxState } from "../sandbox-state.ts";
import { priceOf } from "../prices.ts";

import { prepare, warnOf } from "./prepare-run.ts";
import { runEnded, runResult, runStarted, runStream } from "./run-stream.ts";
import type { ContextReport } from "../report/context-report.ts";
import type { RunHooks, RunInput, RunResult } from "./run-options.ts";
import { knownAtStart, type RunPlan } from "./run-plan.ts";

export { secretEnvNames } from "./prepare-run.ts";
export type { RunHooks, RunInput, RunOptions, RunResult } from "./run-options.ts";
export type { RunPlan } from "./run-plan.ts";

/** A filesystem failure in words (never a bare errno code). */
const ioCode = describeFsError;

/**
 * Runs a slice from any input as its plan says (lib/run/run-plan.ts: the one way a run is configured), with the
 * caller's hooks, and writes its report once, whatever the outcome.
 */
export async function startRun(input: RunInput, plan: RunPlan, hooks: RunHooks = {}): Promise<RunResult> {
  const now = hooks.now ?? (() => performance.now());
  const started = now();
  const { outputs } = plan;
  // Loom's own files are reached from folders pinned now, before any process of the run can plant a link on the way.
  for (const path of [outputs.contextReport, outputs.record, outputs.diff]) if (path) pinOutputPath(path);
  // What the run says of itself if nothing more is known: the user's policy and protocol, the report path, the slice.
  const known = knownAtStart(plan, { slice: hooks.replay?.recording.header.slice_name ?? null });
  const store = new ResultStore();
  let loop: LoopResult | null = null;
  let failure: LoomError | null = null;
  let comparing: ComparingExecutor | undefined;
  const sandbox: {
    state: SandboxState | null;
    workspace?: WorkspaceExecutor;
    /** The recording's sink, for its closing line: what the run changed. */
    record?: RecordingSink;
  } = { state: null };
  // Files the run opened (the recording): closed when it ends, whatever the ending.
  const opened: Array<() => void> = [];
  let model: string | null = null;
  // Whether the run must end verified (require_passing_tests): a completed run then exits 1 when unverified.
  let required = plan.settings.ok && plan.settings.settings.require_passing_tests.value;
  const stream = runStream(hooks, known);
  const { events, emit, announceRouting, spent } = stream;
  try {
    const prepared = await prepare(input, { plan, hooks, known, store, now, sandbox, opened });
    model = prepared.request.model;
    const price = priceOf(plan.prices, model);
    stream.setPrice(price);
    required = prepared.request.require_passing_tests === true;
    comparing = prepared.executor instanceof ComparingExecutor ? prepared.executor : undefined;
    emit(runStarted(prepared, { known, sandbox: sandbox.state, replay: hooks.replay, previews: plan.previews }));
    // run-started is the first event: the routing that chose this run is told right after it.
    announceRouting();
    loop = await runLoop(prepared.request, {
      onEvent: emit,
      policy: known.policy,
      provider: prepared.provider,
      executor: prepared.executor,
      store,
      now,
      signal: hooks.signal,
      archiveLimits: plan.archiveLimits,
      previews: plan.previews,
      // A change after the last action (a leftover writer) is a revision no test ran on.
      settle: () => sandbox.workspace?.settle() ?? null,
      // The progress line names the action while it runs (a test or command can take minutes).
      onExecute: stream.executing,
      spent,
      // The same prices the cost so far and the cap read.
      price,
    });
  } catch (error) {
    if (!(error instanceof LoomError)) throw error;
    failure = error;
  } finally {
    store.clear();
    // A recording of a real workspace ends with what the run changed: a replay shows the same files.
    if (sandbox.record && sandbox.workspace) {
      sandbox.record({ type: "changes", changes: workspaceChanges(sandbox.workspace.changes()) });
    }
    for (const close of opened) close();
    hooks.trace?.settle?.();
  }
  announceRouting();

  const ended = runEnded({
    loop,
    failure,
    known,
    events,
    model,
    sandbox,
    replay: hooks.replay,
    prices: plan.prices,
    elapsed: () => Math.max(0, now() - started),
  });
  emit(ended.event);
  // The report is the fold of the stream the caller saw: one source for both.
  const report = foldReport(events, { version: VERSION });
  const written = writeReport(report, known.reportPath ?? null);
  // --diff: the patch of the run's changes (empty when nothing changed or nothing ran for real).
  if (outputs.diff) writeDiff(outputs.diff, sandbox.workspace?.patch() ?? "", { warn: warnOf(hooks) });
  return runResult({
    input,
    loop,
    outcome: ended.outcome,
    error: written.error ?? ended.error,
    report,
    reportPath: written.path,
    unwritable: written.unwritable,
    comparing,
    required,
    known,
    sandbox,
  });
}

/** Writes the patch of the run's changes; a path it cannot be written to is a warning, not the run's failure. */
function writeDiff(path: string, patch: string, { warn }: { warn: (message: string) => void }): void {
  try {
    writeFileAtomic(path, patch);
  } catch (cause) {
    warn(`Cannot write the diff ${JSON.stringify(path)}: ${ioCode(cause)}`);
  }
}

/** Writes the report where the run was asked to (atomically); an unwritable path is the run's error, not a throw. */
function writeReport(
  report: ContextReport,
  path: string | null,
): { path: string | null; unwritable: boolean; error: RunResult["error"] | null } {
  if (path === null) return { path, unwritable: false, error: null };
  try {
    writeFileAtomic(path, `${JSON.stringify(report, null, 2)}\n`);
    return { path, unwritable: false, error: null };
  } catch (cause) {
    const message = `Cannot write the context report ${JSON.stringify(path)}: ${ioCode(cause)}`;
    return { path: null, unwritable: true, error: { code: "report_unwritable", message } };
  }
}

/**
 * The report of a run that ended before it could be described (interrupted while its request was read from stdin):
 * written like every other report, so a pipeline always finds one where it asked for it.
 */
export function writeUnstartedReport(
  path: string,
  { policy, outcome, error, stepProtocol }: {
    policy: ContextPolicyName;
    outcome: Outcome;
    error: LoomError;
    stepProtocol?: StepProtocol;
  },
): void {
  const report = foldReport([{
    type: "run-ended",
    policy,
    slice: null,
    outcome,
    error: { code: error.code, message: error.reportMessage },
    steps: 0,
    elapsed_ms: 0,
    archive: { events: 0, bytes: 0 },
    sandbox: null,
    verified: false,
    ...(stepProtocol ? { step_protocol: stepProtocol } : {}),
  }], { version: VERSION });
  writeFileAtomic(path, `${JSON.stringify(report, null, 2)}\n`);
}
