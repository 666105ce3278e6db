// Batch replay: N worker processes (this same binary), a progress line on stderr, per-file reports and one
// aggregate report. For more than one machine, run the binary under an existing job runner (see README).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { outputFolderProblem, writeFileAtomic } from "../lib/io/files.ts";
import { selfCommand } from "../lib/io/platform.ts";
import type { ContextPolicyName, PreviewMode, StepProtocol } from "../lib/policy.ts";
import { type BatchSettings, recordingSettings, reportName, settingsMismatch } from "../lib/recording/batch.ts";
import { parseRecordingText } from "../lib/recording/format.ts";
import { aggregateReports, type ContextReport, requestBytes } from "../lib/report/context-report.ts";
import { parseRunReport } from "../lib/report/load.ts";
import { UsageError } from "../lib/errors.ts";
import { endingOf } from "../lib/ending.ts";
import { VERSION } from "../lib/version.ts";
import type { Io } from "./io.ts";
import type { BatchRunRow, BatchSummary, Reporter } from "./reporter.ts";

export type BatchOptions = {
  io: Io;
  reporter: Reporter;
  jobs: number;
  from: string;
  policy: ContextPolicyName;
  /** --step-protocol and --previews, when given: each child replay gets them, and --resume compares them. */
  stepProtocol?: StepProtocol;
  previewMode?: PreviewMode;
  /** --require-passing-tests: each child replay gets it. */
  requirePassingTests?: boolean;
  reportPath?: string;
  reportsDir?: string;
  /** Skip recordings whose per-recording report already exists and is complete. */
  resume?: boolean;
  /** The clock for elapsed time and ETA (tests pass a fake). */
  now?: () => number;
};

type RunRow = {
  file: string;
  name: string;
  exit: number;
  report: ContextReport | null;
  reportPath: string;
  stderr: string;
  /** The child's --json result (status, summary, error), when it printed one. */
  result: { status?: string | null; summary?: string | null; error?: { code: string; message: string } | null } | null;
  /** Taken from an earlier run's report (--resume): not replayed again. */
  resumed: boolean;
};

const MAIN_URL = new URL("../main.ts", import.meta.url).href;

/** The default --jobs: one worker per CPU. */
export function defaultJobs(): number {
  return Math.max(1, typeof availableParallelism === "function" ? availableParallelism() : cpus().length);
}

export async function replayBatch(files: string[], options: BatchOptions): Promise<number> {
  // Per-recording reports go beside the aggregate; with no report asked for, into a temporary folder removed after.
  const keep = options.reportsDir !== undefined || options.reportPath !== undefined;
  if (options.resume && !keep) {
    throw new UsageError("--resume needs --context-report PATH or --reports-dir DIR (where the earlier reports are)");
  }
  const beside = options.reportPath &&
    join(dirname(options.reportPath), `${basename(options.reportPath, ".json")}.runs`);
  const problem = options.reportsDir === undefined && beside ? outputFolderProblem(beside) : null;
  if (problem) {
    throw new UsageError(
      `The per-recording reports folder ${JSON.stringify(beside)}: ${problem} (pass --reports-dir DIR)`,
    );
  }
  const reportsDir = options.reportsDir ?? (beside || mkdtempSync(join(tmpdir(), "loom-replay-")));
  mkdirSync(reportsDir, { recursive: true });
  try {
    return await batch(files, options, reportsDir, keep);
  } finally {
    if (!keep) rmSync(reportsDir, { recursive: true, force: true });
  }
}

/** A per-recording report left by an earlier batch that ran to an end (any outcome but interrupted), or null. */
function completeReport(path: string): ContextReport | null {
  try {
    const report = parseRunReport(readFileSync(path, "utf8"), { file: path });
    return report.outcome === "interrupted" ? null : report;
  } catch {
    return null;
  }
}

/** The status and summary of a recording's last finish (what a completed replay of it ended with); null if none. */
function recordedFinish(file: string, from: string): RunRow["result"] {
  try {
    const recording = parseRecordingText(readFileSync(file, "utf8"), { name: basename(file), from });
    const finish = recording.executions.findLast((e) => e.report.kind === "finish")?.report;
    return finish?.kind === "finish" ? { status: finish.status, summary: finish.summary, error: null } : null;
  } catch {
    return null;
  }
}

