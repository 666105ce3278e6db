// From a catalog and a request text to a routed run: the SliceRequest, its policy and its report path. A run uses the
// result like any other input. Pure: the classification provider, the clock and the output-path check are passed in.
import { dirname, resolve } from "node:path";
import { type Catalog, renderIntent } from "./catalog.ts";
import { type ContextPolicyName, DEFAULT_POLICY } from "../policy.ts";
import type { CallRecord } from "../report/context-report.ts";
import { LoomError, StartupError } from "../errors.ts";
import type { ProviderConfig } from "../providers/provider-config.ts";
import { type Routed, routeRequest } from "./routing.ts";
import type { SliceRequest } from "../slice.ts";
import type { Provider } from "../vocabulary/turn.ts";

/** A request to route through a catalog, with the command-line settings that override the catalog's. */
export type CatalogInput = {
  catalog: Catalog;
  /** The catalog file's absolute path: paths in a catalog are relative to it. */
  file: string;
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
  calls: CallRecord[];
};

export type CatalogPlan =
  & CatalogKnown
  & (
    | { ok: true; request: SliceRequest; model: ProviderConfig; secretEnvNames: string[] }
    | { ok: false; error: LoomError }
  );

/** What routing tells whoever watches (the reporter prints it as progress). */
export type RoutingNote =
  | { kind: "classification"; bytes: number; candidates: string[] }
  | { kind: "routed"; route: Routed };

export type PlanOptions = {
  /** --context-policy and --context-report (absolute): they win over the catalog's settings. */
  policy?: ContextPolicyName;
  /** The user's default (LOOM_CONTEXT_POLICY, the config file), below the catalog's own settings. */
  defaultPolicy?: ContextPolicyName;
  contextReport?: string;
  /** Makes the provider of a catalog model (may fail for a missing credential). */
  provider: (model: ProviderConfig) => Provider;
  now: () => number;
  signal?: AbortSignal;
  /** Why a report path from the catalog cannot be written, or null when it can. */
  reportPathProblem: (path: string) => string | null;
  onRouting?: (note: RoutingNote) => void;
};

/**
 * Routes the request and builds its SliceRequest. Never throws for a routing or startup failure: the plan says what
 * went wrong and what was known by then (policy, report path, slice, classification calls), so the run's report can.
 */
export async function planCatalogRun(input: CatalogInput, options: PlanOptions): Promise<CatalogPlan> {
  const { catalog } = input;
  const defaults = catalog.defaults ?? {};
  const fromCatalog = (
    path: string | undefined,
  ) => (path === undefined ? undefined : resolve(dirname(input.file), path));
  const known: CatalogKnown = {
    policy: options.policy ?? defaults.context_policy ?? options.defaultPolicy ?? DEFAULT_POLICY,
    reportPath: options.contextReport,
    slice: null,
    route: null,
    calls: [],
  };
  const fail = (error: unknown): CatalogPlan => {
    if (!(error instanceof LoomError)) throw error;
    return { ...known, ok: false, error };
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
    known.route = await chooseSlice(input, { ...options, policy: known.policy }, known);
    const name = known.route.slice;
    const entry = catalog.slices[name];
    known.slice = name;
    reportPath(fromCatalog(entry.context_report ?? defaults.context_report));
    known.policy = options.policy ?? entry.context_policy ?? defaults.context_policy ?? options.defaultPolicy ??
      DEFAULT_POLICY;
    const workspace = input.workspace ?? fromCatalog(entry.workspace ?? defaults.workspace);
    if (workspace === undefined) {
      throw new StartupError(
        `Slice "${name}" names no workspace: set "workspace" in the catalog or pass --workspace DIR`,
        "workspace_missing",
      );
    }
    const model = catalog.models[entry.model];
    const request: SliceRequest = {
      intent: renderIntent(entry.intent, input.text),
      instructions: entry.instructions,
      workspace,
      actions: entry.actions,
      test: entry.test,
      model: model.model,
      limits: entry.limits,
      ...(entry.commands ? { commands: entry.commands } : {}),
      ...(entry.sandbox ?? defaults.sandbox ? { sandbox: { ...defaults.sandbox, ...entry.sandbox } } : {}),
      ...(entry.workspace_ignore ?? defaults.workspace_ignore
        ? { workspace_ignore: entry.workspace_ignore ?? defaults.workspace_ignore }
        : {}),
      ...definedOnly({
        step_protocol: entry.step_protocol ?? defaults.step_protocol,
        previews: entry.previews ?? defaults.previews,
        require_passing_tests: entry.require_passing_tests,
      }),
    };
    // No model's key reaches the slice's test or command processes.
    const secretEnvNames = Object.values(catalog.models).flatMap((m) => (m.api_key_env ? [m.api_key_env] : []));
    return { ...known, ok: true, request, model, secretEnvNames };
  } catch (error) {
    return fail(error);
  }
}

async function chooseSlice(
  { catalog, text, slice }: CatalogInput,
  options: PlanOptions & { policy: ContextPolicyName },
  known: CatalogKnown,
): Promise<Routed> {
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
    provider: () => options.provider(catalog.models[catalog.routes!.classification!.model]),
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

/** The entries whose value is defined (a request leaves unset settings out). */
function definedOnly<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}
