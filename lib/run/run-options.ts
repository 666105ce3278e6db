// What a run is given: the library's options (RunOptions, its setting options derived from the settings table), the
// lifecycle's hooks (RunHooks: the effects and sinks beside a run's plan, lib/run/run-plan.ts), what a run starts from
// and what it returns. Pure: types and the names of the library's options.
import type { CatalogInput, RoutingNote } from "../catalog/plan.ts";
import type { ContextReport } from "../report/context-report.ts";
import type { Provider } from "../vocabulary/turn.ts";
import type { Executor } from "../vocabulary/executor.ts";
import type { LoopResult } from "../loop/loop.ts";
import type { Recording } from "../recording/recording.ts";
import type { Routed } from "../catalog/routing.ts";
import type { SliceRequest } from "../slice.ts";
import type { ResultStore } from "../context/store.ts";
import type { Progress, RunEvent } from "../run-events.ts";
import type { TraceLine } from "../recording/trace.ts";
import { SETTING_KEYS, type SettingKey, SETTINGS, type ValueOf } from "../settings/setting-table.ts";
import type { SandboxState } from "../sandbox-state.ts";

/**
 * The library's setting options (contextPolicy, stepProtocol, previewMode, sandbox, requirePassingTests, maxCost):
 * from the settings table (lib/settings/setting-table.ts: each entry's `option`), where each is described. Each is a
 * flag to a library run: above a request's and a catalog's own. Without contextPolicy a library run (api.ts) is
 * legacy; a command follows LOOM_CONTEXT_POLICY, then the config files.
 */
export type SettingOptions = {
  [K in SettingKey as (typeof SETTINGS)[K] extends { option: infer O extends string } ? O : never]?: ValueOf<K>;
};

/** The options of a library run (runWithOptions). */
export type RunOptions = SettingOptions & {
  /** Write the context report here (atomically), for every outcome. */
  contextReport?: string;
  /** The model provider; default: the one the request's model ("PROVIDER/MODEL") names, keys from the environment. */
  provider?: Provider;
  /** Abort to interrupt: running processes are killed and the report still lands (outcome "interrupted"). */
  signal?: AbortSignal;
  /** Write a recorded workflow (JSONL) here. */
  record?: string;
  now?: () => number;
  onProgress?: (progress: Progress) => void;
  archiveLimits?: { maxEvents?: number; maxBytes?: number };
  /** Environment variables never passed to test and command processes (e.g. a catalog's api_key_env names), even
   * when the slice names them; the providers' key variables always are. */
  secretEnvNames?: string[];
  /**
   * Sandbox relaxations the caller grants (what --sandbox-network, --sandbox-env and --sandbox-read-only say on the
   * command line): the request's `sandbox.network`, `env` and `read_only` may ask for these only, never more.
   */
  sandboxGrants?: { network?: boolean; env?: readonly string[]; read_only?: readonly string[] };
  /** Where the notice that processes run unsandboxed goes (once per process); default: stderr. */
  warn?: (message: string) => void;
};

/** The library's setting options, by the setting each is. */
export const SETTING_OPTIONS: readonly (readonly [SettingKey, keyof SettingOptions])[] = SETTING_KEYS.flatMap((key) => {
  const option = (SETTINGS[key] as { option?: string }).option;
  return option === undefined ? [] : [[key, option as keyof SettingOptions] as const];
});

/** The library's options besides its settings that its plan is made of (planRun reads them). */
export const PLANNED_OPTIONS = [
  "contextReport",
  "record",
  "archiveLimits",
  "secretEnvNames",
  "sandboxGrants",
] as const satisfies readonly (keyof RunOptions)[];

/** The library's options that are hooks (effects and sinks), handed to startRun as given beside the plan. */
export const LIBRARY_HOOKS = ["provider", "signal", "now", "onProgress", "warn"] as const satisfies readonly (
  keyof RunOptions
)[];

/** Every option of a library run, by name, planned or a hook: api.ts passes these and nothing else (the lifecycle's
 * other hooks stay unreachable). A RunOptions field missing here is a type error. */
export const RUN_OPTION_NAMES = [
  ...SETTING_OPTIONS.map(([, option]) => option),
  ...PLANNED_OPTIONS,
  ...LIBRARY_HOOKS,
] satisfies readonly (keyof RunOptions)[];
/** Holds when every RunOptions field is in RUN_OPTION_NAMES (else tsc refuses it). */
export type AllRunOptionsListed = Holds<
  [Exclude<keyof RunOptions, (typeof RUN_OPTION_NAMES)[number]>] extends [never] ? true : false
>;
type Holds<T extends true> = T;

/** A run's result. `outcome` says what happened, including a run that never started; the report has landed. */
export type RunResult = Omit<LoopResult, "closing"> & {
  exit_code: number;
  report: ContextReport;
  /** Where the report was written; null when no path was given (or it could not be written: see error). */
  report_path: string | null;
  /** How a catalog run chose its slice; null when it failed before; absent for other inputs. */
  route?: Routed | null;
  /** Replay with re-execution: how many execution reports were compared and which steps differed. */
  replay?: { compared: number; differing_steps: number[] };
  /** Where test and command processes ran; null when nothing ran for real (a replay without --execute, a startup
   * failure before the workspace was set up). */
  sandbox: SandboxState | null;
};

/** What a run starts from: a SliceRequest, or a request text routed through a catalog file. */
export type RunInput =
  | { request: SliceRequest; /** The file as the user named it, for messages (default "the request"). */ file?: string }
  | { catalog: Omit<CatalogInput, "catalog"> & { /** The file as the user named it, for messages. */ name: string } };

/**
 * What a run is handed besides its plan (lib/run/run-plan.ts): the effects and sinks — the provider and executors
 * standing in for the real ones, a recording to replay, where credentials are read, the caller's sinks, the clock, the
 * interrupt. Never a setting: a run is configured by its plan alone.
 */
export type RunHooks = Pick<RunOptions, (typeof LIBRARY_HOOKS)[number]> & {
  /** Replay a recording: its answers script the provider; its executions stand in for the workspace unless `execute`
   * (then the workspace executes for real and each report is compared with the recorded one). */
  replay?: {
    recording: Recording;
    execute: boolean; /** sha256 of the recording's bytes, kept in the report. */
    digest?: string;
  };
  /** Replace the workspace executors; gets the run's result store. */
  executor?: (store: ResultStore) => Executor;
  /** Where providers read their credentials (default: the process environment). */
  env?: Record<string, string | undefined>;
  onRouting?: (note: RoutingNote) => void;
  /** run-started, the routing's model calls and route-chosen, every loop event as it happens, then run-ended (the
   * fold of them all is the run report). A run that fails before it can be described streams only its
   * classification calls, if any, and run-ended. */
  onEvent?: (event: RunEvent) => void;
  /** Write a request trace line per model call (--trace): the TurnRequest as measured, the bodies as sent.
   * `settle`, called when the run ends: the trace file written again whole if a process of the run changed it. */
  trace?: ((line: TraceLine) => void) & { settle?: () => void };
};
