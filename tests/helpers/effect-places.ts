// Where lib/ may have effects (process, runtime globals, network, clock, timers, randomness, files, processes): the
// one allow-list tests/purity.test.ts, tests/import-cycles.test.ts and tests/providers-purity.test.ts read. Everything
// else under lib/ is pure, and no pure module imports one of these. A folder ends with "/"; a file is named whole.
export const EFFECT_PLACES = [
  "lib/io/", // the process's shared effects: atomic files, the keys it holds, the runtime it is on
  "lib/workspace/", // the workspace executor: files, processes, the sandbox, git's guard, pids, scratch folders
  // the run lifecycle: a plan into a provider, an executor, a recording, a report (its plan, lib/run/run-plan.ts, and
  // what a run is given, run-options.ts, are pure)
  "lib/run/start-run.ts",
  "lib/run/prepare-run.ts",
  "lib/run/run-stream.ts",
  "lib/run/create-provider.ts",
  "lib/run/provider-for-model.ts",
  "lib/providers/http/", // post, send, retry, the error classification of every HTTP provider
  "lib/providers/anthropic/anthropic-provider.ts", // each kind's HTTP adapter, beside its pure converters
  "lib/providers/openai/openai-provider.ts",
  "lib/providers/openai/openai-responses-provider.ts",
  "lib/providers/openai/read-server-context.ts",
  "lib/providers/ollama/ollama-provider.ts",
  "lib/eval/run/", // the eval runner: suites from disk, attempts, checks, rescoring
  "lib/doctor/run-doctor.ts", // doctor's live part
];

/** Whether a repository-relative module path ("lib/run/start-run.ts") is a place effects may live. */
export function isEffectPlace(module: string): boolean {
  return EFFECT_PLACES.some((place) => place.endsWith("/") ? module.startsWith(place) : module === place);
}
