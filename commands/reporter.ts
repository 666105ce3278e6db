// The one reporter: the only place that turns results into output and chooses between text and JSON (or HTML). Data
// goes to stdout, progress and errors to stderr; each method returns the exit code the result already carries.
import { resolve } from "node:path";
import { writeFileAtomic } from "../lib/adapters/files.ts";
import type { RunResult } from "../lib/adapters/start-run.ts";
import type { RoutingNote } from "../lib/catalog-plan.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { type AggregateReport, requestBytes } from "../lib/context-report.ts";
import { errorMessage, InterruptedError, type LoomError, UsageError } from "../lib/errors.ts";
import type { Progress } from "../lib/stage.ts";
import { EXIT_CODES, type Outcome } from "../lib/outcome.ts";
import { renderReportHtml } from "../lib/report-html.ts";
import type { NamedReport } from "../lib/report-load.ts";
import { renderSummaryText, summarizeReports } from "../lib/report-summary.ts";
import type { Io } from "./io.ts";

export type OutputFormat = "text" | "json" | { html: string };

export type ResultSummary = {
  outcome: string;
  exit_code: number;
  slice: string | null;
  status: string | null;
  summary: string | null;
  steps: number;
  revision: string;
  last_test: { revision: string; exit_code: number | null; timed_out: boolean } | null;
  tests_current: boolean;
  printed: string[];
  error: { code: string; message: string } | null;
  model_calls: number;
  request_bytes: { total: number; max: number };
  report_path: string | null;
  replay?: { compared: number; differing_steps: number[] };
  route?: { via: string; rule: number | null } | null;
};

export type BatchSummary = {
  recordings: number;
  completed: number;
  outcomes: Record<string, number>;
  unreadable: string[];
  model_calls: number;
  request_bytes: number;
  checkpoints: number;
  report_path: string | null;
  reports_dir: string | null;
};

export class Reporter {
  readonly #io: Io;
  readonly #format: OutputFormat;
  readonly #quiet: boolean;
  readonly #command: string;

  constructor(io: Io, { command, format = "text", quiet = false }: {
    command: string;
    format?: OutputFormat;
    quiet?: boolean;
  }) {
    this.#io = io;
    this.#command = command;
    this.#format = format;
    this.#quiet = quiet;
  }

