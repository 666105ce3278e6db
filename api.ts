// The library API: run(request) and runWithOptions(request, options). This is the composition root: it wires the
// pure loop to real effects (workspace executors, a provider, the clock, report and recording files).
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { WorkspaceExecutor } from "./lib/adapters/workspace-executor.ts";
import { providerForModel } from "./lib/adapters/providers/provider-for-model.ts";
import { DEFAULT_KEY_ENVS } from "./lib/providers/provider-config.ts";
import { openLineSink, writeFileAtomic } from "./lib/adapters/files.ts";
import type { ContextPolicyName } from "./lib/context.ts";
import { type CallRecord, type ContextReport, ReportBuilder } from "./lib/context-report.ts";
import { EXIT_CODES, InterruptedError, LoomError, RoutingError, StartupError } from "./lib/errors.ts";
import type { Executor } from "./lib/executor.ts";
import { type LoopResult, type Progress, runLoop } from "./lib/loop.ts";
import { RECORDING_FORMAT, RECORDING_VERSION, recordingLine } from "./lib/recording.ts";
import { SliceRequest } from "./lib/slice.ts";
import { ResultStore } from "./lib/store.ts";
export { ResultStore };
import type { Provider } from "./lib/turn.ts";
import { VERSION } from "./lib/version.ts";
import { formatZodError } from "./lib/zod-error.ts";

export type { ContextReport, Provider, SliceRequest };

export type RunOptions = {
  /** "legacy" (default) or "bounded". */
  contextPolicy?: ContextPolicyName;
  /** Write the context report here (atomically), for every outcome. */
  contextReport?: string;
  /** The model provider; default: the one the request's model ("PROVIDER/MODEL") names, keys from the environment. */
  provider?: Provider;
  /** Abort to interrupt: running processes are killed and the report still lands (outcome "interrupted"). */
  signal?: AbortSignal;
  /** Write a recorded workflow (JSONL) here. */
  record?: string;
  /** Replace the workspace executors (replay uses the recorded executor); gets the run's result store. */
  executor?: (store: ResultStore) => Executor;
  /** Catalog slice name, for the report. */
  slice?: string | null;
  now?: () => number;
  onProgress?: (progress: Progress) => void;
  archiveLimits?: { maxEvents?: number; maxBytes?: number };
  /** Environment variables never passed to test and command processes (e.g. a catalog's api_key_env names), on top
   * of the provider key variables and every name that looks like a credential. */
  secretEnvNames?: string[];
  /** Model calls made before the run (catalog classification), included in its report. */
  priorCalls?: CallRecord[];
  /** Recording header source, for imported trajectories. */
  source?: { format: string; name: string };
};

export type RunResult = Omit<LoopResult, "report"> & {
  exit_code: number;
  report: ContextReport;
  report_path: string | null;
};

/** Runs a slice with the legacy context policy. */
export function run(request: SliceRequest, options: Pick<RunOptions, "provider" | "signal"> = {}): Promise<RunResult> {
  return runWithOptions(request, options);
}

export async function runWithOptions(request: SliceRequest, options: RunOptions = {}): Promise<RunResult> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  try {
    return await start(request, options, now);
  } catch (error) {
    // A slice that could not start still leaves a report, when one was asked for.
    if (error instanceof LoomError && options.contextReport && !(error instanceof InterruptedError)) {
      writeFailureReport(options.contextReport, {
        policy: options.contextPolicy ?? "legacy",
        slice: options.slice ?? null,
        outcome: error instanceof RoutingError ? "routing_failed" : "startup_failed",
        error: { code: error.code, message: error.reportMessage },
        priorCalls: options.priorCalls ?? [],
        elapsedMs: Math.max(0, now() - started),
      });
    }
    throw error;
  }
}

export type FailureReportFields = {
  policy: ContextPolicyName;
  slice: string | null;
  outcome: "startup_failed" | "routing_failed" | "interrupted";
  error: { code: string; message: string };
  priorCalls: CallRecord[];
  elapsedMs: number;
};

