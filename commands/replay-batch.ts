// Batch replay: N worker processes (this same binary), a progress line on stderr, per-file reports and one
// aggregate report. For more than one machine, run the binary under an existing job runner (see README).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { outputFolderProblem, writeFileAtomic } from "../lib/adapters/files.ts";
import { selfCommand } from "../lib/adapters/platform.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { aggregateReports, ContextReport, requestBytes } from "../lib/context-report.ts";
import { UsageError } from "../lib/errors.ts";
import { VERSION } from "../lib/version.ts";
import type { Io } from "./io.ts";
import type { BatchSummary, Reporter } from "./reporter.ts";

export type BatchOptions = {
  io: Io;
  reporter: Reporter;
  jobs: number;
  from: string;
  policy: ContextPolicyName;
  reportPath?: string;
  reportsDir?: string;
};

type RunRow = {
  file: string;
  name: string;
  exit: number;
  report: ContextReport | null;
  reportPath: string;
  stderr: string;
};

const MAIN_URL = new URL("../main.ts", import.meta.url).href;

export async function replayBatch(files: string[], options: BatchOptions): Promise<number> {
  // Per-recording reports go beside the aggregate; with no report asked for, into a temporary folder removed after.
  const keep = options.reportsDir !== undefined || options.reportPath !== undefined;
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

async function batch(files: string[], options: BatchOptions, reportsDir: string, keep: boolean): Promise<number> {
  const { io, jobs, from, policy } = options;
  const self = selfCommand(MAIN_URL);
  const rows: RunRow[] = new Array(files.length);
  let next = 0, done = 0, failed = 0;
  const progress = () =>
    options.reporter.batchProgress({ done, total: files.length, failed, running: Math.min(jobs, files.length - done) });
  const worker = async () => {
    while (next < files.length && !io.signal.aborted) {
      const index = next++;
      const file = files[index];
      const name = basename(file);
      const reportPath = join(reportsDir, reportName(name, { index, count: files.length }));
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
        "--context-report",
        reportPath,
        "--json",
        "--quiet",
      ];
      const { exit, stderr } = await runChild(self[0], args, io.signal);
      let report: ContextReport | null = null;
      try {
        report = ContextReport.parse(JSON.parse(readFileSync(reportPath, "utf8")));
      } catch { /* the child failed before a report existed; its stderr says why */ }
      rows[index] = { file, name, exit, report, reportPath, stderr };
      done++;
      if (report?.outcome !== "completed") failed++;
      progress();
    }
  };
  progress();
  await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, worker));
  const finished = rows.filter((r): r is RunRow & { report: ContextReport } => r !== undefined && r.report !== null);
  const aggregate = aggregateReports(
    finished.map((r) => ({ name: r.name, path: r.reportPath, report: r.report })),
    { version: VERSION, policy },
  );
  if (options.reportPath) writeFileAtomic(options.reportPath, `${JSON.stringify(aggregate, null, 2)}\n`);
  const failures = rows.filter((r) => r && !r.report);
  const summary: BatchSummary = {
    recordings: files.length,
    completed: aggregate.outcomes.completed ?? 0,
    outcomes: aggregate.outcomes,
    unreadable: failures.map((r) => r.name),
    model_calls: aggregate.model_calls,
    request_bytes: requestBytes(aggregate.phases).total,
    checkpoints: aggregate.checkpoints,
    report_path: options.reportPath ?? null,
    reports_dir: keep ? reportsDir : null,
  };
  return options.reporter.batch(summary, { policy, aggregate, failures, interrupted: io.signal.aborted });
}

/**
 * The per-recording report's file name: its position in the batch, then the recording's name, so recordings with the
 * same name in different folders keep one report each ("01-fix-bug.json", "02-fix-bug.json").
 */
export function reportName(file: string, { index, count }: { index: number; count: number }): string {
  const position = String(index + 1).padStart(String(count).length, "0");
  return `${position}-${file.replace(/\.[^.]+$/, "")}.json`;
}

function runChild(command: string, args: string[], signal: AbortSignal): Promise<{ exit: number; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    const onAbort = () => child.kill("SIGTERM");
    signal.addEventListener("abort", onAbort, { once: true });
    child.on("error", (error) => {
      signal.removeEventListener("abort", onAbort);
      resolvePromise({ exit: 127, stderr: error.message });
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", onAbort);
      resolvePromise({ exit: code ?? 1, stderr });
    });
  });
}
