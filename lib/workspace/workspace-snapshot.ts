// Loom's own snapshot of the workspace's text, so a run can say what it changed — files, lines added and removed per
// step and in all, and a patch (`--diff FILE`) — without calling git (a workspace's git config can run programs). The
// fingerprint says which files' content changed; only those are read again. Memory is bounded: files past
// MAX_FILE_BYTES, binary files (a NUL byte) and anything past MAX_TOTAL_BYTES are kept as "not text": they are listed
// as changed, with no line counts, and left out of the patch (said in it).
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { type FileTexts, lineCounts, unifiedDiff } from "../text/unified-diff.ts";
import type { FileChange } from "../vocabulary/reports.ts";

const MAX_FILE_BYTES = 1024 * 1024;
const MAX_TOTAL_BYTES = 64 * 1024 * 1024;

/** A file's content as kept: its signature, and its text (null when not kept: binary, too large, over the budget). */
type Kept = { sig: string; text: string | null };

export class WorkspaceSnapshot {
  readonly #root: string;
  #start: Map<string, Kept> | null = null;
  #now = new Map<string, Kept>();
  #bytes = 0;

  constructor(root: string) {
    this.#root = root;
  }

  /**
   * Takes in the files of a walk (path -> signature): the first call keeps them as the start; later ones read the
   * files whose signature changed and return the lines added and removed since the previous call (null when a changed
   * file's text is not kept).
   */
  update(files: ReadonlyMap<string, string>): { added: number; removed: number } | null {
    const first = this.#start === null;
    const next = new Map<string, Kept>();
    let added = 0, removed = 0, known = true;
    for (const [path, sig] of files) {
      const before = this.#now.get(path);
      if (before?.sig === sig) {
        next.set(path, before);
        continue;
      }
      const kept = { sig, text: this.#read(path) };
      next.set(path, kept);
      if (first) continue;
      if ((before && before.text === null) || kept.text === null) known = false;
      else {
        const counts = lineCounts(before?.text ?? null, kept.text);
        added += counts.added;
        removed += counts.removed;
      }
    }
    if (!first) {
      for (const [path, before] of this.#now) {
        if (files.has(path)) continue;
        if (before.text === null) known = false;
        else removed += lineCounts(before.text, null).removed;
      }
    }
    this.#now = next;
    if (first) {
      this.#start = next;
      return { added: 0, removed: 0 };
    }
    return known ? { added, removed } : null;
  }

  /** Every file that differs from the start, in path order (none when the workspace was never looked at). */
  changes(): FileChange[] {
    return this.#texts().map((file) => {
      const change: FileChange["change"] = file.before === null
        ? "added"
        : file.after === null
        ? "deleted"
        : "modified";
      const known = file.before !== undefined && file.after !== undefined && !file.unknown;
      const counts = known ? lineCounts(file.before, file.after) : null;
      return {
        path: file.path,
        change,
        lines_added: counts?.added ?? null,
        lines_removed: counts?.removed ?? null,
      };
    });
  }

  /** A git-style patch of the changes (`git apply` takes it on a copy of the start); files not kept are named. */
  patch(): string {
    const texts = this.#texts();
    const skipped = texts.filter((file) => file.unknown).map((file) => file.path);
    const body = unifiedDiff(texts.filter((file) => !file.unknown));
    if (skipped.length === 0) return body;
    // Text before the first "diff --git" is ignored by git apply: the files the patch cannot carry are said there.
    const note = skipped.map((path) =>
      `# not in this patch (binary or larger than ${MAX_FILE_BYTES} bytes): ${path}\n`
    );
    return `${note.join("")}${body}`;
  }

  #texts(): (FileTexts & { unknown: boolean })[] {
    const start = this.#start;
    if (start === null) return [];
    const paths = new Set([...start.keys(), ...this.#now.keys()]);
    const out: (FileTexts & { unknown: boolean })[] = [];
    for (const path of [...paths].sort()) {
      const a = start.get(path), b = this.#now.get(path);
      if (a?.sig === b?.sig) continue;
      out.push({
        path,
        before: a ? a.text ?? "" : null,
        after: b ? b.text ?? "" : null,
        executableBefore: a?.sig.startsWith("x"),
        executableAfter: b?.sig.startsWith("x"),
        unknown: (a !== undefined && a.text === null) || (b !== undefined && b.text === null),
      });
    }
    return out;
  }

  /** A file's text, or null when it is not kept (unreadable, binary, too large, past the budget). */
  #read(path: string): string | null {
    let fd: number | undefined;
    try {
      fd = openSync(`${this.#root}/${path}`, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      const info = fstatSync(fd);
      if (!info.isFile() || info.size > MAX_FILE_BYTES || this.#bytes + info.size > MAX_TOTAL_BYTES) return null;
      const bytes = readFileSync(fd);
      if (bytes.includes(0)) return null;
      const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      this.#bytes += bytes.length;
      return text;
    } catch {
      return null;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}
