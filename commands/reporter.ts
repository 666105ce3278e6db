// The one reporter: the only place that turns results into output and chooses between text and JSON (or HTML). Data
// goes to stdout, progress and errors to stderr; each method returns the exit code the result already carries.
import { clipEnd } from "../lib/text/clip.ts";
import { dirname, relative, resolve } from "node:path";
import { writeFileAtomic } from "../lib/io/files.ts";
import type { RunResult } from "../lib/run/start-run.ts";
import type { RoutingNote } from "../lib/catalog/plan.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { type AggregateReport, requestBytes } from "../lib/report/context-report.ts";
import { describeFsError, errorMessage, type LoomError, UsageError } from "../lib/errors.ts";
import { endingOf, INTERNAL_ERROR } from "../lib/ending.ts";
import type { Progress } from "../lib/run-events.ts";
import type { Transcript } from "../lib/report/transcript.ts";
import { OUTPUT_FORMAT_VERSION, type RunEvent, type RunResultEvent } from "../lib/run-events.ts";
import { NULL_USAGE } from "../lib/vocabulary/turn.ts";
import { NOT_STARTED } from "../lib/loop/loop.ts";
import { BEFORE_A_STEP, type Outcome } from "../lib/outcome.ts";
import { renderReportHtml } from "../lib/report/html.ts";
import type { NamedReport } from "../lib/report/load.ts";
import { summarizeReports } from "../lib/report/summary.ts";
import { renderSummaryText } from "../lib/report/summary-text.ts";
import { changedFilesText } from "../lib/report/report-text.ts";
import type { Io } from "./io.ts";
import type { OUTPUT_FORMATS } from "./specs.ts";
import { escapeControl } from "../lib/text/safe-text.ts";
import { formatCount, plural, someSteps } from "../lib/text/numbers.ts";
import { unverifiedReason } from "../lib/context/briefing.ts";
import type { EvalFile } from "../lib/eval/eval-file.ts";
import { renderEvalText, whatNext } from "../lib/eval/render.ts";
import { renderEvalHtml } from "../lib/eval/render-html.ts";
import type { TaskValidation } from "../lib/eval/run/eval-validate.ts";

export type OutputFormat = (typeof OUTPUT_FORMATS)[number] | { html: string };

/** The result object of --output-format json, and the last line of stream-json. */
export type ResultSummary = RunResultEvent;

/** One recording of a batch, as `--json` lists it. */
export type BatchRunRow = {
  file: string;
  /** The run's outcome, or "unreadable" (no report: the child failed to read it), or "interrupted"/"never_started". */
  outcome: string;
  exit_code: number | null;
  status: string | null;
  /** The finish summary, whole (text output clips it). */
  summary: string | null;
  model_calls: number;
  request_bytes: number;
  /** Its per-recording report, when the batch keeps them. */
  report: string | null;
  error: { code: string; message: string } | null;
  /** Taken from an earlier batch's complete report (--resume), not replayed again. */
  resumed: boolean;
};

export type BatchSummary = {
  recordings: number;
  jobs: number;
  completed: number;
  outcomes: Record<string, number>;
  unreadable: string[];
  /** When a signal stopped the batch: recordings stopped mid-run, and recordings never started. */
  interrupted: { running: number; never_started: number } | null;
  resumed: number;
  model_calls: number;
  request_bytes: number;
  checkpoints: number;
  report_path: string | null;
  reports_dir: string | null;
  runs: BatchRunRow[];
};

/** Plain (non-terminal) batch progress: at most one line per this many milliseconds, plus every tenth of the batch. */
const PLAIN_PROGRESS_EVERY_MS = 10_000;

export class Reporter {
  readonly #io: Io;
  readonly #format: OutputFormat;
  readonly #quiet: boolean;
  readonly #command: string;
  #plainProgress = { at: -Infinity, tenth: -1 };

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