/** What a replay of `file` is made under besides the policy and version (see recordingSettings). */
function fileSettings(
  file: string,
  flags: Pick<BatchOptions, "stepProtocol" | "previewMode">,
): Pick<BatchSettings, "recording" | "protocol" | "previews"> {
  let text: string | null = null;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    // unreadable: matches no report
  }
  return recordingSettings(text, flags);
}

async function batch(files: string[], options: BatchOptions, reportsDir: string, keep: boolean): Promise<number> {
  const { io, jobs, from, policy } = options;
  const now = options.now ?? Date.now;
  const self = selfCommand(MAIN_URL);
  const [program] = self;
  // Not a sparse array: filter() and map() must see the recordings that never started.
  const rows: (RunRow | undefined)[] = Array.from({ length: files.length }, () => undefined);
  const reportPathOf = (index: number) =>
    join(reportsDir, reportName(basename(files[index] ?? ""), { index, count: files.length }));
  let resumed = 0;
  if (options.resume) {
    const refused: string[] = [];
    files.forEach((file, index) => {
      const reportPath = reportPathOf(index);
      const report = completeReport(reportPath);
      if (!report) return;
      const mismatch = settingsMismatch(report, { policy, version: VERSION, ...fileSettings(file, options) });
      if (mismatch) {
        refused.push(`${JSON.stringify(reportPath)} was ${mismatch}`);
        return;
      }
      rows[index] = {
        file,
        name: basename(file),
        exit: endingOf({ ran: report.outcome, errorCode: report.error?.code }).exitCode,
        report,
        reportPath,
        stderr: "",
        // The report holds measurements only; the finish a resumed row shows is the recording's own, which a replay
        // of it reproduces (the recorded answers drive it).
        result: report.outcome === "completed" ? recordedFinish(file, from) : null,
        resumed: true,
      };
      resumed++;
    });
    if (refused.length > 0) {
      throw new UsageError(
        `--resume: ${refused[0]}${
          refused.length > 1 ? ` (and ${refused.length - 1} more)` : ""
        }; replay into another --reports-dir, or without --resume to replace them`,
      );
    }
  }
  const pending = files.map((_, i) => i).filter((i) => rows[i] === undefined);
  const started = now();
  const running = new Set<number>();
  let next = 0, done = 0, failed = 0;
  const progress = () =>
    options.reporter.batchProgress({
      done,
      total: pending.length,
      failed,
      running: running.size,
      elapsedMs: now() - started,
      // The file shown is the oldest still running: the one most likely to be holding the batch up.
      current: running.size > 0 ? basename(files[Math.min(...running)] ?? "") : null,
    });
  const worker = async () => {
    while (next < pending.length && !io.signal.aborted) {
      const index = pending[next++];
      const file = index === undefined ? undefined : files[index];
      if (index === undefined || file === undefined) break;
      const name = basename(file);
      const reportPath = reportPathOf(index);
      // A child that fails before writing its report must not be read as an earlier batch's run.
      rmSync(reportPath, { force: true });
      const args = [
        ...self.slice(1),
        "replay",
        file,
        "--from",
        from,
        "--context-policy",
        policy,
        ...(options.stepProtocol ? ["--step-protocol", options.stepProtocol] : []),
        ...(options.previewMode ? ["--previews", options.previewMode] : []),
        ...(options.requirePassingTests ? ["--require-passing-tests"] : []),
        "--context-report",
        reportPath,
        "--json",
        "--quiet",
      ];
      running.add(index);
      if (io.isTTY) progress();
      const { exit, stdout, stderr } = await runChild(program, args, io.signal);
      running.delete(index);
      let report: ContextReport | null = null;
      try {
        report = parseRunReport(readFileSync(reportPath, "utf8"), { file: reportPath });
      } catch { /* the child failed before a report existed; its stderr says why */ }
      let result: RunRow["result"] = null;
      try {
        result = JSON.parse(stdout);
      } catch { /* no result object (killed) */ }
      rows[index] = { file, name, exit, report, reportPath, stderr, result, resumed: false };
      done++;
      if (report?.outcome !== "completed") failed++;
      progress();
    }
  };
  if (options.resume) options.reporter.resuming({ resumed, pending: pending.length });
  progress();
  // On a terminal the live line's clock keeps ticking between finished recordings.
  const ticker = io.isTTY ? setInterval(progress, 1000) : undefined;
  try {
    await Promise.all(Array.from({ length: Math.min(jobs, pending.length) }, worker));
  } finally {
    if (ticker) clearInterval(ticker);
  }

  const interrupted = io.signal.aborted;
  // Rows of recordings a signal stopped mid-run: no report, or a report that says interrupted.
  const stopped = (r: RunRow) => interrupted && (r.report === null || r.report.outcome === "interrupted");
  const finished = rows.filter((r): r is RunRow & { report: ContextReport } => r !== undefined && r.report !== null);
  const aggregate = aggregateReports(
    finished.map((r) => ({ name: r.name, path: r.reportPath, report: r.report })),
    { version: VERSION, policy },
  );
  if (options.reportPath) writeFileAtomic(options.reportPath, `${JSON.stringify(aggregate, null, 2)}\n`);
  const failures = rows.filter((r): r is RunRow => r !== undefined && !r.report && !stopped(r));
  const summary: BatchSummary = {
    recordings: files.length,
    jobs,
    completed: aggregate.outcomes.completed ?? 0,
    outcomes: aggregate.outcomes,
    unreadable: failures.map((r) => r.name),
    interrupted: interrupted
      ? {
        running: rows.filter((r) => r !== undefined && stopped(r)).length,
        never_started: rows.filter((r) => r === undefined).length,
      }
      : null,
    resumed,
    model_calls: aggregate.model_calls,
    request_bytes: requestBytes(aggregate.phases).total,
    checkpoints: aggregate.checkpoints,
    report_path: options.reportPath ?? null,
    reports_dir: keep ? reportsDir : null,
    runs: files.map((file, index) => runRow(file, rows[index], { keep, interrupted })),
  };
  return options.reporter.batch(summary, { policy, aggregate, failures, interrupted });
}