/** The report of a run that never reached the loop (startup or routing failure, or an interrupt before it). */
export function failureReport(
  { policy, slice, outcome, error, priorCalls, elapsedMs }: FailureReportFields,
): ContextReport {
  const builder = new ReportBuilder({ policy, version: VERSION, slice });
  for (const call of priorCalls) builder.recordCall(call);
  return builder.finish({ outcome, error, totalElapsedMs: elapsedMs });
}

/** Builds and writes (atomically) the report of a run that never reached the loop. */
export function writeFailureReport(path: string, fields: FailureReportFields): ContextReport {
  const report = failureReport(fields);
  writeFileAtomic(path, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

async function start(request: SliceRequest, options: RunOptions, now: () => number): Promise<RunResult> {
  const parsed = SliceRequest.safeParse(request);
  if (!parsed.success) {
    throw new StartupError(`Invalid SliceRequest: ${formatZodError(parsed.error)}`, "invalid_request");
  }
  const slice = parsed.data;
  const store = new ResultStore();
  let executor = options.executor?.(store);
  if (!executor) {
    const root = resolve(slice.workspace);
    let isDir = false;
    try {
      isDir = statSync(root).isDirectory();
    } catch { /* reported below */ }
    if (!isDir) {
      throw new StartupError(`Workspace ${JSON.stringify(slice.workspace)} is not a directory`, "workspace_missing");
    }
    executor = new WorkspaceExecutor({
      root,
      store,
      test: slice.test,
      commands: slice.commands ?? [],
      commandTimeoutMs: slice.limits.command_timeout_ms ?? slice.test.timeout_ms,
      secretEnvNames: secretEnvNames(options.secretEnvNames),
    });
  }
  // Without an explicit provider, the request's "PROVIDER/MODEL" names one; credentials come from the environment.
  const provider = options.provider ?? providerForModel(slice.model, { env: process.env });

  let recorder;
  if (options.record) {
    let write: (line: string) => void;
    try {
      write = openLineSink(options.record);
    } catch (error) {
      throw new StartupError(
        `Cannot write the recording ${JSON.stringify(options.record)}: ${ioCode(error)}`,
        "record_unwritable",
      );
    }
    const { workspace: _, ...recordedSlice } = slice;
    write(recordingLine({
      type: "header",
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      slice: recordedSlice,
      ...(options.slice ? { slice_name: options.slice } : {}),
      ...(options.source ? { source: options.source } : {}),
    }));
    const append = (entry: Parameters<typeof recordingLine>[0]) => write(recordingLine(entry));
    recorder = { answer: append, execution: append };
  }

  try {
    const result = await runLoop(slice, {
      policy: options.contextPolicy ?? "legacy",
      provider,
      executor,
      store,
      now,
      version: VERSION,
      signal: options.signal,
      slice: options.slice ?? null,
      archiveLimits: options.archiveLimits,
      onProgress: options.onProgress,
      recorder,
      priorCalls: options.priorCalls,
    });
    if (options.contextReport) {
      try {
        writeFileAtomic(options.contextReport, `${JSON.stringify(result.report, null, 2)}\n`);
      } catch (error) {
        throw new LoomError(
          "report_unwritable",
          `Cannot write the context report ${JSON.stringify(options.contextReport)}: ${ioCode(error)}`,
        );
      }
    }
    return { ...result, exit_code: EXIT_CODES[result.outcome], report_path: options.contextReport ?? null };
  } finally {
    store.clear();
  }
}

function ioCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
}

/** The credential variables a child process must never see: the providers' key variables plus the given names. */
export function secretEnvNames(extra: readonly string[] = []): string[] {
  const defaults = Object.values(DEFAULT_KEY_ENVS).filter((name): name is string => name !== null);
  return [...new Set([...defaults, ...extra])];
}
