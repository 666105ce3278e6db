// Which format a recording's text is in (a Loom recording by its header line, else whichever importer recognises the
// JSON or JSONL), and the text parsed as the format given or detected.
import { UsageError } from "../errors.ts";
import { describeJsonFailure, readJson } from "../text/json-text.ts";
import { describeJson } from "./importers/source.ts";
import { detectFormat, IMPORT_FORMATS, type ImportFormat, importTrajectory } from "./importers/index.ts";
import { isClaudeCodeLine } from "./importers/claude-code.ts";
import { isCodexLine } from "./importers/codex.ts";
import { parseRecording, type Recording } from "./recording.ts";

/** The formats a recording may be read as: Loom's own, then the importers'. */
export const RECORDING_FORMATS = ["loom", ...IMPORT_FORMATS] as const;
export type RecordingFormat = (typeof RECORDING_FORMATS)[number];

/** A recording's text in the format given (or detected, for auto); a forced format that does not fit names what was found. */
export function parseRecordingText(text: string, { name, from }: { name: string; from: string }): Recording {
  const format = from === "auto" ? detectRecordingFormat(text, name) : from;
  if (format !== "loom") return importTrajectory(text, { format: format as ImportFormat, name });
  try {
    return parseRecording(text, { name });
  } catch (error) {
    // --from loom on another agent's file: say what it is rather than what line 1 lacks.
    if (!isLoomHeader(text)) {
      let found: string | null = null;
      try {
        found = detectRecordingFormat(text, name);
      } catch { /* not JSON at all: the recording's own error says where */ }
      if (found && found !== "loom") {
        throw new UsageError(
          `${name}: expected a Loom recording (a "loom-recording" header line), found a ${found} trajectory (use --from ${found} or --from auto)`,
        );
      }
    }
    throw error;
  }
}

function firstLine(text: string): string {
  const end = text.indexOf("\n");
  return end === -1 ? text : text.slice(0, end);
}

function isLoomHeader(text: string): boolean {
  return firstLine(text).includes('"loom-recording"');
}

/** --from auto: a Loom recording by its header line, else whichever importer recognises the JSON (or JSONL). */
export function detectRecordingFormat(text: string, name: string): string {
  if (isLoomHeader(text)) return "loom";
  let json: unknown;
  /** For JSON Lines: each value's line number. */
  const numbers: number[] = [];
  const whole = readJson(text);
  if (whole.ok) json = whole.value;
  else {
    // JSONL chat logs: one message per line
    const rows = text.split("\n").map((line, i) => ({ number: i + 1, line })).filter(({ line }) => line.trim() !== "");
    const values: unknown[] = [];
    for (const { number, line } of rows) {
      const row = readJson(line);
      if (row.ok) {
        values.push(row.value);
        numbers.push(number);
      } // One line: the JSON error as is. Several: a JSON Lines file, placed by its line.
      else if (rows.length === 1) throw new UsageError(`${name}: not valid JSON: ${describeJsonFailure(whole)}`);
      else throw new UsageError(`${name}:${number}:${row.column}: not valid JSON: ${row.message}`);
    }
    if (values.length === 0) throw new UsageError(`${name}: empty file, so no format could be detected`);
    json = values;
  }
  const found = detectFormat(json);
  if (!found) {
    // JSON Lines: the first line that is neither a Claude Code nor a Codex session line, by number.
    const list = Array.isArray(json) && numbers.length === json.length ? (json as unknown[]) : [];
    const stranger = list.findIndex((value) => !isClaudeCodeLine(value) && !isCodexLine(value));
    const where = stranger >= 0
      ? `; line ${numbers[stranger]} is ${describeJson(list[stranger])}, neither a Claude Code nor a Codex session line`
      : "";
    throw new UsageError(
      `${name}: not a recognised trajectory (expected ${RECORDING_FORMATS.join(", ")}; found ${
        describeJson(json)
      }${where})`,
    );
  }
  return found;
}
