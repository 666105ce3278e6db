// What list_files and search look into and how they show it: one line per file or match, capped, names escaped.
import { clipEnd } from "../text/clip.ts";
import { readEntry } from "./workspace-files.ts";
import { resolveInside } from "./workspace-paths.ts";

const MAX_LISTED_FILES = 2000;
export const MAX_SEARCH_MATCHES = 200;
const MAX_SEARCHED_FILE_BYTES = 1024 * 1024;
const MAX_MATCH_LINE_CHARS = 300;

/** Lines for list_files: at most MAX_LISTED_FILES names, then a note of how many more there are. */
export function listingLines(files: readonly string[]): { count: number; lines: string[] } {
  const lines = files.slice(0, MAX_LISTED_FILES).map(shownName);
  const count = lines.length;
  if (files.length > count) lines.push(`[… ${files.length - count} more files not listed …]`);
  return { count, lines };
}

/** One search result line: `path:line:text`, the text clipped to MAX_MATCH_LINE_CHARS. */
export function matchLine(file: string, hit: { line: number; text: string }): string {
  return `${shownName(file)}:${hit.line}:${clipEnd(hit.text, MAX_MATCH_LINE_CHARS)}`;
}

// Names that could break the one-name-per-line format (control characters, including newlines) or be mistaken for such
// a name (a leading quote) are shown as JSON strings: `"a\nb.txt"` is the file whose name has a newline in it.
// \u007f-\u009f and the Unicode line separators are escaped too, since JSON.stringify leaves them raw.
// deno-lint-ignore no-control-regex -- finding control characters is the point
const UNSAFE_NAME = /^"|[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** A workspace path as shown in a listing or a search result: as is, or JSON-quoted when it is unsafe on one line. */
function shownName(name: string): string {
  if (!UNSAFE_NAME.test(name)) return name;
  return JSON.stringify(name).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** The text of a file search may look into, or undefined for files it skips (outside, special, large, binary). */
export function searchableText(root: string, file: string): string | undefined {
  const target = resolveInside(root, file);
  if (!target.ok) return undefined;
  let read;
  try {
    read = readEntry(target.root, target.real, { maxBytes: MAX_SEARCHED_FILE_BYTES });
  } catch {
    return undefined; // special, vanished or swapped for a symlink: skipped
  }
  if (!("bytes" in read) || read.bytes.includes(0)) return undefined;
  return new TextDecoder("utf-8").decode(read.bytes);
}

/** Lines (1-based) where a match starts, each line once; a query may span lines. */
export function matchingLines(text: string, query: string): Array<{ line: number; text: string }> {
  const hits: Array<{ line: number; text: string }> = [];
  let line = 1;
  let scanned = 0;
  let at = text.indexOf(query);
  while (at !== -1) {
    for (let i = text.indexOf("\n", scanned); i !== -1 && i < at; i = text.indexOf("\n", i + 1)) line++;
    const start = text.lastIndexOf("\n", at - 1) + 1;
    const end = text.indexOf("\n", at);
    hits.push({ line, text: text.slice(start, end === -1 ? text.length : end).replace(/\r$/, "") });
    if (end === -1) break;
    // Later matches on this line add nothing; continue on the next one.
    scanned = end + 1;
    line++;
    at = text.indexOf(query, end + 1);
  }
  return hits;
}
