// What a refusal shows of what is actually there, so a model can correct itself instead of repeating the mistake
// (issue 44): an edit whose old text does not occur gets the file's lines most like it; an action on a path that does
// not exist gets the existing paths nearest it. Pure: the file's text and the workspace's file list come in. Both are
// bounded excerpts (a few lines, a few paths, each clipped), never a file or a listing whole.
import { clipEnd } from "../text/clip.ts";

/** At most this many lines of the file, each clipped to LINE_CHARS characters. */
export const NEAREST_LINES_MAX = 6;
const LINE_CHARS = 160;
/** Whitespace-insensitive occurrences shown at most. */
const OCCURRENCES_MAX = 3;
/** Lines of the old text compared for similarity, and the file text that is scored at all (larger: no lines). */
const OLD_LINES_COMPARED = 20;
const SIMILARITY_MAX_CHARS = 1024 * 1024;
/** Lines less alike than this (Dice coefficient over character pairs, whitespace left out) are not shown. */
const SIMILARITY_FLOOR = 0.4;

/** At most this many paths, each clipped to PATH_CHARS characters. */
export const NEAREST_PATHS_MAX = 12;
const SAME_NAME_MAX = 5;
const PATH_CHARS = 160;

export type NumberedLine = { line: number; text: string };

const compact = (text: string) => text.replace(/\s+/g, "");

/**
 * The lines of `content` nearest `oldText`: where it occurs once whitespace is ignored (a model that wrote `-b` for
 * `a - b`, or the wrong indentation), else the lines most like the old text's lines. Line numbers from 1; empty when
 * nothing is near.
 */
export function nearestLines(content: string, oldText: string): NumberedLine[] {
  const lines = content.split("\n").map((line) => line.replace(/\r$/, ""));
  const numbered = (indexes: Iterable<number>): NumberedLine[] =>
    [...new Set(indexes)].sort((a, b) => a - b).slice(0, NEAREST_LINES_MAX).map((i) => ({
      line: i + 1,
      text: clipEnd(lines[i] ?? "", LINE_CHARS),
    }));
  const wanted = compact(oldText);
  if (wanted === "") return [];
  const found = looseOccurrences(lines, wanted);
  if (found.length > 0) return numbered(found);
  if (content.length > SIMILARITY_MAX_CHARS) return [];
  const olds = oldText.split("\n").map(compact).filter((line) => line.length > 0).slice(0, OLD_LINES_COMPARED)
    .map(pairsOf);
  const scored: { index: number; score: number }[] = [];
  lines.forEach((line, index) => {
    const text = compact(line);
    if (text === "") return;
    const pairs = pairsOf(text);
    let score = 0;
    for (const old of olds) score = Math.max(score, dice(old, pairs));
    if (score >= SIMILARITY_FLOOR) scored.push({ index, score });
  });
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  return numbered(scored.slice(0, NEAREST_LINES_MAX).map((s) => s.index));
}

/** The line indexes each whitespace-insensitive occurrence of `wanted` spans (the first few occurrences). */
function looseOccurrences(lines: readonly string[], wanted: string): number[] {
  const starts: number[] = [];
  let joined = "";
  for (const line of lines) {
    starts.push(joined.length);
    joined += compact(line);
  }
  const lineAt = (offset: number) => {
    let lo = 0, hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const spans: number[] = [];
  for (
    let at = joined.indexOf(wanted), n = 0;
    at !== -1 && n < OCCURRENCES_MAX;
    at = joined.indexOf(wanted, at + 1), n++
  ) {
    const first = lineAt(at), last = lineAt(at + wanted.length - 1);
    for (let i = first; i <= last; i++) spans.push(i);
  }
  return spans;
}

/** The character pairs of a text, counted. */
function pairsOf(text: string): Map<string, number> {
  const pairs = new Map<string, number>();
  for (let i = 0; i + 1 < text.length; i++) {
    const pair = text.slice(i, i + 2);
    pairs.set(pair, (pairs.get(pair) ?? 0) + 1);
  }
  if (text.length === 1) pairs.set(text, 1);
  return pairs;
}

/** The Dice coefficient of two counted pair sets: 1 alike, 0 nothing shared. */
function dice(a: Map<string, number>, b: Map<string, number>): number {
  let shared = 0, total = 0;
  for (const [pair, count] of a) {
    total += count;
    shared += Math.min(count, b.get(pair) ?? 0);
  }
  for (const count of b.values()) total += count;
  return total === 0 ? 0 : (2 * shared) / total;
}

/**
 * The existing paths nearest `missing`, from the workspace's files (relative paths, `/`-separated): files of the same
 * name elsewhere, then the entries of the nearest folder on its way that exists (folders with a trailing `/`).
 */
export function nearestPaths(files: readonly string[], missing: string): string[] {
  const parts = missing.replace(/\\/g, "/").split("/").filter((part) => part !== "" && part !== ".");
  const name = parts.at(-1) ?? "";
  const lower = name.toLowerCase();
  const baseOf = (file: string) => file.slice(file.lastIndexOf("/") + 1);
  const sameName = name === "" ? [] : [
    ...files.filter((file) => baseOf(file) === name),
    ...files.filter((file) => baseOf(file) !== name && baseOf(file).toLowerCase() === lower),
  ].slice(0, SAME_NAME_MAX);
  // The nearest folder on the way that holds a file (the root always counts).
  let folder = "";
  for (let depth = parts.length - 1; depth > 0; depth--) {
    const candidate = parts.slice(0, depth).join("/");
    if (files.some((file) => file.startsWith(`${candidate}/`))) {
      folder = candidate;
      break;
    }
  }
  const prefix = folder === "" ? "" : `${folder}/`;
  const entries = new Set<string>();
  for (const file of files) {
    if (!file.startsWith(prefix)) continue;
    const rest = file.slice(prefix.length);
    const [first, ...deeper] = rest.split("/");
    entries.add(deeper.length === 0 ? file : `${prefix}${first}/`);
  }
  const shown = [...new Set([...sameName, ...entries])].slice(0, NEAREST_PATHS_MAX);
  return shown.map((path) => clipEnd(path, PATH_CHARS));
}
