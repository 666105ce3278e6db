// The library API: run(request) and runWithOptions(request, options). A run is a value: it resolves to a RunResult
// whose outcome says what happened (startup failures included), and its context report, when asked for, has landed.
import { type RunOptions, type RunResult, startRun } from "./lib/run/start-run.ts";
import { libraryRun } from "./lib/run/run-plan.ts";
import type { ContextReport } from "./lib/report/context-report.ts";
import type { Progress } from "./lib/run-events.ts";
import type { Outcome } from "./lib/outcome.ts";
import { DEFAULT_POLICY } from "./lib/policy.ts";
import type { SliceRequest } from "./lib/slice.ts";
import type { Provider } from "./lib/vocabulary/turn.ts";
import { createProvider, type CreateProviderOptions } from "./lib/run/create-provider.ts";
import type { ProviderConfig } from "./lib/settings/provider-config.ts";

export type {
  ContextReport,
  CreateProviderOptions,
  Outcome,
  Progress,
  Provider,
  ProviderConfig,
  RunOptions,
  RunResult,
  SliceRequest,
};
/** A provider from a model configuration you write yourself (docs/providers.md, "Library use"). */
export { createProvider };

/** Runs a slice with the legacy context policy (SPEC §10), whatever the environment or a config file says. */
export function run(request: SliceRequest, options: Pick<RunOptions, "provider" | "signal"> = {}): Promise<RunResult> {
  const { provider, signal } = options;
  return runWithOptions(request, { provider, signal, contextPolicy: DEFAULT_POLICY });
}

/**
 * Runs a slice. Never rejects for a startup failure (invalid request, missing workspace or credential). The policy is
 * `options.contextPolicy`, else legacy: a library call reads neither LOOM_CONTEXT_POLICY nor the user's config file,
 * so a program's runs do not change with the shell that starts it (the commands do read them).
 */
export function runWithOptions(request: SliceRequest, options: RunOptions = {}): Promise<RunResult> {
  // The plan a command would build from these flags, over the process's environment; only the public options reach
  // the lifecycle (its other hooks stay unreachable from here).
  const contextPolicy = options.contextPolicy ?? DEFAULT_POLICY;
  const { plan, hooks } = libraryRun({ ...options, contextPolicy }, { env: process.env });
  return startRun({ request }, plan, hooks);
}
