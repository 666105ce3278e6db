// Loom's own snapshot of the workspace's text, so a run can say what it changed — files, lines added and removed per
// step and in all, and a patch (`--diff FILE`) — without calling git (a workspace's git config can run programs). The
// fingerprint says which entries changed (WorkspaceFingerprint.delta); only those are read again, so an action costs
// what it changed, not the size of the tree. Links are entries too: a link's text is its target, diffed as git does
// (mode 120000), and a file that became a link (or the other way) is a type change. Names that are not UTF-8 are kept
// as their bytes (file-names.ts) and shown quoted, git's way. Memory is bounded: files past MAX_FILE_BYTES, binary
// files (a NUL byte), anything past MAX_TOTAL_BYTES and entries that are neither file nor link are kept as "not text":
// they are listed as changed, with no line counts, and left out of the patch (said in it).
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { quotedName } from "../text/file-names.ts";
import { type FileTexts, lineCounts, unifiedDiff } from "../text/unified-diff.ts";
import type { FileChange } from "../vocabulary/reports.ts";
import { onDisk } from "./workspace-entry.ts";

const MAX_FILE_BYTES = 1024 * 1024;
const MAX_TOTAL_BYTES = 64 * 1024 * 1024;

/**
 * An entry's content as kept: its signature (WorkspaceFingerprint.entries: `x`/`-` and a hash for a file, `l` and the
 * target for a link, `o` otherwise), and its text (null when not kept: binary, too large, over the budget, not a file
 * or link).
 */
type Kept = { sig: string; text: string | null };

type Kind = "file" | "link" | "other";

function kindOf(sig: string): Kind {
  return sig.startsWith("l") ? "link" : sig.startsWith("o") ? "other" : "file";
}

export class WorkspaceSnapshot {
  readonly #root: string;
  #start: Map<string, Kept> | null = null;
  #now = new Map<string, Kept>();
  #bytes = 0;

  constructor(root: string) {
    this.#root = root;
  }

  /** Keeps every entry of a walk (path -> signature) as the start. */
  start(entries: ReadonlyMap<string, string>): { added: number; removed: number } {
    this.#now = new Map();
    for (const [path, sig] of entries) this.#now.set(path, { sig, text: this.#read(path, sig) });
    this.#start = new Map(this.#now);
    return { added: 0, removed: 0 };
  }

  /**
   * Takes in what changed since the last call (path -> signature, null when gone): reads the entries whose signature
   * changed and returns the lines added and removed (null when a changed entry's text is not kept).
   */
  apply(delta: ReadonlyMap<string, string | null>): { added: number; removed: number } | null {
    if (this.#start === null) {
      return this.start(new Map([...delta].filter((e): e is [string, string] => e[1] !== null)));
    }
    let added = 0, removed = 0, known = true;
    for (const [path, sig] of delta) {
      const before = this.#now.get(path);
      if (before?.sig === sig) continue;
      const kept = sig === null ? null : { sig, text: this.#read(path, sig) };
      if (kept === null) this.#now.delete(path);
      else this.#now.set(path, kept);
      if ((before && before.text === null) || (kept && kept.text === null)) known = false;
      else {
        const counts = lineCounts(before?.text ?? null, kept?.text ?? null);
        added += counts.added;
        removed += counts.removed;
      }
    }
    return known ? { added, removed } : null;
  }

  /** Every entry that differs from the start, in path order (none when the workspace was never looked at). */
  changes(): FileChange[] {
    return this.#texts().map((file) => {
      const change: FileChange["change"] = file.before === null
        ? "added"
        : file.after === null
        ? "deleted"
        : file.kindBefore !== file.kindAfter
        ? "type_changed"
        : "modified";
      const known = file.before !== undefined && file.after !== undefined && !file.unknown;
      const counts = known ? lineCounts(file.before, file.after) : null;
      return {
        path: quotedName(file.path),
        change,
        lines_added: counts?.added ?? null,
        lines_removed: counts?.removed ?? null,
      };
    });
  }

  /** A git-style patch of the changes (`git apply` takes it on a copy of the start); entries not kept are named. */
  patch(): string {
    const texts = this.#texts();
    const skipped = texts.filter((file) => file.unknown).map((file) => quotedName(file.path));
    const body = unifiedDiff(texts.filter((file) => !file.unknown));
    if (skipped.length === 0) return body;
    // Text before the first "diff --git" is ignored by git apply: the files the patch cannot carry are said there.
    const note = skipped.map((path) =>
      `# not in this patch (binary, larger than ${MAX_FILE_BYTES} bytes, or not a file or link): ${path}\n`
    );
    return `${note.join("")}${body}`;
  }

  #texts(): (FileTexts & { unknown: boolean; kindBefore: Kind | undefined; kindAfter: Kind | undefined })[] {
    const start = this.#start;
    if (start === null) return [];
    const paths = new Set([...start.keys(), ...this.#now.keys()]);
    const out: (FileTexts & { unknown: boolean; kindBefore: Kind | undefined; kindAfter: Kind | undefined })[] = [];
    for (const path of [...paths].sort()) {
      const a = start.get(path), b = this.#now.get(path);
      if (a?.sig === b?.sig) continue;
      out.push({
        path,
        before: a ? a.text ?? "" : null,
        after: b ? b.text ?? "" : null,
        executableBefore: a?.sig.startsWith("x"),
        executableAfter: b?.sig.startsWith("x"),
        linkBefore: a !== undefined && kindOf(a.sig) === "link",
        linkAfter: b !== undefined && kindOf(b.sig) === "link",
        kindBefore: a && kindOf(a.sig),
        kindAfter: b && kindOf(b.sig),
        unknown: (a !== undefined && a.text === null) || (b !== undefined && b.text === null),
      });
    }
    return out;
  }

  /**
   * An entry's text, or null when it is not kept: a link's is its target; a file's its content unless unreadable,
   * binary, too large or past the budget; anything else has none.
   */
  #read(path: string, sig: string): string | null {
    const kind = kindOf(sig);
    if (kind === "link") return sig.slice(1);
    if (kind === "other") return null;
    let fd: number | undefined;
    try {
      fd = openSync(onDisk(`${this.#root}/${path}`), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
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
