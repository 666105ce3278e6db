// What a run is given: the library's options (RunOptions, its setting options derived from the settings table), the
// lifecycle's (StartOptions: a command's settings plan and its hooks), what a run starts from and what it returns;
// and the one way a run is configured: a settings plan, the command's or the one a library run's options resolve to.
import { type CatalogInput, type RoutingNote } from "../catalog/plan.ts";
import { type ContextReport } from "../report/context-report.ts";
import { type Provider } from "../vocabulary/turn.ts";
import type { Executor } from "../vocabulary/executor.ts";
import { type LoopResult } from "../loop/loop.ts";
import { type Recording } from "../recording/recording.ts";
import type { Routed } from "../catalog/routing.ts";
import { SliceRequest } from "../slice.ts";
import { ResultStore } from "../context/store.ts";
import { type Progress, type RunEvent } from "../run-events.ts";
import { type TraceLine } from "../recording/trace.ts";
import { redactHeld } from "../io/held-keys.ts";
import {
  definedOnly,
  resolveSettings,
  type SettingFlags,
  type SettingsInput,
  type SettingsPlan,
  type SettingsResult,
} from "../settings/settings.ts";
import { SETTING_KEYS, type SettingKey, SETTINGS, type ValueOf } from "../settings/setting-table.ts";
import type { PreviewSizes } from "../context/render-event.ts";
import type { SandboxState } from "../sandbox-state.ts";
import { BUILT_IN_PRICES, pricesOf, type PriceTable } from "../prices.ts";
import type { ModelTable } from "../models/models.ts";

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
const SETTING_OPTIONS: readonly (readonly [SettingKey, keyof SettingOptions])[] = SETTING_KEYS.flatMap((key) => {
  const option = (SETTINGS[key] as { option?: string }).option;
  return option === undefined ? [] : [[key, option as keyof SettingOptions] as const];
});

/** Every option of a library run, by name: api.ts passes these and nothing else (the lifecycle's hooks stay
 * unreachable). A RunOptions field missing here is a type error. */
export const RUN_OPTION_NAMES = [
  ...SETTING_OPTIONS.map(([, option]) => option),
  ...([
    "contextReport",
    "provider",
    "signal",
    "record",
    "now",
    "onProgress",
    "archiveLimits",
    "secretEnvNames",
  ] as const),
  ...(["sandboxGrants", "warn"] as const),
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
 * A run's options: configured one way — by a command's settings plan, or by the library's setting options (which
 * resolve into the same plan) — never both: giving a setting option beside a plan is a type error.
 */
export type StartOptions =
  & RunHooks
  & (
    | (RunOptions & { settings?: undefined })
    | (
      & Omit<RunOptions, keyof SettingOptions | "sandboxGrants">
      & { [K in keyof SettingOptions | "sandboxGrants"]?: never }
      & {
        /** The command's one resolution of the user's settings (flags, environment, config files): the run layers its
         * request or catalog onto it rather than resolve again. */
        settings: SettingsPlan;
      }
    )
  );

/** The lifecycle's hooks for commands, tests and the benchmark; not part of the library's options. */
type RunHooks = {
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
  /** Bounded preview sizes above the SPEC's floors: the benchmark's frontier only, never a CLI or catalog setting. */
  previews?: PreviewSizes;
  /** run-started, the routing's model calls and route-chosen, every loop event as it happens, then run-ended (the
   * fold of them all is the run report). A run that fails before it can be described streams only its
   * classification calls, if any, and run-ended. */
  onEvent?: (event: RunEvent) => void;
  /** Write a request trace line per model call (--trace): the TurnRequest as measured, the bodies as sent.
   * `settle`, called when the run ends: the trace file written again whole if a process of the run changed it. */
  trace?: ((line: TraceLine) => void) & { settle?: () => void };
  /** Loom's other output files of this run (the trace, the diff), besides contextReport and record: inside the
   * workspace they are never the agent's changes. */
  ownFiles?: readonly string[];
  /** Write a git-style patch of the run's workspace changes here (--diff), from Loom's own snapshot. */
  diff?: string;
  /** The price table the report's cost comes from (default: the model table's prices). */
  prices?: PriceTable;
  /** The model table (default: the built-in one, lib/models/built-in.ts; --models FILE merges a user's file in). */
  models?: ModelTable;
};

/** The command's resolution, else the one resolution of the options (a library run). */
export function planOf(options: StartOptions): SettingsResult {
  if (options.settings === undefined) return resolveSettings(settingsInput(options));
  const given = [...SETTING_OPTIONS.map(([, option]) => options[option]), options.sandboxGrants];
  if (given.some((option) => option !== undefined)) {
    throw new Error("startRun: a setting given beside a resolved plan would be ignored; resolve it into the plan");
  }
  return { ok: true, settings: options.settings.settings, plan: options.settings };
}

/** What the run's settings are resolved from: the options (flags), the environment and the user's config file. */
function settingsInput(options: StartOptions): SettingsInput {
  const grants = options.sandboxGrants;
  const flags: SettingFlags = definedOnly({
    ...Object.fromEntries(SETTING_OPTIONS.map(([key, option]) => [key, options[option]])),
    // A switch: false says nothing (the request's own stands).
    require_passing_tests: options.requirePassingTests || undefined,
    sandbox_network: grants?.network,
    sandbox_env: grants?.env,
    sandbox_read_only: grants?.read_only,
  });
  return { flags, env: options.env ?? process.env };
}

/** Where a run's warnings go: the caller's function, else stderr; whichever, a held key never shows. */
export function warnOf(options: Pick<StartOptions, "warn">): (message: string) => void {
  const warn = options.warn ?? ((message: string) => process.stderr.write(`loom: ${message}\n`));
  return (message) => warn(redactHeld(message));
}

/** The prices a run is costed at: the given table, else the model table's per-model prices (the built-in one). */
export function priceTableOf(options: Pick<StartOptions, "prices" | "models">): PriceTable {
  return options.prices ?? (options.models ? pricesOf(options.models) : BUILT_IN_PRICES);
}
