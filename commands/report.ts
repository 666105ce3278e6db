// `loom report REPORT [REPORT…] [--json | --html FILE]`: summarise one context report or compare several.
import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { parseCommandArgs } from "./options.ts";
import { errorMessage, LoomError, UsageError } from "../lib/errors.ts";
import { renderReportHtml } from "../lib/report-html.ts";
import { describeReadError, type NamedReport, parseReport } from "../lib/report-load.ts";
import { renderSummaryText, summarizeReports } from "../lib/report-summary.ts";
import type { Io } from "./io.ts";

export const REPORT_USAGE = `Usage: loom report REPORT [REPORT…] [--json | --html FILE]

Summarises one context report (written by --context-report) or compares several side by side,
with ratios against the first. Aggregate reports from a batch replay are accepted too.

Options:
  --json         print the summary or comparison as one JSON object
  --html FILE    write a self-contained HTML page with charts to FILE and print its path
  -h, --help     show this help
`;

type ReportOptions = { files: string[]; output: { kind: "text" } | { kind: "json" } | { kind: "html"; file: string } };

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
  const output = values.json
    ? { kind: "json" as const }
    : values.html !== undefined
    ? { kind: "html" as const, file: values.html }
    : { kind: "text" as const };
  return { files: positionals, output };
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

/** Temp file beside the target, then rename: a reader never sees a half-written page. */
async function writeAtomically(path: string, text: string, { shown }: { shown: string }): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, text, { encoding: "utf8", flag: "wx" });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    const code = (error as { code?: string }).code;
    throw new UsageError(
      `Cannot write ${JSON.stringify(shown)}: ${code === "ENOENT" ? "no such directory" : code ?? errorMessage(error)}`,
    );
  }
}

export async function reportCommand(argv: string[], io: Io): Promise<number> {
  try {
    const options = parseReportArgs(argv);
    if (options === "help") {
      io.stdout(REPORT_USAGE);
      return 0;
    }
    const reports: NamedReport[] = [];
    for (const file of options.files) reports.push(await loadReport(file, io.cwd));
    const { output } = options;
    if (output.kind === "html") {
      await writeAtomically(resolve(io.cwd, output.file), renderReportHtml(reports), { shown: output.file });
      io.stdout(`${output.file}\n`);
    } else {
      const doc = summarizeReports(reports);
      io.stdout(output.kind === "json" ? `${JSON.stringify(doc, null, 2)}\n` : renderSummaryText(doc));
    }
    return 0;
  } catch (error) {
    // Bad input (exit 2): one line naming the file and what was wrong. Anything else is a bug for the router.
    if (!(error instanceof LoomError)) throw error;
    io.stderr(`loom report: ${error.message}\n`);
    return error.exitCode;
  }
}
