// Parses and validates the text of a report file: a run's ContextReport or a batch's AggregateReport.
import { AggregateReport, ContextReport, REPORT_SCHEMA_VERSION } from "./context-report.ts";
import { fieldOf, UsageError } from "../errors.ts";
import { describeJsonFailure, readJson } from "../text/json-text.ts";
import { formatZodError } from "../text/zod-error.ts";

export type LoadedReport =
  | { kind: "run"; report: ContextReport }
  | { kind: "aggregate"; report: AggregateReport };

/** A report together with the name the user gave it (its path), as every reader of reports needs both. */
export type NamedReport = { file: string } & LoadedReport;

/** Error codes, so callers and tests can tell the cases apart without matching message text. */
export type ReportLoadErrorCode = "report_unreadable" | "report_not_json" | "report_invalid" | "report_version";

/**
 * Parses report text. Throws a UsageError (exit 2) naming the file and what was wrong.
 * Messages never quote the file's content: reports are measurements, but a wrong file might not be.
 */
export function parseReport(text: string, { file }: { file: string }): NamedReport {
  const name = JSON.stringify(file);
  if (text.trim() === "") throw new UsageError(`Report ${name} is empty`, "report_not_json");
  const json = readJson(text);
  if (!json.ok) {
    const other = otherLoomFile(text);
    if (other) throw new UsageError(`${name} is ${other}, not a report`, "report_invalid");
    throw new UsageError(`Report ${name} is not JSON: ${describeJsonFailure(json)}`, "report_not_json");
  }
  const value = json.value;
  if (value === null || typeof value !== "object" || Array.isArray(value) || !("schema_version" in value)) {
    const other = otherLoomFile(text);
    if (other) throw new UsageError(`${name} is ${other}, not a report`, "report_invalid");
    throw new UsageError(`Report ${name} is not a Loom context report (no "schema_version" field)`, "report_invalid");
  }
  const version = fieldOf(value, "schema_version");
  if (version !== REPORT_SCHEMA_VERSION) {
    const shown = typeof version === "number"
      ? String(version)
      : `of type ${version === null ? "null" : typeof version}`;
    throw new UsageError(
      `Report ${name} has schema_version ${shown}; this Loom reads version ${REPORT_SCHEMA_VERSION}`,
      "report_version",
    );
  }
  const invalid = (
    what: string,
    error: Parameters<typeof formatZodError>[0],
    schema: Parameters<typeof formatZodError>[1],
  ) => new UsageError(`Report ${name} is not a valid ${what}: ${formatZodError(error, schema)}`, "report_invalid");
  if (fieldOf(value, "kind") === "aggregate") { // an object, checked above
    const parsed = AggregateReport.safeParse(value);
    if (!parsed.success) throw invalid("aggregate report", parsed.error, { schema: AggregateReport, worded: true });
    return { file, kind: "aggregate", report: parsed.data };
  }
  const parsed = ContextReport.safeParse(value);
  if (!parsed.success) throw invalid("context report", parsed.error, { schema: ContextReport, worded: true });
  return { file, kind: "run", report: parsed.data };
}

/**
 * What another of Loom's JSON Lines files is, told by its first line, with the command that reads it; null when it is
 * none of them. (The formats' own modules sit above this one; their first-line marks are what they write.)
 */
function otherLoomFile(text: string): string | null {
  const first = text.slice(0, text.indexOf("\n") === -1 ? undefined : text.indexOf("\n"));
  const line = readJson(first);
  if (!line.ok || line.value === null || typeof line.value !== "object") return null;
  if (fieldOf(line.value, "format") === "loom-recording") {
    return "a recording (loom-recording): replay it with `loom replay FILE --context-report report.json`, then " +
      "`loom report report.json`";
  }
  if (fieldOf(line.value, "trace_version") !== undefined && fieldOf(line.value, "turn_request") !== undefined) {
    return "a request trace (--trace): its report is the run's --context-report file";
  }
  return null;
}

/** A run's report file (not an aggregate), read and checked as parseReport checks it; a UsageError otherwise. */
export function parseRunReport(text: string, { file }: { file: string }): ContextReport {
  const loaded = parseReport(text, { file });
  if (loaded.kind !== "run") {
    throw new UsageError(`Report ${JSON.stringify(file)} is an aggregate, not a run's report`, "report_invalid");
  }
  return loaded.report;
}

/** The one-line reason for an unreadable path, from a filesystem error code (no OS-specific text). */
export function describeReadError(file: string, code: string | undefined): UsageError {
  const reasons: Record<string, string> = {
    ENOENT: "no such file",
    EACCES: "permission denied",
    EPERM: "permission denied",
    EISDIR: "it is a directory",
    ENOTDIR: "a parent is not a directory",
  };
  const reason = (code && reasons[code]) ?? `read failed${code ? ` (${code})` : ""}`;
  return new UsageError(`Cannot read report ${JSON.stringify(file)}: ${reason}`, "report_unreadable");
}
