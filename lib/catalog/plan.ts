// From a catalog and a request text to a routed run: the SliceRequest, its policy and its report path. A run uses the
// result like any other input. Pure: the classification provider, the clock and the output-path check are passed in.
import { dirname, resolve } from "node:path";
import { type Catalog, renderIntent } from "./catalog.ts";
import type { ContextPolicyName, StepProtocol } from "../policy.ts";
import type { ModelCall } from "../run-events.ts";
import { LoomError, StartupError } from "../errors.ts";
import type {
  CatalogResolution,
  CatalogSettings,
  ProviderSettings,
  RunSettings,
  SettingsPlan,
} from "../settings/settings.ts";
import { type Routed, routeRequest } from "./routing.ts";
import { type SliceRequest, sliceRequest } from "../slice.ts";
import type { Provider } from "../vocabulary/turn.ts";

/** A request to route through a catalog, with the command-line settings that override the catalog's. */
export type CatalogInput = {
  catalog: Catalog;
  /** The catalog file's absolute path: paths in a catalog are relative to it. */
  file: string;
  /** The file as the user named it, for messages. */
  name?: string;
  /** The request text (the intent template's {{request}}). */
  text: string;
  /** Run this slice, skipping routing (--slice). */
  slice?: string;
  /** Absolute; overrides the catalog's workspace (--workspace). */
  workspace?: string;
};

/** What is known of a catalog run so far; a failure's report says as much as was known. */
export type CatalogKnown = {
  policy: ContextPolicyName;
  reportPath: string | undefined;
  slice: string | null;
  route: Routed | null;
  /** Model calls made while routing (classification), for the run's report. */
  calls: ModelCall[];
  /** The step protocol as resolved so far: a run that fails before it starts still reports it. */
  stepProtocol?: StepProtocol;
};

export type CatalogPlan =
  | { ok: true; request: SliceRequest; settings: RunSettings; secretEnvNames: string[] }
  | { ok: false; error: LoomError };

/** What routing tells whoever watches (the reporter prints it as progress). */
export type RoutingNote =
  | { kind: "classification"; bytes: number; candidates: string[] }
  | { kind: "routed"; route: Routed };

export type PlanOptions = {
  /** The user's settings (flags, environment, config files), resolved once: the catalog's are layered onto them. */
  settings: SettingsPlan;
  /** The run's record of what is known, filled in as routing learns it (the one record the run's report reads). */
  known: CatalogKnown;
  /** --context-report (absolute): it wins over the catalog's. */
  contextReport?: string;
  /** Makes the provider of a catalog model's resolved settings (may fail for a missing credential). */
  provider: (model: ProviderSettings) => Provider;
  now: () => number;
  signal?: AbortSignal;
  /** Why a report path from the catalog cannot be written, or null when it can. */
  reportPathProblem: (path: string) => string | null;
  onRouting?: (note: RoutingNote) => void;
};

/**
 * Routes the request and builds its SliceRequest. Never throws for a routing or startup failure: the plan says what
 * went wrong, and `options.known` what was known by then (policy, report path, slice, classification calls), so the
 * run's report can.
 */
