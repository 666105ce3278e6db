// A run's plan: everything that configures it — the user's settings resolved once, Loom's output files, the model
// and price tables, the benchmark's previews — as one immutable value built by pure code, and the pure decisions
// made from it before the loop (the request under its settings, a cost cap that needs a price, the run's own files).
// The lifecycle (start-run.ts, prepare-run.ts) does the effects. Pure (tests/purity.test.ts): the environment is
// passed in.
import type { CatalogKnown } from "../catalog/plan.ts";
import { DEFAULT_POLICY } from "../policy.ts";
import type { PreviewSizes } from "../context/render-event.ts";
import { StartupError } from "../errors.ts";
import type { ModelTable } from "../models/models.ts";
import { BUILT_IN_PRICES, priceOf, pricesOf, type PriceTable } from "../prices.ts";
import type { SliceRequest } from "../slice.ts";
import {
  definedOnly,
  type RequestSettings,
  resolveSettings,
  type RunSettings,
  type SettingFlags,
  type SettingsPlan,
  type SettingsResult,
} from "../settings/settings.ts";
import { LIBRARY_HOOKS, PLANNED_OPTIONS, SETTING_OPTIONS } from "./run-options.ts";
import type { RunHooks, RunOptions, SettingOptions } from "./run-options.ts";

/** Loom's own output files of a run: none of them is ever the agent's change, whichever workspace they sit in. */
export type RunOutputs = {
  /** Write the context report here (atomically), for every outcome; a catalog may name its own instead. */
  readonly contextReport?: string;
  /** Write a recorded workflow (JSONL) here. */
  readonly record?: string;
  /** Write a git-style patch of the run's workspace changes here (--diff), from Loom's own snapshot. */
  readonly diff?: string;
  /** The request trace (--trace): its writer is the caller's hook; its path is Loom's own file. */
  readonly trace?: string;
  /** Loom's other files of this run (a recording replayed in its own workspace). */
  readonly ownFiles: readonly string[];
};

/** How a run is configured: built once (runPlan, planRun), never changed; startRun does the effects it says. */
export type RunPlan = {
  /**
   * The user's settings resolved once (a command's flags, environment and config files, or a library run's options),
   * onto which the run's request or catalog is layered; or why they were refused (the run then fails to start, with
   * its report).
   */
  readonly settings: SettingsResult;
  readonly outputs: RunOutputs;
  /** The model table (default: the built-in one, lib/models/built-in.ts; --models FILE merges a user's file in). */
  readonly models?: ModelTable;
  /** The prices the report's cost, the cost so far and the cap read: the given table, else the model table's. */
  readonly prices: PriceTable;
  /** Bounded preview sizes above the SPEC's floors: the benchmark's frontier only, never a CLI or catalog setting. */
  readonly previews?: PreviewSizes;
  readonly archiveLimits?: Readonly<NonNullable<RunOptions["archiveLimits"]>>;
  /** Variables never passed to test and command processes, besides the providers' key variables. */
  readonly secretEnvNames: readonly string[];
};

/** What a plan is made of besides the settings: the outputs and the tables. */
export type PlanConfig = Omit<RunOutputs, "ownFiles"> & {
  ownFiles?: readonly string[];
  models?: ModelTable;
  prices?: PriceTable;
  previews?: PreviewSizes;
  archiveLimits?: RunOptions["archiveLimits"];
  secretEnvNames?: readonly string[];
};

/** What a library run's plan is made of: its setting options, the sandbox grants, and the rest of its config. */
export type PlanOptions = SettingOptions & Pick<RunOptions, "sandboxGrants"> & PlanConfig;

/** The plan of a run whose settings are resolved (a command's one resolution, or a refusal of it). */
export function runPlan(settings: SettingsPlan | SettingsResult, config: PlanConfig = {}): RunPlan {
  const { contextReport, record, diff, trace, ownFiles = [], models, prices, previews, archiveLimits } = config;
  return Object.freeze({
    settings: "ok" in settings ? settings : { ok: true, settings: settings.settings, plan: settings },
    outputs: Object.freeze({
      ...definedOnly({ contextReport, record, diff, trace }),
      ownFiles: Object.freeze([...ownFiles]),
    }),
    ...definedOnly({ models, previews, archiveLimits }),
    prices: prices ?? (models ? pricesOf(models) : BUILT_IN_PRICES),
    secretEnvNames: Object.freeze([...config.secretEnvNames ?? []]),
  });
}

