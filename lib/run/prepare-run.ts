// Everything before a run's loop: routing, validation, the workspace, the provider, the recording — the effects of
// what the run's plan says (its pure decisions are in run-plan.ts). Throws a LoomError to fail the run before it
// starts (the lifecycle, start-run.ts, reports it).
import { closeSync, constants, openSync, readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { type CatalogKnown, planCatalogRun } from "../catalog/plan.ts";
import { loadCatalog } from "../catalog/catalog.ts";
import { type Provider } from "../vocabulary/turn.ts";
import { describeFsError, StartupError } from "../errors.ts";
import type { Executor } from "../vocabulary/executor.ts";
import { PROVIDER_KINDS } from "../models/provider-kinds.ts";
import { RecordingExecutor, RecordingProvider, type RecordingSink } from "../recording/recorder.ts";
import { RECORDING_FORMAT, RECORDING_VERSION, type RecordingEntry, recordingLine } from "../recording/recording.ts";
import {
  ComparingExecutor,
  convertAnswers,
  RecordedExecutor,
  recordingProtocol,
  ScriptedProvider,
} from "../recording/replay.ts";
import { availableActions, SliceRequest } from "../slice.ts";
import { ResultStore } from "../context/store.ts";
import { createTracer } from "../recording/trace.ts";
import { formatZodError } from "../text/zod-error.ts";
import { openLineSink, outputPathProblem } from "../io/files.ts";
import { captureBodies } from "../providers/http/capture-bodies.ts";
import { buildProvider } from "./create-provider.ts";
import type { RunHooks, RunInput } from "./run-options.ts";
import { ownFilesOf, requestSettings, type RunPlan, settledRequest, unpricedCap } from "./run-plan.ts";
import type { Resolved, RunSettings } from "../settings/settings.ts";
import type { HttpOptions } from "../providers/http/post-json.ts";
import { providerForModel } from "./provider-for-model.ts";
import { createWorkspaceExecutor } from "../workspace/create-workspace-executor.ts";
import type { WorkspaceExecutor } from "../workspace/workspace-executor.ts";
import type { SandboxState } from "../sandbox-state.ts";
import { redactHeld } from "../io/held-keys.ts";

type Prepared = { request: SliceRequest; settings: RunSettings; provider: Provider; executor: Executor };

/** Everything before the loop: routing, validation, workspace, provider, recording. Throws a LoomError to fail. */
export async function prepare(
  input: RunInput,
  { plan, hooks, known, store, now, sandbox, opened }: {
    plan: RunPlan;
    hooks: RunHooks;
    known: CatalogKnown;
    store: ResultStore;
    now: () => number;
    sandbox: { state: SandboxState | null; workspace?: WorkspaceExecutor; record?: RecordingSink };
    opened: Array<() => void>;
  },
): Promise<Prepared> {
  const env = hooks.env ?? process.env;
  const { settings: planned, outputs } = plan;
  // Entries made before the header can be written (the classification answer) wait for it.
  const pending: RecordingEntry[] = [];
  const record = (
    provider: Provider,
  ) => (outputs.record ? new RecordingProvider(provider, (e) => pending.push(e)) : provider);
  // With a trace, every provider this run makes (a catalog's classifier, the slice's model) is traced in one sequence,
  // its HTTP bodies captured as sent.
  const tracer = hooks.trace ? createTracer({ write: hooks.trace }) : null;
  const baseHttp: HttpOptions = {};
  const traced = (make: (http: HttpOptions) => Provider): Provider => {
    if (!tracer) return make(baseHttp);
    const bodies = captureBodies();
    return tracer.wrap(make({ ...baseHttp, fetch: bodies.fetch }), { takeBodies: bodies.take });
  };
  // The model table decides how each model is called; an id it does not know is said once, on the warning channel.
  const modelOptions = {
    models: plan.models,
    warn: warnOf(hooks),
  };
  if (!planned.ok) throw new StartupError(planned.message, planned.code);
  const userLevel = planned.plan;
  let request: SliceRequest;
  let settings: RunSettings;
  let provider = hooks.provider && tracer ? tracer.wrap(hooks.provider) : hooks.provider;
  let secretNames = plan.secretEnvNames;
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
    const routed = await planCatalogRun({ ...rest, name, catalog: readCatalog(rest.file, name) }, {
      settings: userLevel,
      known,
      contextReport: outputs.contextReport,
      provider: (model) => record(traced((http) => buildProvider(model, { env, ...modelOptions, ...http }))),
      now,
      signal: hooks.signal,
      reportPathProblem: outputPathProblem,
      onRouting: hooks.onRouting,
    });
    if (!routed.ok) throw routed.error;
    request = routed.request;
    settings = routed.settings;
    sliceSource = `${name} (slice ${known.slice})`;
    const model = routed.settings.provider;
    if (model === null) throw new Error("a routed catalog run has its model's settings");
    provider ??= traced((http) => buildProvider(model, { env, ...modelOptions, ...http }));
    secretNames = [...secretNames, ...routed.secretEnvNames];
  }
  known.stepProtocol = settings.step_protocol.value;
  request = settledRequest(request, settings);
  const uncapped = unpricedCap(request, plan.prices);
  if (uncapped) throw uncapped;
  const replay = hooks.replay;
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

  let executor = hooks.executor?.(store);
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
      ownFiles: ownFilesOf(outputs, known),
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
  if (outputs.record) {
    const sink = openRecording(outputs.record, { request, sliceName: known.slice, pending, opened });
    sandbox.record = sink;
    provider = new RecordingProvider(provider, sink);
    executor = new RecordingExecutor(executor, sink, { store });
  }
  return { request, settings, provider, executor };
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

/** Where a run's warnings go: the caller's function, else stderr; whichever, a held key never shows. */
export function warnOf(hooks: Pick<RunHooks, "warn">): (message: string) => void {
  const warn = hooks.warn ?? ((message: string) => process.stderr.write(`loom: ${message}\n`));
  return (message) => warn(redactHeld(message));
}