  /** Step progress on stderr: one live line on a terminal, plain lines otherwise; none when quiet. */
  get progress(): ((p: Progress) => void) | undefined {
    if (this.#quiet) return undefined;
    return (p) => {
      const line = `step ${p.step}/${p.max_steps} ${p.phase} ${n(p.request_bytes)} B${
        p.checkpoint ? " (checkpoint)" : ""
      }`;
      this.#io.stderr(this.#io.isTTY ? `\r\x1b[2K${line}` : `${line}\n`);
    };
  }

  /** How a catalog run is being routed, on stderr. */
  routing(note: RoutingNote): void {
    if (this.#quiet) return;
    if (note.kind === "classification") {
      this.#io.stderr(`classification ${n(note.bytes)} B (${plural(note.candidates.length, "candidate slice")})\n`);
      return;
    }
    const { slice, via, rule } = note.route;
    const how = via === "pattern" ? `pattern rule ${(rule ?? 0) + 1}` : via === "slice_flag" ? "--slice" : via;
    this.#io.stderr(`route: ${slice} (${how})\n`);
  }

  /** A run's result: one JSON object or a few lines on stdout, its error on stderr. */
  run(result: RunResult, { label }: { label: string }): number {
    this.#endProgress();
    const summary = summarizeResult(result);
    if (this.#format === "json") this.#io.stdout(`${JSON.stringify(summary)}\n`);
    else if (!neverStarted(result)) this.#io.stdout(renderResultText(summary, { label }));
    const differing = result.replay?.differing_steps ?? [];
    if (result.outcome === "completed" && differing.length > 0) {
      this.#error(
        `step${differing.length === 1 ? "" : "s"} ${differing.join(", ")} executed differently from the recording`,
      );
    } else if (result.error && result.exit_code !== 0) this.#error(result.error.message);
    return result.exit_code;
  }

  /**
   * A run that could not even be described (its request file unreadable or invalid, or an interrupt while reading
   * it): no report, the error's own exit code, and with --json still one result object.
   */
  unstarted(error: LoomError): number {
    if (this.#format === "json") {
      const outcome: Outcome = error instanceof InterruptedError ? "interrupted" : "startup_failed";
      const summary: ResultSummary = {
        outcome,
        exit_code: error.exitCode,
        slice: null,
        status: null,
        summary: null,
        steps: 0,
        revision: "r0",
        last_test: null,
        tests_current: false,
        printed: [],
        error: { code: error.code, message: error.message },
        model_calls: 0,
        request_bytes: { total: 0, max: 0 },
        report_path: null,
      };
      this.#io.stdout(`${JSON.stringify(summary)}\n`);
    }
    this.#error(error.message);
    return error.exitCode;
  }

  /** A batch's progress on stderr: one live line on a terminal; in a log, a line every tenth of the batch. */
  batchProgress({ done, total, failed, running }: { done: number; total: number; failed: number; running: number }) {
    if (this.#quiet) return;
    const step = Math.max(1, Math.floor(total / 10));
    if (!this.#io.isTTY && done !== 0 && done !== total && done % step !== 0) return;
    const line = `replay ${done}/${total} done, ${failed} not completed, ${running} running`;
    this.#io.stderr(this.#io.isTTY ? `\r\x1b[2K${line}` : `${line}\n`);
  }

  /** A batch replay: totals on stdout, each unreadable recording's last error line on stderr. */
  batch(
    summary: BatchSummary,
    { policy, aggregate, failures, interrupted }: {
      policy: ContextPolicyName;
      aggregate: AggregateReport;
      failures: { name: string; exit: number; stderr: string }[];
      interrupted: boolean;
    },
  ): number {
    this.#endProgress();
    for (const row of failures) {
      const last = row.stderr.trim().split("\n").pop()?.replace(/^loom replay: /, "") ?? "";
      this.#error(last.startsWith(`${row.name}:`) ? last : `${row.name}: ${last || `exit ${row.exit}`}`);
    }
    if (this.#format === "json") this.#io.stdout(`${JSON.stringify(summary)}\n`);
    else {
      const outcomes = Object.entries(aggregate.outcomes).map(([k, v]) => `${v} ${k}`).join(", ") || "none";
      this.#io.stdout(
        `replayed ${plural(summary.recordings, "recording")} (${policy}): ${outcomes}` +
          `${summary.unreadable.length ? `, ${summary.unreadable.length} unreadable` : ""}\n` +
          `  ${plural(summary.model_calls, "model call")}, ${plural(summary.request_bytes, "request byte")}, ${
            plural(summary.checkpoints, "checkpoint")
          }\n` +
          (summary.report_path ? `  aggregate report: ${summary.report_path}\n` : "") +
          (summary.reports_dir ? `  per-recording reports: ${summary.reports_dir}\n` : ""),
      );
    }
    // Unreadable recordings have no report, so they count as not completed too.
    const ending = interrupted ? "interrupted" : summary.completed === summary.recordings ? "completed" : "failed";
    return EXIT_CODES[ending];
  }

  /** One report summarised or several compared: text, JSON, or a self-contained HTML page written to a file. */
  reports(reports: NamedReport[]): number {
    const format = this.#format;
    if (typeof format === "object") {
      try {
        writeFileAtomic(resolve(this.#io.cwd, format.html), renderReportHtml(reports), { createFolders: false });
      } catch (error) {
        const code = (error as { code?: string }).code;
        throw new UsageError(
          `Cannot write ${JSON.stringify(format.html)}: ${
            code === "ENOENT" ? "no such directory" : code ?? errorMessage(error)
          }`,
        );
      }
      this.#io.stdout(`${format.html}\n`);
    } else {
      const doc = summarizeReports(reports);
      this.#io.stdout(format === "json" ? `${JSON.stringify(doc, null, 2)}\n` : renderSummaryText(doc));
    }
    return EXIT_CODES.completed;
  }

  /** Ends a live progress line before other output. */
  #endProgress(): void {
    if (this.#io.isTTY && !this.#quiet) this.#io.stderr("\r\x1b[2K");
  }

  #error(message: string): void {
    this.#io.stderr(`loom ${this.#command}: ${message}\n`);
  }
}

/** A run that ended before its first step: in text, its one error line on stderr says it all. */
function neverStarted(result: RunResult): boolean {
  const before: readonly string[] = ["startup_failed", "routing_failed", "interrupted"];
  return result.steps === 0 && before.includes(result.outcome);
}

export function summarizeResult(result: RunResult): ResultSummary {
  const bytes = requestBytes(result.report.phases);
  return {
    outcome: result.outcome,
    exit_code: result.exit_code,
    slice: result.report.slice,
    status: result.finish?.status ?? null,
    summary: result.finish?.summary ?? null,
    steps: result.steps,
    revision: result.revision,
    last_test: result.last_test
      ? {
        revision: result.last_test.revision,
        exit_code: result.last_test.exit_code,
        timed_out: result.last_test.timed_out,
      }
      : null,
    tests_current: result.tests_current,
    printed: result.printed,
    error: result.error,
    model_calls: result.report.model_calls,
    request_bytes: { total: bytes.total, max: bytes.max },
    report_path: result.report_path,
    ...(result.replay ? { replay: result.replay } : {}),
    ...(result.route !== undefined
      ? { route: result.route ? { via: result.route.via, rule: result.route.rule } : null }
      : {}),
  };
}

const n = (x: number) => x.toLocaleString("en-US");

/** "1 recording", "2 recordings", "1,024 request bytes". */
export function plural(count: number, noun: string, many = `${noun}s`): string {
  return `${n(count)} ${count === 1 ? noun : many}`;
}

export function renderResultText(s: ResultSummary, { label }: { label: string }): string {
  const lines: string[] = [];
  lines.push(
    `${label}: ${s.outcome}${s.status ? ` (${s.status})` : ""} after ${
      plural(s.steps, "step")
    }, revision ${s.revision}`,
  );
  if (s.summary) lines.push(`  summary: ${s.summary}`);
  for (const text of s.printed) lines.push(`  printed: ${text}`);
  if (s.last_test) {
    const t = s.last_test;
    lines.push(
      `  last test: ${t.timed_out ? "timed out" : `exit ${t.exit_code}`} on ${t.revision}${
        s.tests_current ? " (current)" : " (not current)"
      }`,
    );
  }
  if (s.error) lines.push(`  error: ${s.error.code}: ${s.error.message}`);
  lines.push(
    `  ${plural(s.model_calls, "model call")}, ${n(s.request_bytes.total)} request bytes (max ${
      n(s.request_bytes.max)
    })`,
  );
  if (s.replay) {
    lines.push(
      s.replay.differing_steps.length === 0
        ? `  re-executed: all ${s.replay.compared} execution reports equal the recording`
        : `  re-executed: ${s.replay.differing_steps.length === 1 ? "step" : "steps"} ${
          s.replay.differing_steps.join(", ")
        } ${s.replay.differing_steps.length === 1 ? "differs" : "differ"} from the recording`,
    );
  }
  if (s.report_path) lines.push(`  report: ${s.report_path}`);
  return `${lines.join("\n")}\n`;
}