/** One per-run row of `--json`: what happened to the recording, whether it ran, resumed, failed to read or never started. */
function runRow(
  file: string,
  row: RunRow | undefined,
  { keep, interrupted }: { keep: boolean; interrupted: boolean },
): BatchRunRow {
  if (row === undefined) {
    return {
      file,
      outcome: "never_started",
      exit_code: null,
      status: null,
      summary: null,
      model_calls: 0,
      request_bytes: 0,
      report: null,
      error: null,
      resumed: false,
    };
  }
  const report = row.report;
  const bytes = report ? requestBytes(report.phases).total : 0;
  const lastError = row.stderr.trim().split("\n").pop()?.replace(/^loom replay: /, "") || null;
  return {
    file,
    outcome: report?.outcome ?? (interrupted ? "interrupted" : "unreadable"),
    exit_code: row.exit,
    status: row.result?.status ?? null,
    summary: row.result?.summary ?? null,
    model_calls: report?.model_calls ?? 0,
    request_bytes: bytes,
    report: report && keep ? row.reportPath : null,
    error: report?.error ?? row.result?.error ??
      (report ? null : lastError ? { code: "unreadable", message: lastError } : null),
    resumed: row.resumed,
  };
}

function runChild(
  command: string,
  args: string[],
  signal: AbortSignal,
): Promise<{ exit: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    // "pipe" makes both streams (node's type cannot tell): the one spot they are taken for granted.
    const [out, err] = [child.stdout, child.stderr];
    if (out === null || err === null) throw new Error("spawn with pipes gave no pipes");
    out.setEncoding("utf8");
    out.on("data", (chunk: string) => {
      if (stdout.length < 1024 * 1024) stdout += chunk;
    });
    err.setEncoding("utf8");
    err.on("data", (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    const onAbort = () => child.kill("SIGTERM");
    signal.addEventListener("abort", onAbort, { once: true });
    child.on("error", (error) => {
      signal.removeEventListener("abort", onAbort);
      resolvePromise({ exit: 127, stdout, stderr: error.message });
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", onAbort);
      resolvePromise({ exit: code ?? 1, stdout, stderr });
    });
  });
}
