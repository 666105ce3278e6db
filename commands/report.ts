// `loom report REPORT [REPORT…] [--json | --html FILE]`: summarise one context report or compare several;
// `loom report --merge AGGREGATE… [-o FILE]`: merge the aggregates of a batch's shards.
import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { type AggregateReport, aggregateReports, mergeAggregates } from "../lib/context-report.ts";
import { UsageError } from "../lib/errors.ts";
import { describeReadError, type NamedReport, parseReport } from "../lib/report-load.ts";
import { VERSION } from "../lib/version.ts";
import type { Io } from "./io.ts";
import { parseCommandArgs } from "./options.ts";
import { type OutputFormat, Reporter } from "./reporter.ts";
import { evalReport, readEvalFiles } from "./eval-report.ts";

export const REPORT_USAGE = `Usage: loom report REPORT [REPORT…] [--json | --html FILE] [--label NAME…]
       loom report --merge AGGREGATE… [-o FILE]

Summarises one context report (written by --context-report) or compares several side by side,
with ratios against the first. Aggregate reports from a batch replay are accepted too, and an evaluation's
DIR/eval.json (loom eval): its summary and per-task table; --merge joins the eval.json of its shards.

Options:
  --json             print the summary or comparison as one JSON object
  --html FILE        write a self-contained HTML page with charts to FILE and print its path
  --label NAME       name a report in the output (once per report, in order; default: its file name)
  --merge            merge the aggregate reports of a batch's shards into one aggregate (same policy)
  -o, --output FILE  with --merge: write the merged aggregate to FILE (default: stdout)
  -h, --help         show this help
`;

export const REPORT_OPTIONS = {
  json: { type: "boolean" },
  html: { type: "string" },
  label: { type: "string", multiple: true },
  merge: { type: "boolean" },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
} as const;

type ReportOptions = {
  files: string[];
  labels: string[];
  format: OutputFormat;
  merge: { output: string | null } | null;
};

function parseReportArgs(argv: string[]): ReportOptions | "help" {
  const { values, positionals } = parseCommandArgs(argv, REPORT_OPTIONS, { command: "report" });
  if (values.help) return "help";
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
  const format: OutputFormat = values.json ? "json" : values.html !== undefined ? { html: values.html } : "text";
  return { files: positionals, labels, format, merge: values.merge ? { output: values.output ?? null } : null };
}

async function loadReport(file: string, cwd: string): Promise<NamedReport> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), "utf8");
  } catch (error) {
    throw describeReadError(file, (error as { code?: string }).code);
  }
  return parseReport(text, { file });
}

/** Bad input is a usage error (exit 2): main.ts prints it as one line naming the file and what was wrong. */
export async function reportCommand(argv: string[], io: Io): Promise<number> {
  const options = parseReportArgs(argv);
  if (options === "help") {
    io.stdout(REPORT_USAGE);
    return 0;
  }
  // An evaluation's eval.json (and its shards) has its own summary.
  const evals = readEvalFiles(options.files, io.cwd);
  if (evals) return evalReport(evals, options, io);
  const loaded: NamedReport[] = [];
  for (const file of options.files) loaded.push(await loadReport(file, io.cwd));
  const reporter = new Reporter(io, { command: "report", format: options.format });
  if (options.merge) return reporter.merged(merge(loaded), { output: options.merge.output });
  // Reports are shown by their label, else their file name: full paths crowd every table and legend.
  return reporter.reports(loaded.map((r, i) => ({ ...r, file: options.labels[i] ?? basename(r.file) })));
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
  return merged.report;
}
