// `loom report REPORT [REPORT…] [--json | --html FILE]`: summarise one context report or compare several;
// `loom report --merge AGGREGATE… [-o FILE]`: merge the aggregates of a batch's shards.
import { readFile } from "node:fs/promises";
import { errorCode } from "../lib/errors.ts";
import { basename, resolve } from "node:path";
import { type AggregateReport, aggregateReports, mergeAggregates } from "../lib/report/context-report.ts";
import { UsageError } from "../lib/errors.ts";
import { describeReadError, type NamedReport, parseReport } from "../lib/report/load.ts";
import { VERSION } from "../lib/version.ts";
import type { Io } from "./io.ts";
import { parseCommand } from "./cli-spec.ts";
import { REPORT_SPEC } from "./specs.ts";
import { outputPathOption } from "./options.ts";
import { type OutputFormat, Reporter } from "./reporter.ts";
import { evalReport, readEvalFiles } from "./eval-report.ts";
import { readTranscript } from "./transcript-files.ts";
import { type NamedPath, refuseCollisions } from "./output-paths.ts";
import { startupFiles } from "./config.ts";

type ReportOptions = {
  /** --transcript files (none: look beside the report) and --show-content; with --html and one run's report. */
  transcript: { given: string[]; showContent: boolean };
  files: string[];
  labels: string[];
  format: OutputFormat;
  merge: { output: string | null } | null;
};

function parseReportArgs(argv: string[], io: Io): ReportOptions {
  const { values, positionals } = parseCommand(REPORT_SPEC, argv, { command: "report" });
  if (positionals.length === 0) {
    throw new UsageError("Missing REPORT: give at least one context report file (see loom report --help)");
  }
  if (values.json && values.html !== undefined) throw new UsageError("Choose one of --json and --html, not both");
  if (values.html === "") throw new UsageError("Option --html needs a file path");
  if (values.merge && (values.json || values.html !== undefined)) {
    throw new UsageError("--merge writes an aggregate report; it takes no --json or --html");
  }
  if (values.output !== undefined && !values.merge) throw new UsageError("-o/--output is for --merge");
  if (values.output === "") throw new UsageError("Option --output needs a file path");
  const labels = values.label ?? [];
  if (labels.length > positionals.length) {
    throw new UsageError(
      `${labels.length} labels for ${positionals.length} reports (one --label per report, in order)`,
    );
  }
  // One rule for every file Loom is asked to write: checked before anything is read, a missing folder created and
  // said in one line (as loom run --context-report does), for a run's report and an evaluation's alike.
  const notice = (message: string) => io.stderr(`loom report: ${message}\n`);
  const outputs: NamedPath[] = [];
  for (const [flag, path] of [["--html", values.html], ["--output", values.output]] as const) {
    if (path !== undefined) outputs.push({ flag, path: outputPathOption(flag, path, { cwd: io.cwd, notice }) });
  }
  // An output naming a file the command reads would destroy it (`--html report.json`, `-o shard-1.json`).
  const read = (flag: string) => (path: string): NamedPath => ({ flag, path: resolve(io.cwd, path) });
  refuseCollisions(outputs, {
    inputs: [
      ...positionals.map(read("REPORT")),
      ...(values.transcript ?? []).map(read("--transcript")),
      // and the files every command reads at start: a page written over the user config breaks every later run
      ...startupFiles(io.env, [io.cwd]),
    ],
  });
  const format: OutputFormat = values.json ? "json" : values.html !== undefined ? { html: values.html } : "text";
  const given = values.transcript ?? [];
  if ((given.length > 0 || values["show-content"]) && (values.html === undefined || positionals.length !== 1)) {
    throw new UsageError("--transcript and --show-content are for one run's report with --html FILE");
  }
  return {
    files: positionals,
    labels,
    format,
    merge: values.merge ? { output: values.output ?? null } : null,
    transcript: { given, showContent: values["show-content"] === true },
  };
}

async function loadReport(file: string, cwd: string): Promise<NamedReport> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), "utf8");
  } catch (error) {
    throw describeReadError(file, errorCode(error));
  }
  return parseReport(text, { file });
}

/** Bad input is a usage error (exit 2): main.ts prints it as one line naming the file and what was wrong. */
export async function reportCommand(argv: string[], io: Io): Promise<number> {
  const options = parseReportArgs(argv, io);
  // An evaluation's eval.json (and its shards) has its own summary.
  const evals = readEvalFiles(options.files, io.cwd);
  const reporter = new Reporter(io, { command: "report", format: options.format });
  if (evals) return evalReport(evals, { ...options, paths: options.files }, reporter);
  const loaded: NamedReport[] = [];
  for (const file of options.files) loaded.push(await loadReport(file, io.cwd));
  if (options.merge) return reporter.merged(merge(loaded), { output: options.merge.output, shards: loaded.length });
  // Reports are shown by their label, else their file name: full paths crowd every table and legend.
  const [only] = loaded;
  const transcript = typeof options.format === "object" && loaded.length === 1 && only?.kind === "run"
    ? readTranscript({ report: only.file, run: only.report, cwd: io.cwd, ...options.transcript })
    : null;
  return reporter.reports(
    loaded.map((r, i) => ({ ...r, file: options.labels[i] ?? basename(r.file) })),
    transcript ? { transcript } : {},
  );
}

/**
 * --merge: the shards' aggregates as one, all under one policy. A shard of one recording wrote a run's report (a
 * single replay); it counts as an aggregate of that one run.
 */
function merge(reports: NamedReport[]): AggregateReport {
  const shards = reports.map((r) =>
    r.kind === "aggregate" ? r.report : aggregateReports([{ name: basename(r.file), path: r.file, report: r.report }], {
      version: r.report.loom_version,
      policy: r.report.policy,
    })
  );
  const merged = mergeAggregates(shards, { version: VERSION });
  if (!merged.ok) {
    throw new UsageError(`The shards were replayed under different policies (${merged.policies.join(", ")})`);
  }
  // A run of the same recording under the same name in two shards would be counted twice (a shard given twice, or
  // shards that overlap): refused, naming both.
  // each run's key -> the shard and the file that hold it first
  const seen = new Map<string, { shard: number; file: string }>();
  shards.forEach((shard, i) => {
    const file = reports[i]?.file ?? ""; // shards is reports, mapped: the same indexes
    for (const run of shard.runs) {
      if (run.recording === undefined) continue;
      const key = `${run.recording} ${run.name}`;
      const earlier = seen.get(key);
      if (earlier !== undefined && earlier.shard !== i) {
        throw new UsageError(
          `${JSON.stringify(earlier.file)} and ${JSON.stringify(file)} both hold the run of ${
            JSON.stringify(run.name)
          } (the same recording): merged, it would count twice`,
        );
      }
      seen.set(key, { shard: i, file });
    }
  });
  return merged.report;
}
