// Reading another agent's file: JSON parsing, message text, and one-line descriptions for clear errors.
import { UsageError } from "../../errors.ts";
import { tooDeep } from "../../text/json-depth.ts";
import { describeJsonFailure, readJson } from "../../text/json-text.ts";

/**
 * Parses a trajectory file; malformed JSON is one line naming the file and the parser's complaint. A leading byte
 * order mark is ignored. With `lines`, a file whose first line is a JSON object on its own is read as JSON Lines (one
 * value per line, `\n` or `\r\n`) into an array.
 */
export function parseJsonSource(text: string, { name, lines = false }: { name: string; lines?: boolean }): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const deep = tooDeep(body);
  if (deep) throw new UsageError(`${name}: ${deep}`);
  const json = readJson(body);
  if (json.ok) return json.value;
  const rows = lines ? jsonLines(body, { name }) : undefined;
  if (rows) return rows;
  throw new UsageError(`${name}: not valid JSON: ${describeJsonFailure(json)}`);
}

function jsonLines(text: string, { name }: { name: string }): unknown[] | undefined {
  const rows = text.split("\n");
  const first = rows.find((row) => row.trim() !== "");
  if (first === undefined || !isRecord(tryParse(first))) return undefined;
  const values: unknown[] = [];
  rows.forEach((row, i) => {
    if (row.trim() === "") return;
    const json = readJson(row);
    if (!json.ok) throw new UsageError(`${name}:${i + 1}:${json.column}: not valid JSON: ${json.message}`);
    values.push(json.value);
  });
  return values;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What a value looks like, for "expected X, found Y" errors: never its content, only its shape. */
export function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) {
    return value.length === 0 ? "an empty array" : `an array of ${value.length} ${kindOf(value[0])}s`;
  }
  if (typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length === 0) return "an empty object";
    const shown = keys.slice(0, 6).join(", ");
    return `an object with keys ${shown}${keys.length > 6 ? `, … (${keys.length} keys)` : ""}`;
  }
  return `a ${kindOf(value)}`;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/**
 * The text of a chat message's content: a string as is, an array of content parts as their texts joined by a newline
 * (non-text parts, e.g. images, become a one-line placeholder), null or absent as "".
 */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map(partText).join("\n");
}

function partText(part: unknown): string {
  if (typeof part === "string") return part;
  if (part === null || typeof part !== "object") return "";
  const { type, text, refusal } = part as { type?: unknown; text?: unknown; refusal?: unknown };
  if (typeof text === "string") return text;
  if (typeof refusal === "string") return refusal;
  return `[${typeof type === "string" ? type : "non-text"} part not imported]`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The first argument that is a non-empty string. */
export function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === "string" && value !== "") return value;
  return undefined;
}