  /**
   * Step progress on stderr, none when quiet. On a terminal one live line: the model call in flight, or the action
   * running with its elapsed seconds, redrawn every second (`step 4/30 run_tests 12 s`). Without a terminal one line
   * per step, when its action starts (a log, not a ticker).
   */
  get progress(): ((p: Progress) => void) | undefined {
    if (this.#quiet) return undefined;
    return (p) => {
      this.#stopTicker();
      if (p.phase === "execution") {
        const line = `step ${p.step}/${p.max_steps} ${p.action ?? "action"}`;
        if (!this.#io.isTTY) {
          this.#io.stderr(`${escapeControl(line)}\n`);
          return;
        }
        const started = Date.now();
        const draw = () => this.#io.stderr(this.#live(`${line} ${Math.floor((Date.now() - started) / 1000)} s`));
        draw();
        this.#ticker = setInterval(draw, 1000);
        // Never what keeps the process alive.
        (this.#ticker as { unref?: () => void }).unref?.();
        return;
      }
      if (!this.#io.isTTY) return;
      const line = `step ${p.step}/${p.max_steps} ${p.phase} ${n(p.request_bytes)} B${
        p.checkpoint ? " (checkpoint)" : ""
      }${costSoFar(p)}`;
      this.#io.stderr(this.#live(line));
    };
  }

  #ticker: ReturnType<typeof setInterval> | null = null;

  #stopTicker(): void {
    if (this.#ticker !== null) clearInterval(this.#ticker);
    this.#ticker = null;
  }

  /** Each event of a run, one JSON line on stdout, with --output-format stream-json; nothing otherwise. */
  get onEvent(): ((event: RunEvent) => void) | undefined {
    if (this.#format !== "stream-json") return undefined;
    return (event) => this.#io.stdout(`${JSON.stringify(event)}\n`);
  }

  /** How a catalog run is being routed, on stderr (the lifecycle's route-chosen event says it in stream-json). */
  routing(note: RoutingNote): void {
    if (this.#quiet) return;
    if (note.kind === "classification") {
      this.#io.stderr(`classification ${n(note.bytes)} B (${plural(note.candidates.length, "candidate slice")})\n`);
      return;
    }
    const { slice, via, rule } = note.route;
    const how = via === "pattern" ? `pattern rule ${(rule ?? 0) + 1}` : via === "slice_flag" ? "--slice" : via;
    this.#io.stderr(`route: ${escapeControl(slice)} (${how})\n`);
  }

  /** A run's result: one JSON object or a few lines on stdout, its error on stderr. */
  run(
    result: RunResult,
    { label, uncompared = [] }: {
      label: string;
      /** A replay with --execute: steps executed that the recording holds no execution report of (not compared). */
      uncompared?: readonly number[];
    },
  ): number {
    this.#endProgress();
    const summary = summarizeResult(result);
    if (this.#format === "json" || this.#format === "stream-json") this.#io.stdout(`${JSON.stringify(summary)}\n`);
    else if (!neverStarted(result)) {
      this.#io.stdout(
        renderResultText(summary, {
          label,
          recorded: result.report.recording !== undefined,
          uncompared,
          ownFiles: (result.report.step_log ?? []).filter((s) => s.refusal === "loom_file"),
        }),
      );
    }
    const differing = result.replay?.differing_steps ?? [];
    if (result.outcome === "completed" && differing.length > 0) {
      this.#error(
        `${someSteps(differing)} executed differently from the recording`,
      );
    } else if (result.error && result.exit_code !== 0) this.#error(result.error.message);
    return result.exit_code;
  }

  /**
   * A run that could not even be described (its request file unreadable or invalid, or an interrupt while reading
   * it): no report, the error's own exit code, and with --json still one result object.
   */
  unstarted(error: LoomError): number {
    const { outcome, exitCode } = endingOf({ threw: error });
    this.#resultWithoutRun({ outcome, exitCode, error: { code: error.code, message: error.message } });
    this.#error(error.message);
    return exitCode;
  }

  /** Bad command-line input (exit 2): one line on stderr and, with json or stream-json, still one result object. */
  usageError(error: LoomError): number {
    const { exitCode } = endingOf({ threw: error });
    this.#resultWithoutRun({ outcome: "usage_error", exitCode, error: { code: error.code, message: error.message } });
    this.#error(error.message);
    return exitCode;
  }

  /**
   * What a command threw besides bad input: a bug in Loom outside a run (a run's own bugs end it as failed, with its
   * report), or an interrupt. One line on stderr and, with json or stream-json, still one result object (outcome
   * internal_error for a bug).
   */
  thrown(error: unknown): number {
    const { ending, outcome, code, exitCode } = endingOf({ threw: error });
    const bug = ending === INTERNAL_ERROR;
    const message = bug ? `internal error: ${errorMessage(error)}` : errorMessage(error);
    this.#resultWithoutRun({
      outcome: bug ? INTERNAL_ERROR : outcome,
      exitCode,
      error: { code: code ?? INTERNAL_ERROR, message },
    });
    this.#error(message);
    return exitCode;
  }

  #resultWithoutRun(
    { outcome, exitCode, error }: { outcome: string; exitCode: number; error: { code: string; message: string } },
  ): void {
    if (this.#format !== "json" && this.#format !== "stream-json") return;
    const summary: ResultSummary = {
      type: "result",
      format_version: OUTPUT_FORMAT_VERSION,
      outcome,
      exit_code: exitCode,
      slice: null,
      status: NOT_STARTED.finish?.status ?? null,
      summary: NOT_STARTED.finish?.summary ?? null,
      steps: NOT_STARTED.steps,
      revision: NOT_STARTED.revision,
      last_test: NOT_STARTED.last_test,
      tests_current: NOT_STARTED.tests_current,
      verified: NOT_STARTED.verified,
      printed: [...NOT_STARTED.printed],
      error,
      model_calls: 0,
      request_bytes: { total: 0, max: 0 },
      usage: { ...NULL_USAGE },
      duration_ms: 0,
      report_path: null,
    };
    this.#io.stdout(`${JSON.stringify(summary)}\n`);
  }

  /**
   * A batch's progress on stderr: on a terminal one live line with elapsed time, ETA and the file being replayed; in a
   * log a plain line at the start and the end, every tenth of the batch, and otherwise at most every 10 s.
   */
  batchProgress(p: BatchProgress): void {
    if (this.#quiet) return;
    if (this.#io.isTTY) {
      this.#io.stderr(this.#live(batchProgressLine(p)));
      return;
    }
    const tenth = Math.floor(p.done / Math.max(1, Math.floor(p.total / 10)));
    const last = this.#plainProgress;
    if (p.done === 0 && last.at !== -Infinity) return;
    if (p.done !== 0 && p.done !== p.total && tenth === last.tenth && p.elapsedMs - last.at < PLAIN_PROGRESS_EVERY_MS) {
      return;
    }
    this.#plainProgress = { at: p.elapsedMs, tenth };
    this.#io.stderr(`${batchProgressLine({ ...p, current: null })}\n`);
  }

  /** --resume: how much of the batch earlier reports already cover. */
  resuming({ resumed, pending }: { resumed: number; pending: number }): void {
    if (!this.#quiet) {
      this.#io.stderr(`resuming: ${plural(resumed, "recording")} already replayed, ${n(pending)} to go\n`);
    }
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
      const stopped = summary.interrupted;
      const counts = [
        // An interrupted batch counts its stopped runs below, whatever their reports say.
        ...Object.entries(aggregate.outcomes).filter(([k]) => !(stopped && k === "interrupted")).map(([k, v]) =>
          `${v} ${k}`
        ),
        ...(summary.unreadable.length ? [`${summary.unreadable.length} unreadable`] : []),
        ...(stopped ? [`${stopped.running} interrupted`, `${stopped.never_started} never started`] : []),
      ];
      this.#io.stdout(
        `${stopped ? "interrupted: " : ""}replayed ${plural(summary.recordings, "recording")} (${policy}): ${
          counts.join(", ") || "none"
        }${summary.resumed ? ` (${summary.resumed} from earlier reports)` : ""}\n` +
          `  ${plural(summary.model_calls, "model call")}, ${plural(summary.request_bytes, "request byte")}, ${
            plural(summary.checkpoints, "checkpoint")
          }\n` +
          (summary.report_path ? `  aggregate report: ${escapeControl(summary.report_path)}\n` : "") +
          (summary.reports_dir ? `  per-recording reports: ${escapeControl(summary.reports_dir)}\n` : "") +
          (stopped && summary.reports_dir ? "  continue with the same command and --resume\n" : ""),
      );
    }
    // Unreadable recordings have no report, so they count as not completed too.
    return endingOf({
      ran: interrupted ? "interrupted" : summary.completed === summary.recordings ? "completed" : "failed",
    }).exitCode;
  }

  /** `loom config`: every setting a run would use, its value and where it came from. */
  settings(
    { file, rows, models }: {
      file: { path: string | null; found: boolean };
      /** The model table in use: "built-in" or the installed file, and its updated date. */
      models?: { origin: string; updated: string | null; line: string };
      rows: readonly { name: string; value: string | number | null; source: string | null; from: string | null }[];
    },
  ): number {
    if (this.#format === "json") {
      const settings = Object.fromEntries(rows.map(({ name, ...s }) => [name, s]));
      const table = models ? { models: { origin: models.origin, updated: models.updated } } : {};
      this.#io.stdout(
        `${JSON.stringify({ file: { path: file.path, found: file.found }, ...table, settings }, null, 2)}\n`,
      );
      return endingOf({ ran: "completed" }).exitCode;
    }
    const cells = rows.map((r) => [
      r.name,
      r.value === null ? "—" : String(r.value),
      r.source === null
        ? "not set"
        : r.source === "default"
        ? "default"
        : r.source === "config"
        ? "config file"
        : r.from ?? r.source,
    ]);
    const width = (c: number) => Math.max(...cells.map((r) => r[c]?.length ?? 0));
    const where = file.path === null
      ? "config file: none (set XDG_CONFIG_HOME or HOME)"
      : `config file: ${file.path}${file.found ? "" : " (not found)"}`;
    const lines = cells.map((r) => `${r[0]?.padEnd(width(0))}  ${r[1]?.padEnd(width(1))}  ${r[2]}`);
    const table = models ? `${escapeControl(models.line)}\n` : "";
    this.#io.stdout(`${escapeControl(where)}\n${table}${lines.map(escapeControl).join("\n")}\n`);
    return endingOf({ ran: "completed" }).exitCode;
  }

