// Agent session files are JSON Lines written as the session goes: one object per line, each read with its line number
// so a line that is not one is refused by number. Shared by the Claude Code and Codex importers.
import { UsageError } from "../../errors.ts";
import { tooDeep } from "../../text/json-depth.ts";
import { readJson } from "../../text/json-text.ts";
import { describeJson, isRecord } from "./source.ts";

export type SessionLine = { number: number; value: Record<string, unknown> };

/** The file's non-blank lines as objects; a line that is not a JSON object fails with the file and its line number. */
export function readSessionLines(text: string, { name }: { name: string }): SessionLine[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const out: SessionLine[] = [];
  const rows = body.split("\n");
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] ?? "";
    if (row.trim() === "") continue;
    const deep = tooDeep(row);
    if (deep) throw new UsageError(`${name}:${i + 1}: ${deep}`);
    const json = readJson(row);
    if (!json.ok) throw new UsageError(`${name}:${i + 1}:${json.column}: not valid JSON: ${json.message}`);
    if (!isRecord(json.value)) {
      throw new UsageError(`${name}:${i + 1}: expected a JSON object per line, found ${describeJson(json.value)}`);
    }
    out.push({ number: i + 1, value: json.value });
  }
  if (out.length === 0) throw new UsageError(`${name}: empty file (no session lines)`);
  return out;
}

/** A path the agent gave inside its working directory, relative to it (as Loom's actions take paths). */
export function relativePath(path: string, cwd: string | undefined): string {
  if (cwd && cwd !== "/" && path.startsWith(`${cwd.replace(/\/$/, "")}/`)) {
    return path.slice(cwd.replace(/\/$/, "").length + 1) || ".";
  }
  if (cwd && path === cwd) return ".";
  return path === "" ? "." : path;
}

/** The value that occurs most often (the first of equals); undefined for none. */
export function mostCommon(values: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | undefined;
  for (const [v, n] of counts) if (best === undefined || n > (counts.get(best) ?? 0)) best = v;
  return best;
}
