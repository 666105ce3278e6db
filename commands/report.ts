// `loom report REPORT [REPORT…] [--json | --html FILE]`: summarise one context report or compare several.
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { UsageError } from "../lib/errors.ts";
import { describeReadError, type NamedReport, parseReport } from "../lib/report-load.ts";
import type { Io } from "./io.ts";
import { parseCommandArgs } from "./options.ts";
import { type OutputFormat, Reporter } from "./reporter.ts";

export const REPORT_USAGE = `Usage: loom report REPORT [REPORT…] [--json | --html FILE]

Summarises one context report (written by --context-report) or compares several side by side,
with ratios against the first. Aggregate reports from a batch replay are accepted too.

Options:
  --json         print the summary or comparison as one JSON object
  --html FILE    write a self-contained HTML page with charts to FILE and print its path
  -h, --help     show this help
`;

type ReportOptions = { files: string[]; format: OutputFormat };

function parseReportArgs(argv: string[]): ReportOptions | "help" {
  const parsed = parseCommandArgs(
    argv,
    { json: { type: "boolean" }, html: { type: "string" }, help: { type: "boolean", short: "h" } },
    { command: "report" },
  );
  const { values, positionals } = parsed;
  if (values.help) return "help";
  if (positionals.length === 0) {
    throw new UsageError("Missing REPORT: give at least one context report file (see loom report --help)");
  }
  if (values.json && values.html !== undefined) throw new UsageError("Choose one of --json and --html, not both");
  if (values.html === "") throw new UsageError("Option --html needs a file path");
  const format: OutputFormat = values.json ? "json" : values.html !== undefined ? { html: values.html } : "text";
  return { files: positionals, format };
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
  const reports: NamedReport[] = [];
  for (const file of options.files) reports.push(await loadReport(file, io.cwd));
  return new Reporter(io, { command: "report", format: options.format }).reports(reports);
}
