// The run lifecycle behind runWithOptions and the commands: input -> prepared run -> loop -> one report, written once.
// A run is a value: every startup, routing and run failure comes back as a RunResult whose outcome says what
// happened; only a bug throws.
import { closeSync, constants, openSync, readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { type CatalogInput, type CatalogKnown, planCatalogRun, type RoutingNote } from "../catalog/plan.ts";
import { loadCatalog } from "../catalog/catalog.ts";
import { type ContextPolicyName, DEFAULT_POLICY, type StepProtocol } from "../policy.ts";
import { type ContextReport, REPORT_TEXT_LIMIT } from "../report/context-report.ts";
import { clipText } from "../text/clip.ts";
import { foldReport } from "../report/fold.ts";
import { addUsage, NULL_USAGE, type Provider, type Usage } from "../vocabulary/turn.ts";
import { describeFsError, LoomError, StartupError } from "../errors.ts";
import { endingOf } from "../ending.ts";
import type { Executor } from "../vocabulary/executor.ts";
import { workspaceChanges } from "../vocabulary/reports.ts";
import { type LoopResult, NOT_STARTED, previewModeOf, runLoop } from "../loop/loop.ts";
import type { Outcome } from "../outcome.ts";
import { PROVIDER_KINDS } from "../models/provider-kinds.ts";
import { RecordingExecutor, RecordingProvider, type RecordingSink } from "../recording/recorder.ts";
import {
  type Recording,
  RECORDING_FORMAT,
  RECORDING_VERSION,
  type RecordingEntry,
  recordingLine,
} from "../recording/recording.ts";
import {
  ComparingExecutor,
  convertAnswers,
  RecordedExecutor,
  recordingProtocol,
  ScriptedProvider,
} from "../recording/replay.ts";
import type { Routed } from "../catalog/routing.ts";
import { availableActions, SliceRequest } from "../slice.ts";
import { ResultStore } from "../context/store.ts";
import { unverifiedReason } from "../context/briefing.ts";
import { OUTPUT_FORMAT_VERSION, type Progress, type RunEvent } from "../run-events.ts";
import { createTracer, type TraceLine } from "../recording/trace.ts";
import { VERSION } from "../version.ts";
import { formatZodError } from "../text/zod-error.ts";
import { openLineSink, outputPathProblem, pinOutputPath, writeFileAtomic } from "../io/files.ts";
import { redactHeld } from "../io/held-keys.ts";
import { captureBodies } from "../providers/http/capture-bodies.ts";
import { buildProvider } from "./create-provider.ts";
import {
  definedOnly,
  type RequestSettings,
  type Resolved,
  resolveSettings,
  type RunSettings,
  type SettingFlags,
  type SettingsInput,
  type SettingsPlan,
  type SettingsResult,
} from "../settings/settings.ts";
import type { HttpOptions } from "../providers/http/post-json.ts";
import { SETTING_KEYS, type SettingKey, SETTINGS, type ValueOf } from "../settings/setting-table.ts";
import { providerForModel } from "./provider-for-model.ts";
import { createWorkspaceExecutor } from "../workspace/create-workspace-executor.ts";
import type { WorkspaceExecutor } from "../workspace/workspace-executor.ts";
import type { PreviewSizes } from "../context/render-event.ts";
import type { SandboxState } from "../sandbox-state.ts";
import {
  BUILT_IN_PRICES,
  type Cost,
  costOf,
  costOfCalls,
  type ModelPrice,
  priceOf,
  pricesOf,
  type PriceTable,
} from "../prices.ts";
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

/** Hooks for commands, tests and the benchmark; not part of the library's options. */
export type StartOptions = RunOptions & {
  /** Replay a recording: its answers script the provider; its executions stand in for the workspace unless `execute`
   * (then the workspace executes for real and each report is compared with the recorded one). */
  replay?: {
    recording: Recording;
    execute: boolean; /** sha256 of the recording's bytes, kept in the report. */
    digest?: string;
  };
  /** Replace the workspace executors; gets the run's result store. */
  executor?: (store: ResultStore) => Executor;
  /**
   * The command's one resolution of the user's settings (flags, environment, config files): the run layers its request
   * or catalog onto it rather than resolve again. Without it the run resolves once from the library's options; with
   * it, they (contextPolicy, stepProtocol, previewMode, sandbox, requirePassingTests, maxCost, sandboxGrants) must
   * be in it already: a run is configured one way.
   */
  settings?: SettingsPlan;
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

/** Runs a slice from any input and writes its report once, whatever the outcome. */
export async function startRun(input: RunInput, options: StartOptions = {}): Promise<RunResult> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  // Loom's own files are reached from folders pinned now, before any process of the run can plant a link on the way.
  for (const path of [options.contextReport, options.record, options.diff]) if (path) pinOutputPath(path);
  // The user's settings, resolved once (by the command, else here): the policy a report says if nothing more is known.
  const planned = planOf(options);
  const known: CatalogKnown = {
    policy: planned.ok ? planned.settings.context_policy.value : DEFAULT_POLICY,
    reportPath: options.contextReport,
    slice: options.replay?.recording.header.slice_name ?? null,
    route: null,
    calls: [],
    ...(planned.ok ? { stepProtocol: planned.settings.step_protocol.value } : {}),
  };
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
  let required = planned.ok && planned.settings.require_passing_tests.value;
  // Every event of the run, as delivered: the report is their fold.
  const events: RunEvent[] = [];
  let maxSteps = 0;
  // The model's price once the run is prepared (null: none known); what the cost so far and the cap read.
  let price: ModelPrice | null = null;
  const spent = () => spentAt(events, price);
  const emit = (event: RunEvent) => {
    events.push(event);
    options.onEvent?.(event);
    // The progress line is a sink of the stream: the call in flight, out of the step limit run-started gave, and
    // what the calls before it cost.
    if (event.type === "run-started") maxSteps = event.max_steps;
    if (event.type === "call-started") {
      const { type: _, ...call } = event;
      // A cost is shown only when every call so far reported its counters: "$0.0000" for a recording without usage
      // would be a claim, not a measurement.
      // A replay's money is the recorded run's, never spent now: it is said once, labelled, at the end.
      const known = price !== null && !options.replay &&
        events.every((e) => e.type !== "model-called" || costOf(e.usage ?? NULL_USAGE, price) !== null);
      options.onProgress?.({ ...call, max_steps: maxSteps, cost_usd: known ? spent() : null });
    }
  };
  // The routing's model calls and choice, once: right after run-started, or before the ending of a run that never
  // started (a failed routing's classification calls still count in its report).
  let routingAnnounced = false;
  const announceRouting = () => {
    if (routingAnnounced) return;
    routingAnnounced = true;
    for (const call of known.calls) emit({ type: "model-called", ...call, step: 0 });
    if (known.route) {
      const { slice, via, rule } = known.route;
      emit({ type: "route-chosen", slice, via, rule });
    }
  };
  try {
    const prepared = await prepare(input, options, { planned, known, store, now, sandbox, opened });
    model = prepared.request.model;
    price = priceOf(priceTableOf(options), model);
    required = prepared.request.require_passing_tests === true;
    comparing = prepared.executor instanceof ComparingExecutor ? prepared.executor : undefined;
    emit({
      type: "run-started",
      format_version: OUTPUT_FORMAT_VERSION,
      loom_version: VERSION,
      policy: known.policy,
      slice: known.slice,
      model: prepared.request.model,
      max_steps: prepared.request.limits.max_steps,
      workspace: options.replay && !options.replay.execute ? null : resolve(prepared.request.workspace),
      sandbox: sandbox.state,
      step_protocol: prepared.settings.step_protocol.value,
      previews: previewModeOf(prepared.request, { policy: known.policy, previews: options.previews }),
    });
    // run-started is the first event: the routing that chose this run is told right after it.
    announceRouting();
    loop = await runLoop(prepared.request, {
      onEvent: emit,
      policy: known.policy,
      provider: prepared.provider,
      executor: prepared.executor,
      store,
      now,
      signal: options.signal,
      archiveLimits: options.archiveLimits,
      previews: options.previews,
      // A change after the last action (a leftover writer) is a revision no test ran on.
      settle: () => sandbox.workspace?.settle() ?? null,
      // The progress line names the action while it runs (a test or command can take minutes).
      onExecute: (step, action) =>
        options.onProgress?.({
          step,
          phase: "execution",
          action,
          request_bytes: 0,
          checkpoint: false,
          max_steps: maxSteps,
          cost_usd: null,
        }),
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
    options.trace?.settle?.();
  }
  announceRouting();

  let outcome: Outcome;
  let error: RunResult["error"];
  let closing: LoopResult["closing"];
  if (loop) {
    ({ outcome, error, closing } = loop);
  } else {
    // No loop result: prepare() or the loop threw a LoomError (anything else was rethrown above).
    if (failure === null) throw new Error("a run without a loop result has a failure");
    outcome = endingOf({ threw: failure }).outcome;
    error = { code: failure.code, message: failure.message };
    closing = {
      error: { code: failure.code, message: failure.reportMessage },
      elapsed_ms: Math.max(0, now() - started),
      archive: { events: 0, bytes: 0 },
    };
  }
  emit({
    type: "run-ended",
    policy: known.policy,
    slice: known.slice,
    outcome,
    error: closing.error,
    steps: loop?.steps ?? 0,
    elapsed_ms: closing.elapsed_ms,
    archive: closing.archive,
    sandbox: sandbox.state,
    verified: loop?.verified ?? false,
    // The cost block (SPEC §6): what the counters (measured, or recorded for a replay) cost at the price table.
    ...(model !== null
      ? {
        // Per call: a long-prompt price tier applies to each call's own prompt.
        cost: recordedIf(
          costOfCalls(
            events.flatMap((e) => e.type === "model-called" ? [e.usage ?? NULL_USAGE] : []),
            priceOf(priceTableOf(options), model),
            { total: usageOf(events) },
          ),
          options.replay !== undefined,
        ),
      }
      : {}),
    // The model's finish and what it printed: Loom's own output, which the report's pages show (keys redacted, then
    // clipped).
    ...(loop
      ? {
        finish: loop.finish
          ? { status: loop.finish.status, summary: clipText(redactHeld(loop.finish.summary), REPORT_TEXT_LIMIT) }
          : null,
      }
      : {}),
    ...(loop && loop.printed.length > 0
      ? { printed: loop.printed.map((text) => clipText(redactHeld(text), REPORT_TEXT_LIMIT)) }
      : {}),
    ...(options.replay?.digest ? { recording: options.replay.digest } : {}),
    // A run that never started still says the protocol it was to use (the flag's, the catalog's, the default).
    ...(loop === null && known.stepProtocol !== undefined ? { step_protocol: known.stepProtocol } : {}),
    // What the run changed, from Loom's own snapshot (a workspace that ran for real), else as its recording says.
    ...(sandbox.workspace
      ? { changes: workspaceChanges(sandbox.workspace.changes()) }
      : options.replay?.recording.changes
      ? { changes: options.replay.recording.changes }
      : {}),
  });
  // The report is the fold of the stream the caller saw: one source for both.
  const report = foldReport(events, { version: VERSION });
  let reportPath = known.reportPath ?? null;
  let unwritable = false;
  if (reportPath !== null) {
    try {
      writeFileAtomic(reportPath, `${JSON.stringify(report, null, 2)}\n`);
    } catch (cause) {
      unwritable = true;
      error = {
        code: "report_unwritable",
        message: `Cannot write the context report ${JSON.stringify(reportPath)}: ${ioCode(cause)}`,
      };
      reportPath = null;
    }
  }
  if (options.diff) {
    // --diff: the patch of the run's changes (empty when nothing changed or nothing ran for real).
    try {
      writeFileAtomic(options.diff, sandbox.workspace?.patch() ?? "");
    } catch (cause) {
      warnOf(options)(
        `Cannot write the diff ${JSON.stringify(options.diff)}: ${ioCode(cause)}`,
      );
    }
  }
  const replay = comparing ? { compared: comparing.compared, differing_steps: comparing.differing } : undefined;
  const { exitCode, code } = endingOf({
    ran: outcome,
    errorCode: loop?.error?.code,
    reportUnwritten: unwritable,
    diverged: replay !== undefined && replay.differing_steps.length > 0,
    unverified: required && !(loop?.verified ?? false),
  });
  if (code === "unverified" && loop) {
    const why = unverifiedReason({ last_test: loop.last_test, latest_revision: loop.revision });
    error = { code, message: `The run ended NOT verified (passing tests were required): ${why}` };
  }
  const { closing: _, ...ran } = loop ?? { ...NOT_STARTED, printed: [], reports: [], closing: null };
  return {
    ...ran,
    outcome,
    error,
    report,
    report_path: reportPath,
    exit_code: exitCode,
    ...("catalog" in input ? { route: known.route } : {}),
    ...(replay ? { replay } : {}),
    sandbox: sandbox.state,
  };
}

type Prepared = { request: SliceRequest; settings: RunSettings; provider: Provider; executor: Executor };

/** Everything before the loop: routing, validation, workspace, provider, recording. Throws a LoomError to fail. */
async function prepare(
  input: RunInput,
  options: StartOptions,
  { planned, known, store, now, sandbox, opened }: {
    planned: SettingsResult;
    known: CatalogKnown;
    store: ResultStore;
    now: () => number;
    sandbox: { state: SandboxState | null; workspace?: WorkspaceExecutor; record?: RecordingSink };
    opened: Array<() => void>;
  },
): Promise<Prepared> {
  const env = options.env ?? process.env;
  // Entries made before the header can be written (the classification answer) wait for it.
  const pending: RecordingEntry[] = [];
  const record = (
    provider: Provider,
  ) => (options.record ? new RecordingProvider(provider, (e) => pending.push(e)) : provider);
  // With a trace, every provider this run makes (a catalog's classifier, the slice's model) is traced in one sequence,
  // its HTTP bodies captured as sent.
  const tracer = options.trace ? createTracer({ write: options.trace }) : null;
  const baseHttp: HttpOptions = {};
  const traced = (make: (http: HttpOptions) => Provider): Provider => {
    if (!tracer) return make(baseHttp);
    const bodies = captureBodies();
    return tracer.wrap(make({ ...baseHttp, fetch: bodies.fetch }), { takeBodies: bodies.take });
  };
  // The model table decides how each model is called; an id it does not know is said once, on the warning channel.
  const modelOptions = {
    models: options.models,
    warn: warnOf(options),
  };
  if (!planned.ok) throw new StartupError(planned.message, planned.code);
  const userLevel = planned.plan;
  let request: SliceRequest;
  let settings: RunSettings;
  let provider = options.provider && tracer ? tracer.wrap(options.provider) : options.provider;
  let secretNames = options.secretEnvNames ?? [];
  // Where the slice's sandbox settings came from, for the one line refusing a relaxation the user did not grant.
  let sliceSource = "the request";
  if ("request" in input) {
    sliceSource = input.file ?? "the request";
    const parsed = SliceRequest.safeParse(input.request);
    if (!parsed.success) {
      throw new StartupError(`Invalid SliceRequest: ${formatZodError(parsed.error)}`, "invalid_request");
    }
    request = parsed.data;
    settings = settled(userLevel.request(requestSettings(request, input.file ?? "the request")));
  } else {
    const { name, ...rest } = input.catalog;
    const plan = await planCatalogRun({ ...rest, name, catalog: readCatalog(rest.file, name) }, {
      settings: userLevel,
      known,
      contextReport: options.contextReport,
      provider: (model) => record(traced((http) => buildProvider(model, { env, ...modelOptions, ...http }))),
      now,
      signal: options.signal,
      reportPathProblem: outputPathProblem,
      onRouting: options.onRouting,
    });
    if (!plan.ok) throw plan.error;
    request = plan.request;
    settings = plan.settings;
    sliceSource = `${name} (slice ${known.slice})`;
    const model = plan.settings.provider;
    if (model === null) throw new Error("a routed catalog run has its model's settings");
    provider ??= traced((http) => buildProvider(model, { env, ...modelOptions, ...http }));
    secretNames = [...secretNames, ...plan.secretEnvNames];
  }
  known.stepProtocol = settings.step_protocol.value;
  // The resolved protocol and previews, written into the request when anything set them (the recording keeps them).
  if (settings.step_protocol.source !== "default") {
    request = { ...request, step_protocol: settings.step_protocol.value };
  }
  if (settings.previews.source !== "default") request = { ...request, previews: settings.previews.value };
  // --require-passing-tests and --max-cost (a library's options too) over the request's own.
  const { require_passing_tests: required, max_cost: maxCost } = settings;
  if (required.source === "flag" && required.value) request = { ...request, require_passing_tests: true };
  if (maxCost.source === "flag") request = { ...request, limits: { ...request.limits, max_cost_usd: maxCost.value } };
  if (request.limits.max_cost_usd !== undefined && priceOf(priceTableOf(options), request.model) === null) {
    throw new StartupError(
      `A cost cap (--max-cost, limits.max_cost_usd) needs the model's price, and Loom's price table has none for ` +
        `${JSON.stringify(request.model)}`,
      "price_unknown",
    );
  }
  const replay = options.replay;
  if (replay) {
    // A catalog run's classification call is replayed into the report as it was measured; the loop gets the rest.
    const [classification, answers] = partition(replay.recording.answers, (a) => a.phase === "classification");
    known.calls = classification.map((answer) => ({
      phase: "classification",
      step: 0,
      request_bytes: answer.request_bytes ?? 0,
      elapsed_ms: 0,
      usage: answer.usage,
      checkpoint: false,
      lookup: false,
    }));
    const protocol = {
      from: recordingProtocol(replay.recording),
      to: settings.step_protocol.value,
    } as const;
    const script = convertAnswers(answers, { ...protocol, actions: availableActions(request) });
    provider ??= traced(() => new ScriptedProvider(script));
  }
  // Without an explicit provider, the request's "PROVIDER/MODEL" names one; credentials come from the environment.
  provider ??= traced((http) => providerForModel(request.model, settings.provider, { env, ...modelOptions, http }));

  let executor = options.executor?.(store);
  if (!executor && replay && !replay.execute) executor = new RecordedExecutor(replay.recording.executions, { store });
  if (!executor) {
    const root = resolve(request.workspace);
    if (!isDirectory(root)) {
      throw new StartupError(`Workspace ${JSON.stringify(request.workspace)} is not a directory`, "workspace_missing");
    }
    const unusable = workspaceProblem(root);
    if (unusable) {
      throw new StartupError(`Workspace ${JSON.stringify(request.workspace)} ${unusable}`, "workspace_unusable");
    }
    const workspace = createWorkspaceExecutor(request, store, {
      root,
      sandboxMode: settings.sandbox.value,
      settingsEnv: env,
      secretEnvNames: secretEnvNames(secretNames),
      warn: modelOptions.warn,
      grants: userLevel.grants,
      source: sliceSource,
      // (a catalog names its own report path: known.reportPath, planned above)
      ownFiles: [known.reportPath, options.contextReport, options.record, options.diff, ...(options.ownFiles ?? [])]
        .filter((path) => path !== undefined && path !== null),
    });
    sandbox.state = workspace.sandboxState;
    sandbox.workspace = workspace;
    executor = workspace;
    // An answers-only recording (no execution reports, or reports rebuilt from another agent's log) holds no effects
    // of Loom's to compare: its replay executes without a verdict on them, and says so once.
    const source = replay?.recording.header.source;
    const answersOnly = replay !== undefined &&
      (replay.recording.executions.length === 0 || (source !== undefined && source.format !== "loom"));
    if (replay && answersOnly) {
      modelOptions.warn(
        `the recording holds answers only${
          source ? ` (imported from ${source.format})` : ""
        }: its execution reports are not compared with this run's`,
      );
    } else if (replay) executor = new ComparingExecutor(executor, replay.recording.executions);
  }
  if (options.record) {
    const sink = openRecording(options.record, { request, sliceName: known.slice, pending, opened });
    sandbox.record = sink;
    provider = new RecordingProvider(provider, sink);
    executor = new RecordingExecutor(executor, sink, { store });
  }
  return { request, settings, provider, executor };
}

/** Where a run's warnings go: the caller's function, else stderr; whichever, a held key never shows. */
function warnOf(options: Pick<StartOptions, "warn">): (message: string) => void {
  const warn = options.warn ?? ((message: string) => process.stderr.write(`loom: ${message}\n`));
  return (message) => warn(redactHeld(message));
}

/** The prices a run is costed at: the given table, else the model table's per-model prices (the built-in one). */
function priceTableOf(options: Pick<StartOptions, "prices" | "models">): PriceTable {
  return options.prices ?? (options.models ? pricesOf(options.models) : BUILT_IN_PRICES);
}

/**
 * What the run's model calls so far cost at `price`, in US dollars: each call's counters, a call that reported none
 * counting nothing (the report's cost block is null then; a cap can only count what was reported).
 */
function spentAt(events: readonly RunEvent[], price: ModelPrice | null): number {
  return events.reduce(
    (sum, event) => event.type === "model-called" && event.usage ? sum + (costOf(event.usage, price)?.total ?? 0) : sum,
    0,
  );
}

function usageOf(events: readonly RunEvent[]): Usage {
  return events.reduce(
    (sum, event) => event.type === "model-called" ? addUsage(sum, event.usage ?? NULL_USAGE) : sum,
    { ...NULL_USAGE },
  );
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

function readCatalog(path: string, name: string) {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new StartupError(`Cannot read catalog ${JSON.stringify(name)}: ${ioCode(error)}`, "catalog_unreadable");
  }
  return loadCatalog(text, { file: name });
}

/** A replay's cost is marked recorded: the recorded run's calls at today's table, never money spent by the replay. */
function recordedIf(cost: Cost | null, replay: boolean): Cost | null {
  return cost !== null && replay ? { ...cost, recorded: true } : cost;
}

/** Opens the recording: its header, then what was recorded before it; the returned sink appends the rest. */
function openRecording(
  path: string,
  { request, sliceName, pending, opened }: {
    request: SliceRequest;
    sliceName: string | null;
    pending: RecordingEntry[];
    opened: Array<() => void>;
  },
): RecordingSink {
  let write: (line: string) => void;
  try {
    const sink = openLineSink(path);
    opened.push(sink.close);
    write = sink;
  } catch (error) {
    throw new StartupError(`Cannot write the recording ${JSON.stringify(path)}: ${ioCode(error)}`, "record_unwritable");
  }
  const { workspace: _, ...recordedSlice } = request;
  write(recordingLine({
    type: "header",
    format: RECORDING_FORMAT,
    version: RECORDING_VERSION,
    slice: recordedSlice,
    ...(sliceName ? { slice_name: sliceName } : {}),
  }));
  const sink = (entry: RecordingEntry) => write(recordingLine(entry));
  for (const entry of pending) sink(entry);
  return sink;
}

/** The command's resolution, else the one resolution of the options (a library run). */
function planOf(options: StartOptions): SettingsResult {
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

/** A request's own settings, for resolveSettings. */
function requestSettings(request: SliceRequest, file: string): RequestSettings {
  const { model, step_protocol, previews, sandbox, limits, require_passing_tests, effort, thinking } = request;
  return { file, model, step_protocol, previews, sandbox, limits, require_passing_tests, effort, thinking };
}

/** The settings, or the refusal as a startup failure (nothing was sent). */
function settled(result: Resolved): RunSettings {
  if (!result.ok) throw new StartupError(result.message, result.code);
  return result.settings;
}

/**
 * Why Loom cannot work in the workspace — list it, enter it, create and remove a file in it — or null. Tried for real
 * (not access(2), which root always passes), before any model call: a run that cannot touch its workspace is not paid.
 */
function workspaceProblem(root: string): string | null {
  try {
    readdirSync(root);
  } catch (error) {
    return `cannot be read: ${describeFsError(error)}`;
  }
  const probe = join(root, `.loom-probe-${process.pid}-${Date.now().toString(36)}`);
  try {
    closeSync(openSync(probe, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
  } catch (error) {
    return `cannot be written: ${describeFsError(error)}`;
  }
  try {
    unlinkSync(probe);
  } catch (error) {
    return `cannot be changed (a new file could not be removed): ${describeFsError(error)}`;
  }
  return null;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A filesystem failure in words (never a bare errno code). */
const ioCode = describeFsError;

/** The credential variables a child process must never see: the providers' key variables plus the given names. */
export function secretEnvNames(extra: readonly string[] = []): string[] {
  const defaults = Object.values(PROVIDER_KINDS).flatMap(({ keyEnv }) => keyEnv === null ? [] : [keyEnv]);
  return [...new Set([...defaults, ...extra])];
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
