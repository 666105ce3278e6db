// Line diffs and git-style unified patches of whole files, from two texts: what `--diff FILE` writes and what the
// report's line counts are. Myers' O(ND) diff on the lines between the common head and tail; past MAX_EDITS edits the
// middle counts as replaced whole (still a correct patch, only not the smallest). The patch is what `git diff` prints
// for the same change (a/ and b/ prefixes, new/deleted file and mode lines, 3 lines of context, "\ No newline at end of
// file"), so `git apply` takes it on a copy of the starting workspace. A symbolic link is diffed as git does: mode
// 120000, its target as the content.
import { quotedName } from "./file-names.ts";

/** Past this many edits in one file's middle, the diff stops searching for the smallest one. */
const MAX_EDITS = 4_000;
const CONTEXT = 3;

type Op = { kind: " " | "-" | "+"; line: string };

/** A file's lines, each with its newline (the last may lack one). */
function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/(?<=\n)/);
  return lines;
}

/** The edit script from `a` to `b`: context, removed and added lines in order. */
function editScript(a: string[], b: string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const ops: Op[] = a.slice(0, head).map((line) => ({ kind: " ", line }));
  ops.push(...myers(x, y));
  ops.push(...a.slice(a.length - tail).map((line): Op => ({ kind: " ", line })));
  return ops;
}

function myers(a: string[], b: string[]): Op[] {
  const n = a.length, m = b.length;
  if (n === 0 || m === 0 || n + m > 2 * MAX_EDITS * 8) return replaced(a, b);
  const max = Math.min(n + m, MAX_EDITS);
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && at(v, offset + k - 1) < at(v, offset + k + 1))
        ? at(v, offset + k + 1)
        : at(v, offset + k - 1) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) x++, y++;
      next[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, offset);
    }
    v = next;
  }
  return replaced(a, b);
}

/** Walks Myers' trace back from the end; trace[d] is the furthest x per diagonal before round d. */
function backtrack(a: string[], b: string[], trace: Int32Array[], offset: number): Op[] {
  const ops: Op[] = [];
  let x = a.length, y = b.length;
  for (let d = trace.length - 1; d > 0; d--) {
    const v = at(trace, d);
    const k = x - y;
    const down = k === -d || (k !== d && at(v, offset + k - 1) < at(v, offset + k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(v, offset + prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) ops.push({ kind: " ", line: at(a, --x) }), y--;
    if (down) ops.push({ kind: "+", line: at(b, --y) });
    else ops.push({ kind: "-", line: at(a, --x) });
  }
  while (x > 0 && y > 0) ops.push({ kind: " ", line: at(a, --x) }), y--;
  return ops.reverse();
}

function replaced(a: string[], b: string[]): Op[] {
  return [...a.map((line): Op => ({ kind: "-", line })), ...b.map((line): Op => ({ kind: "+", line }))];
}

/** Lines added and removed from `before` to `after` (null: the file did not exist). */
export function lineCounts(before: string | null, after: string | null): { added: number; removed: number } {
  const ops = editScript(linesOf(before ?? ""), linesOf(after ?? ""));
  return {
    added: ops.filter((op) => op.kind === "+").length,
    removed: ops.filter((op) => op.kind === "-").length,
  };
}

/** One file's change: its text before and after (null: absent), and whether it is executable on each side. */
export type FileTexts = {
  path: string;
  before: string | null;
  after: string | null;
  executableBefore?: boolean;
  executableAfter?: boolean;
  /** A symbolic link on that side: its text is the link's target (git's mode 120000). */
  linkBefore?: boolean;
  linkAfter?: boolean;
};

/** A path as git writes it in a patch: quoted C-style when it holds a quote, a backslash, a control or a non-ASCII byte. */
const named = (prefix: string, path: string) => {
  const quoted = quotedName(path, { ascii: true });
  return quoted.startsWith('"') ? `"${prefix}${quoted.slice(1)}` : `${prefix}${quoted}`;
};

/** git's patch of one file; "" when nothing differs. */
function filePatch(file: FileTexts): string {
  const { path, before, after } = file;
  // A file that became a link (or the other way): git's type change, a deletion and a creation of the same path.
  if (before !== null && after !== null && !!file.linkBefore !== !!file.linkAfter) {
    return filePatch({ ...file, after: null }) + filePatch({ ...file, before: null });
  }
  const modeOf = (executable: boolean | undefined, link: boolean | undefined) =>
    link ? "120000" : executable ? "100755" : "100644";
  const a = named("a/", path), b = named("b/", path);
  const header = [`diff --git ${a} ${b}`];
  if (before === null && after === null) return "";
  if (before === null) header.push(`new file mode ${modeOf(file.executableAfter, file.linkAfter)}`);
  else if (after === null) header.push(`deleted file mode ${modeOf(file.executableBefore, file.linkBefore)}`);
  else if (!file.linkBefore && !!file.executableBefore !== !!file.executableAfter) {
    header.push(`old mode ${modeOf(file.executableBefore, false)}`, `new mode ${modeOf(file.executableAfter, false)}`);
  }
  const ops = editScript(linesOf(before ?? ""), linesOf(after ?? ""));
  const hunks = hunksOf(ops);
  if (hunks.length === 0) return header.length > 1 ? `${header.join("\n")}\n` : "";
  header.push(`--- ${before === null ? "/dev/null" : a}`, `+++ ${after === null ? "/dev/null" : b}`);
  return `${header.join("\n")}\n${hunks.join("")}`;
}

/** A patch of every file, in path order. */
export function unifiedDiff(files: readonly FileTexts[]): string {
  return [...files].sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0)).map(filePatch).join("");
}

function hunksOf(ops: Op[]): string[] {
  const changed = ops.map((op, i) => (op.kind === " " ? -1 : i)).filter((i) => i >= 0);
  if (changed.length === 0) return [];
  // Group changes whose context overlaps (git joins hunks less than 2 × CONTEXT lines apart).
  const groups: [number, number][] = [];
  for (const i of changed) {
    const last = groups.at(-1);
    if (last && i - last[1] <= 2 * CONTEXT + 1) last[1] = i;
    else groups.push([i, i]);
  }
  // Line numbers before each op, on both sides.
  const aAt: number[] = [], bAt: number[] = [];
  let aLine = 1, bLine = 1;
  for (const op of ops) {
    aAt.push(aLine);
    bAt.push(bLine);
    if (op.kind !== "+") aLine++;
    if (op.kind !== "-") bLine++;
  }
  return groups.map(([first, last]) => {
    const from = Math.max(0, first - CONTEXT), to = Math.min(ops.length - 1, last + CONTEXT);
    const slice = ops.slice(from, to + 1);
    const aCount = slice.filter((op) => op.kind !== "+").length;
    const bCount = slice.filter((op) => op.kind !== "-").length;
    const aStart = aCount === 0 ? at(aAt, from) - 1 : at(aAt, from);
    const bStart = bCount === 0 ? at(bAt, from) - 1 : at(bAt, from);
    const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);
    let text = `@@ -${range(aStart, aCount)} +${range(bStart, bCount)} @@\n`;
    for (const op of slice) {
      text += `${op.kind}${op.line}`;
      if (!op.line.endsWith("\n")) text += "\n\\ No newline at end of file\n";
    }
    return text;
  });
}

/** items[i], which the algorithm keeps in range: a bug, not an input, when it is not. */
function at<T>(items: ArrayLike<T>, i: number): T {
  const item = items[i];
  if (item === undefined) throw new Error(`unified diff: index ${i} out of range`);
  return item;
}
