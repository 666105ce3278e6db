// The library API: run(request) and runWithOptions(request, options). A run is a value: it resolves to a RunResult
// whose outcome says what happened (startup failures included), and its context report, when asked for, has landed.
import { type RunOptions, type RunResult, startRun } from "./lib/adapters/start-run.ts";
import type { ContextReport } from "./lib/report/context-report.ts";
import type { Progress } from "./lib/run-events.ts";
import type { Outcome } from "./lib/outcome.ts";
import type { SliceRequest } from "./lib/slice.ts";
import type { Provider } from "./lib/vocabulary/turn.ts";

export type { ContextReport, Outcome, Progress, Provider, RunOptions, RunResult, SliceRequest };

/** Runs a slice with the legacy context policy. */
export function run(request: SliceRequest, options: Pick<RunOptions, "provider" | "signal"> = {}): Promise<RunResult> {
  return runWithOptions(request, options);
}

/** Runs a slice. Never rejects for a startup failure (invalid request, missing workspace or credential). */
export function runWithOptions(request: SliceRequest, options: RunOptions = {}): Promise<RunResult> {
  // Only the public options: the lifecycle's internal hooks stay unreachable from here.
  const {
    contextPolicy,
    contextReport,
    provider,
    signal,
    record,
    now,
    onProgress,
    archiveLimits,
    secretEnvNames,
    sandbox,
    sandboxGrants,
    warn,
    stepProtocol,
    previewMode,
    requirePassingTests,
    maxCost,
  } = options;
  return startRun({ request }, {
    contextPolicy,
    contextReport,
    provider,
    signal,
    record,
    now,
    onProgress,
    archiveLimits,
    secretEnvNames,
    sandbox,
    sandboxGrants,
    warn,
    stepProtocol,
    previewMode,
    requirePassingTests,
    maxCost,
  });
}