export async function planCatalogRun(input: CatalogInput, options: PlanOptions): Promise<CatalogPlan> {
  const { catalog } = input;
  const defaults = catalog.defaults ?? {};
  const fromCatalog = (
    path: string | undefined,
  ) => (path === undefined ? undefined : resolve(dirname(input.file), path));
  // Every name a route can give is a slice of the catalog (loadCatalog checks the references).
  const sliceOf = (name: string) => {
    const entry = catalog.slices[name];
    if (entry === undefined) throw new Error(`routing chose ${name}, which the catalog does not have`);
    return entry;
  };
  // Every level of the catalog's settings at once, layered onto the user's: before routing, each slice, the classifier.
  const levels = options.settings.catalog(catalogSettings(input));
  const settingsOf = (slice: string | null): RunSettings => {
    const resolved = slice === null ? levels.catalog : levels.slices[slice];
    if (resolved === undefined) throw new Error(`no settings for slice ${slice}`);
    if (!resolved.ok) throw new StartupError(resolved.message, resolved.code);
    return resolved.settings;
  };
  const { known } = options;
  // Before routing, the policy from the command line, the catalog's defaults and the user's (a refusal comes next).
  if (levels.catalog.ok) {
    known.policy = levels.catalog.settings.context_policy.value;
    known.stepProtocol = levels.catalog.settings.step_protocol.value;
  }
  const fail = (error: unknown): CatalogPlan => {
    if (!(error instanceof LoomError)) throw error;
    return { ok: false, error };
  };
  /** The flag's report path, else the catalog's, which must be writable too (a startup failure with no report). */
  const reportPath = (path: string | undefined): void => {
    if (options.contextReport !== undefined || path === undefined) return;
    const problem = options.reportPathProblem(path);
    if (problem === null) {
      known.reportPath = path;
      return;
    }
    known.reportPath = undefined;
    throw new StartupError(`The catalog's context_report ${JSON.stringify(path)}: ${problem}`, "report_path_invalid");
  };

  try {
    reportPath(fromCatalog(defaults.context_report));
    settingsOf(null);
    known.route = await chooseSlice(input, { ...options, policy: known.policy, classifier: levels.classifier }, known);
    const name = known.route.slice;
    const entry = sliceOf(name);
    known.slice = name;
    reportPath(fromCatalog(entry.context_report ?? defaults.context_report));
    const settings = settingsOf(name);
    known.policy = settings.context_policy.value;
    known.stepProtocol = settings.step_protocol.value;
    const workspace = input.workspace ?? fromCatalog(entry.workspace ?? defaults.workspace);
    if (workspace === undefined) {
      throw new StartupError(
        `Slice "${name}" names no workspace: set "workspace" in the catalog or pass --workspace DIR`,
        "workspace_missing",
      );
    }
    const model = settings.provider;
    if (model === null) throw new Error("a catalog slice's model is resolved with it");
    const request = sliceRequest({
      intent: renderIntent(entry.intent, input.text),
      instructions: entry.instructions,
      workspace,
      actions: entry.actions,
      test: entry.test,
      model: model.model,
      limits: entry.limits,
      commands: entry.commands,
      sandbox: entry.sandbox ?? defaults.sandbox ? { ...defaults.sandbox, ...entry.sandbox } : undefined,
      workspace_ignore: entry.workspace_ignore ?? defaults.workspace_ignore,
      require_passing_tests: entry.require_passing_tests,
    });
    // No model's key reaches the slice's test or command processes.
    const secretEnvNames = Object.values(catalog.models).flatMap((m) => (m.api_key_env ? [m.api_key_env] : []));
    return { ok: true, request, settings, secretEnvNames };
  } catch (error) {
    return fail(error);
  }
}

async function chooseSlice(
  input: CatalogInput,
  options: PlanOptions & { policy: ContextPolicyName; classifier: CatalogResolution["classifier"] },
  known: CatalogKnown,
): Promise<Routed> {
  const { catalog, text, slice } = input;
  if (slice !== undefined) {
    if (!Object.hasOwn(catalog.slices, slice)) {
      const names = Object.keys(catalog.slices).map((s) => JSON.stringify(s)).join(", ");
      throw new StartupError(`Unknown slice ${JSON.stringify(slice)} (the catalog has ${names})`, "unknown_slice");
    }
    const route: Routed = { slice, via: "slice_flag", rule: null };
    options.onRouting?.({ kind: "routed", route });
    return route;
  }
  const result = await routeRequest(catalog, text, {
    policy: options.policy,
    provider: () => {
      const resolved = options.classifier;
      if (resolved === null) throw new Error("routing asks for a classifier only when the catalog names one");
      if (!resolved.ok) throw new StartupError(resolved.message, resolved.code);
      return options.provider(resolved.provider);
    },
    now: options.now,
    signal: options.signal,
    onClassification: ({ bytes, candidates }) => options.onRouting?.({ kind: "classification", bytes, candidates }),
  });
  known.calls = result.calls;
  if (!result.ok) throw result.error;
  const route: Routed = { slice: result.slice, via: result.via, rule: result.rule };
  options.onRouting?.({ kind: "routed", route });
  return route;
}

/** What the settings read of a catalog: its defaults, models, every slice and the classification model's name. */
function catalogSettings(input: CatalogInput): Omit<CatalogSettings, "slice"> {
  const { catalog } = input;
  const classifier = catalog.routes?.classification?.model;
  return {
    file: input.name ?? input.file,
    defaults: catalog.defaults ?? {},
    models: catalog.models,
    slices: catalog.slices,
    ...(classifier === undefined ? {} : { classifier }),
  };
}