/**
 * A library run's plan: its setting options and sandbox grants resolved as the flags over `env` (the same one
 * resolution a command makes; no config file is read), and its outputs.
 */
export function planRun(options: PlanOptions, { env }: { env: Record<string, string | undefined> }): RunPlan {
  const grants = options.sandboxGrants;
  const flags: SettingFlags = definedOnly({
    ...Object.fromEntries(SETTING_OPTIONS.map(([key, option]) => [key, options[option]])),
    // A switch: false says nothing (the request's own stands).
    require_passing_tests: options.requirePassingTests || undefined,
    sandbox_network: grants?.network,
    sandbox_env: grants?.env,
    sandbox_read_only: grants?.read_only,
  });
  return runPlan(resolveSettings({ flags, env }), options);
}

/**
 * A library run (runWithOptions): its plan from exactly its setting and planned options, its hooks as given; nothing
 * else a caller's object holds reaches the lifecycle.
 */
export function libraryRun(
  options: RunOptions,
  { env }: { env: Record<string, string | undefined> },
): { plan: RunPlan; hooks: RunHooks } {
  const pick = <K extends keyof RunOptions>(names: readonly K[]) =>
    Object.fromEntries(names.map((name) => [name, options[name]])) as Pick<RunOptions, K>;
  const planned = pick([...SETTING_OPTIONS.map(([, option]) => option), ...PLANNED_OPTIONS]);
  return { plan: planRun(planned, { env }), hooks: pick(LIBRARY_HOOKS) };
}

/** What a run says of itself before it is prepared: the user's policy and protocol, the report path, the slice. */
export function knownAtStart(plan: RunPlan, { slice }: { slice: string | null }): CatalogKnown {
  const planned = plan.settings;
  return {
    policy: planned.ok ? planned.settings.context_policy.value : DEFAULT_POLICY,
    reportPath: plan.outputs.contextReport,
    slice,
    route: null,
    calls: [],
    ...(planned.ok ? { stepProtocol: planned.settings.step_protocol.value } : {}),
  };
}

/** A request's own settings, for the plan's layering (SettingsPlan.request). */
export function requestSettings(request: SliceRequest, file: string): RequestSettings {
  const { model, step_protocol, previews, sandbox, limits, require_passing_tests, effort, thinking } = request;
  return { file, model, step_protocol, previews, sandbox, limits, require_passing_tests, effort, thinking };
}

/**
 * The request as the run carries it out: the resolved protocol and previews written in when anything set them (the
 * recording keeps them), and --require-passing-tests and --max-cost (a library's options too) over its own.
 */
export function settledRequest(request: SliceRequest, settings: RunSettings): SliceRequest {
  let settled = request;
  if (settings.step_protocol.source !== "default") {
    settled = { ...settled, step_protocol: settings.step_protocol.value };
  }
  if (settings.previews.source !== "default") settled = { ...settled, previews: settings.previews.value };
  const { require_passing_tests: required, max_cost: maxCost } = settings;
  if (required.source === "flag" && required.value) settled = { ...settled, require_passing_tests: true };
  if (maxCost.source === "flag") settled = { ...settled, limits: { ...settled.limits, max_cost_usd: maxCost.value } };
  return settled;
}

/** A cost cap the run cannot keep (its model has no price), as the startup failure it is; null when it can. */
export function unpricedCap(request: SliceRequest, prices: PriceTable): StartupError | null {
  if (request.limits.max_cost_usd === undefined || priceOf(prices, request.model) !== null) return null;
  return new StartupError(
    `A cost cap (--max-cost, limits.max_cost_usd) needs the model's price, and Loom's price table has none for ` +
      `${JSON.stringify(request.model)}`,
    "price_unknown",
  );
}

/** Every file of Loom's own this run writes: the plan's outputs and a catalog's report path (known once routed). */
export function ownFilesOf(outputs: RunOutputs, { reportPath }: { reportPath: string | undefined }): string[] {
  const { contextReport, record, diff, trace, ownFiles } = outputs;
  return [reportPath, contextReport, record, diff, trace, ...ownFiles].filter((path) => path !== undefined);
}