  /** One report summarised or several compared: text, JSON, or a self-contained HTML page written to a file. */
  reports(reports: NamedReport[], { transcript }: { transcript?: Transcript } = {}): number {
    const format = this.#format;
    if (typeof format === "object") {
      this.#write(format.html, renderReportHtml(reports, transcript ? { transcript } : {}));
      this.#io.stdout(`${escapeControl(format.html)}\n`);
    } else {
      const doc = summarizeReports(reports);
      // Text: a report's file names and paths are not Loom's, so their control characters are written as escapes.
      const text = () => renderSummaryText(doc).split("\n").map(escapeControl).join("\n");
      this.#io.stdout(format === "json" ? `${JSON.stringify(doc, null, 2)}\n` : text());
    }
    return endingOf({ ran: "completed" }).exitCode;
  }

  /**
   * An evaluation (loom eval, rescore, or loom report of an eval.json): its summary with the verdict sentences and what
   * to do next, as text, JSON (the summary plus `next`) or an HTML page whose links reach the runs' artifacts. `dir` is
   * the folder of eval.json as the user named it.
   */
  evaluation(file: EvalFile, { dir, ran }: { dir: string; ran: Outcome }): number {
    this.#endProgress();
    const format = this.#format;
    if (typeof format === "object") {
      const page = resolve(this.#io.cwd, format.html);
      const fromPage = relative(dirname(page), resolve(this.#io.cwd, dir)) || ".";
      this.#write(format.html, renderEvalHtml(file, { dir: fromPage }));
      this.#io.stdout(`${escapeControl(format.html)}\n`);
    } else if (format === "json") {
      this.#io.stdout(`${JSON.stringify({ ...file.summary, next: whatNext(file, { dir }) }, null, 2)}\n`);
    } else {
      // eval.json is data (a results folder someone sent): its strings reach the terminal with controls escaped.
      this.#io.stdout(renderEvalText(file, { dir }).split("\n").map(escapeControl).join("\n"));
    }
    return endingOf({ ran }).exitCode;
  }

  /** loom eval validate: one line per task, or the results as JSON. */
  validation(results: readonly TaskValidation[], { interrupted }: { interrupted: boolean }): number {
    if (this.#format === "json") this.#io.stdout(`${JSON.stringify(results, null, 2)}\n`);
    else {
      for (const r of results) {
        this.#io.stdout(
          `${escapeControl(`${r.ok ? "ok  " : "FAIL"} ${r.task}${r.ok ? "" : `: ${r.problems.join("; ")}`}`)}\n`,
        );
      }
      const bad = results.filter((r) => !r.ok).length;
      this.#io.stdout(`${results.length - bad}/${results.length} tasks valid\n`);
    }
    return endingOf({
      ran: interrupted ? "interrupted" : results.every((r) => r.ok) ? "completed" : "failed",
    }).exitCode;
  }

  /** `loom report --merge` of eval.json shards: the merged file to stdout, or with -o to a file and its summary. */
  mergedEvaluation(file: EvalFile, { output, shards }: { output: string | null; shards: number }): number {
    const text = `${JSON.stringify(file, null, 2)}\n`;
    if (output === null) this.#io.stdout(text);
    else {
      // With -o only the file is written, as for a batch's shards: stdout stays empty, one line on stderr says it.
      this.#write(output, text);
      this.#io.stderr(
        `merged ${plural(shards, "shard")} (${plural(file.rows.length, "run")}) into ${escapeControl(output)}\n`,
      );
    }
    return endingOf({ ran: "completed" }).exitCode;
  }

  /**
   * `loom report --merge`: the merged aggregate to stdout, or with -o to a file — then stdout stays empty, as with
   * cp or curl -o, and one line on stderr says what was written.
   */
  merged(report: AggregateReport, { output, shards }: { output: string | null; shards: number }): number {
    const text = `${JSON.stringify(report, null, 2)}\n`;
    if (output === null) this.#io.stdout(text);
    else {
      this.#write(output, text);
      this.#io.stderr(
        `merged ${plural(shards, "shard")} (${plural(report.runs.length, "run")}) into ${escapeControl(output)}\n`,
      );
    }
    return endingOf({ ran: "completed" }).exitCode;
  }

  /** Writes a file the user named (atomically; its folder was checked, and announced when missing, with the flags);
   * failure is a usage error in words. */
  #write(file: string, text: string): void {
    try {
      writeFileAtomic(resolve(this.#io.cwd, file), text);
    } catch (error) {
      throw new UsageError(`Cannot write ${JSON.stringify(file)}: ${describeFsError(error)}`);
    }
  }

  /** Ends a live progress line before other output. */
  #endProgress(): void {
    this.#stopTicker();
    if (this.#io.isTTY && !this.#quiet) this.#io.stderr("\r\x1b[2K");
  }

  /** A live line: redrawn in place, clipped to the terminal's width, its first word bold where colour is on. */
  #live(line: string): string {
    // Names (a recording's, a step's target) are escaped before Loom's own codes are added around them.
    const clipped = fitLine(escapeControl(line), this.#io.columns);
    if (!this.#io.color) return `\r\x1b[2K${clipped}`;
    const space = clipped.indexOf(" ");
    return `\r\x1b[2K\x1b[1m${clipped.slice(0, space)}\x1b[22m${clipped.slice(space)}`;
  }

  #error(message: string): void {
    const prefix = `loom ${this.#command}:`;
    this.#io.stderr(`${this.#io.color ? `\x1b[31m${prefix}\x1b[39m` : prefix} ${escapeControl(message)}\n`);
  }
}

/** A run that ended before its first step: in text, its one error line on stderr says it all. */
function neverStarted(result: RunResult): boolean {
  return result.steps === 0 && BEFORE_A_STEP.has(result.outcome);
}

function summarizeResult(result: RunResult): ResultSummary {
  const bytes = requestBytes(result.report.phases);
  return {
    type: "result",
    format_version: OUTPUT_FORMAT_VERSION,
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
    verified: result.verified,
    printed: result.printed,
    error: result.error,
    model_calls: result.report.model_calls,
    request_bytes: { total: bytes.total, max: bytes.max },
    usage: result.report.usage,
    duration_ms: result.report.total_elapsed_ms,
    ...(result.report.cost !== undefined ? { cost: result.report.cost } : {}),
    report_path: result.report_path,
    ...(result.replay ? { replay: result.replay } : {}),
    ...(result.sandbox !== undefined ? { sandbox: result.sandbox } : {}),
    ...(result.route !== undefined
      ? { route: result.route ? { via: result.route.via, rule: result.route.rule } : null }
      : {}),
    ...(stepsByAction(result.report.step_log)),
    ...(result.report.changes !== undefined ? { changes: result.report.changes } : {}),
  };
}

/** The steps by action, in order of first use; nothing when no step began. */
function stepsByAction(log: readonly { action: string | null }[] | undefined): Pick<ResultSummary, "actions"> {
  if (!log || log.length === 0) return {};
  const actions: Record<string, number> = {};
  for (const step of log) actions[step.action ?? "none"] = (actions[step.action ?? "none"] ?? 0) + 1;
  return { actions };
}

const n = formatCount;

export function renderResultText(
  s: ResultSummary,
  { label, recorded = false, uncompared = [], ownFiles = [] }: {
    label: string;
    /** A replay: its cost is the recorded run's. */
    recorded?: boolean;
    uncompared?: readonly number[];
    /** The model's writes refused because they named Loom's own files (an output of the run, `.loom`). */
    ownFiles?: readonly { step: number; action: string | null; target: string | null }[];
  },
): string {
  const lines: string[] = [];
  lines.push(
    `${label}: ${s.outcome}${s.status ? ` (${s.status})` : ""} after ${
      plural(s.steps, "step")
    }, revision ${s.revision}, ${verifiedText(s)}`,
  );
  // The model's text reaches a terminal: control characters (escape sequences, a carriage return that overwrites a
  // line, a newline that forges one) are shown escaped.
  if (s.summary) {
    lines.push(...clipSummary(s.summary).map((line, i) => `  ${i === 0 ? "summary: " : "  "}${escapeControl(line)}`));
  }
  for (const text of s.printed) lines.push(`  printed: ${escapeControl(text)}`);
  if (s.last_test) {
    const t = s.last_test;
    // Whether the test ran on the revision the workspace is at now, not whether it passed (the verdict says that).
    const when = t.revision === s.revision
      ? "the current revision"
      : `${t.revision} (the workspace is now at ${s.revision})`;
    const verdict = t.timed_out ? "timed out" : t.exit_code === 0 ? "passed" : `failed (exit ${t.exit_code})`;
    lines.push(`  last test: ${verdict} on ${when}`);
  }
  if (s.error) lines.push(`  error: ${s.error.code}: ${s.error.message}`);
  // What the agent did, where a user looks: its steps by action, and the files it changed with their lines.
  if (s.actions) {
    lines.push(`  steps: ${Object.entries(s.actions).map(([action, count]) => `${n(count)} ${action}`).join(", ")}`);
  }
  if (s.changes) lines.push(...changedFilesText(s.changes, { max: CHANGED_FILES_SHOWN }).map((line) => `  ${line}`));
  // Beside the changes: a write the model asked for that did not happen, because the path is Loom's own (an output of
  // this run inside the workspace): the output holds Loom's bytes, not the model's.
  if (ownFiles.length > 0) {
    const shown = ownFiles.slice(0, 3).map((r) => `step ${r.step} ${r.action ?? ""} ${JSON.stringify(r.target ?? "")}`);
    const more = ownFiles.length > shown.length ? ` and ${n(ownFiles.length - shown.length)} more` : "";
    lines.push(escapeControl(`  not written (Loom's own file, refusal loom_file): ${shown.join(", ")}${more}`));
  }
  lines.push(
    `  ${plural(s.model_calls, "model call")}, ${n(s.request_bytes.total)} request bytes (max ${
      n(s.request_bytes.max)
    })`,
  );
  // A replay's cost is the recorded run's (its counters at today's table), never money spent by the replay.
  if (s.cost) {
    lines.push(
      `  ${recorded ? "recorded cost" : "cost"}: $${s.cost.total.toFixed(4)} (prices of ${s.cost.prices.date}${
        recorded ? "; the recorded run's calls, not spent now" : ""
      })`,
    );
  }
  // No price (a local model): its cost is its time and its tokens, when its provider counted them.
  if (!s.cost && !recorded && (s.usage.input !== null || s.usage.output !== null)) {
    lines.push(`  ${timeAndTokens(s)}`);
  }
  if (s.replay) {
    const partial = uncompared.length > 0;
    lines.push(
      s.replay.differing_steps.length === 0
        ? partial
          ? `  re-executed: the recording's ${plural(s.replay.compared, "execution report")} ${
            s.replay.compared === 1 ? "equals" : "equal"
          } this run's`
          : `  re-executed: all ${s.replay.compared} execution reports equal the recording`
        : `  re-executed: ${someSteps(s.replay.differing_steps)} ${
          s.replay.differing_steps.length === 1 ? "differs" : "differ"
        } from the recording`,
    );
    // A partial recording: compared on the steps it holds reports of, and says which it could not compare.
    if (partial) {
      lines.push(
        `  not compared: ${someSteps([...uncompared])} (the recording holds no execution report of ${
          uncompared.length === 1 ? "it" : "them"
        })`,
      );
    }
  }
  if (s.report_path) lines.push(`  report: ${escapeControl(s.report_path)}`);
  return `${lines.join("\n")}\n`;
}

/**
 * Whether the tests vouch for the final revision, in words: "verified", or "NOT verified: last test failed on r3
 * (exit code 1)". The model's status is its own claim; this is what a user should trust.
 */
function verifiedText(s: ResultSummary): string {
  return s.verified
    ? "verified"
    : `NOT verified: ${unverifiedReason({ last_test: s.last_test, latest_revision: s.revision })}`;
}

/** A run without a price, as the summary says what it took: "time: 23.4 s; tokens: 9,120 input, 310 output". */
function timeAndTokens(s: ResultSummary): string {
  const { input, cache_read, cache_write, output } = s.usage;
  const tokens = [
    input === null ? null : `${n(input)} input`,
    cache_read ? `${n(cache_read)} read from the cache` : null,
    cache_write ? `${n(cache_write)} written to the cache` : null,
    output === null ? null : `${n(output)} output`,
  ].filter((part) => part !== null);
  const seconds = s.duration_ms / 1000;
  return `time: ${seconds < 10 ? seconds.toFixed(2) : seconds.toFixed(1)} s; tokens: ${
    tokens.join(", ")
  } (no price: the cost is the time)`;
}

/** The progress line's money: what the run's calls so far cost (", $0.0123 so far"); nothing without a price. */
function costSoFar(p: Progress): string {
  return p.cost_usd === null ? "" : `, $${p.cost_usd.toFixed(4)} so far`;
}

/** Changed files listed in a run's terminal summary; the rest are counted (loom report lists them all). */
const CHANGED_FILES_SHOWN = 10;

/** Summary lines shown in text output; a longer summary (an imported run's whole patch) is clipped, whole in --json. */
const SUMMARY_LINES = 3;
const SUMMARY_LINE_CHARS = 200;

function clipSummary(summary: string): string[] {
  const all = summary.trimEnd().split("\n");
  const shown = all.slice(0, SUMMARY_LINES).map((line) => clipEnd(line, SUMMARY_LINE_CHARS + 1));
  const rest = all.length - shown.length;
  if (rest > 0) shown.push(`… (${rest} more line${rest === 1 ? "" : "s"}; --json shows the whole summary)`);
  return shown;
}

export type BatchProgress = {
  done: number;
  total: number;
  failed: number;
  running: number;
  elapsedMs: number;
  current: string | null;
};

/** "1m05s", "42s", "2h03m". */
function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/**
 * A line that fits a terminal of `columns`: cut with "…" one column short of the edge (a character in the last column
 * wraps on some terminals). The parts of a progress line come most important first, so the cut takes the least.
 */
export function fitLine(line: string, columns: number | undefined): string {
  if (columns === undefined || columns < 2) return line;
  const chars = [...line];
  return chars.length <= columns - 1 ? line : `${chars.slice(0, Math.max(0, columns - 2)).join("")}…`;
}

/** The batch's progress line: done/total, not completed, running, elapsed, ETA (from the pace so far) and a file. */
export function batchProgressLine({ done, total, failed, running, elapsedMs, current }: BatchProgress): string {
  const eta = done > 0 && done < total ? `, ETA ${formatDuration((elapsedMs / done) * (total - done))}` : "";
  return `replay ${done}/${total} done, ${failed} not completed, ${running} running, ${
    formatDuration(elapsedMs)
  } elapsed${eta}${current ? `, ${current}` : ""}`;
}
