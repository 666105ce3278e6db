// A fingerprint of the workspace's content, so the revision counts every change — a command's or a test's too, not
// only the edits Loom made itself. git's own approach: a stat cache (size, mtime, ctime, inode, mode) per file, with a
// content hash only for entries whose stat changed, so touching a file without changing it is no change; an entry
// modified too close to the moment it was hashed is hashed again next time (git's "racy" entries). In a git
// repository the index seeds the hashes (git's blob ids, the same hash Loom computes) for entries whose whole stat —
// ctime and inode included — matches the index, so the first fingerprint of a large checkout hashes only what differs.
// Git itself is never run: a workspace's git config could make it run programs outside the sandbox.
//
// The walk is iterative (a tree 30,000 folders deep is walked, not a stack overflow), and deep folders are reached
// through a handle on an ancestor (`/proc/self/fd/N/rest`, Linux's openat) once their path nears PATH_MAX, so a file
// deeper than PATH_MAX is fingerprinted like any other. What does not count as a change: only the paths the slice's
// `workspace_ignore` globs name (gitignore syntax), by default DEFAULT_WORKSPACE_IGNORE, and Loom's own output files
// (the report, recording, trace, diff of this run: `exclude`, exact paths, so no pattern can hide a file of the agent).
import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  type Stats,
} from "node:fs";
import { isIgnored, parseIgnore, type ScopedRules } from "../text/ignore-rules.ts";

/**
 * Paths whose changes are not changes of the workspace unless a slice says otherwise: the version-control folders at
 * the top (a nested repository's `.git` is content: its config and hooks run code) and the caches test runners
 * rewrite on every run. `__pycache__` is not among them: Python runs with PYTHONDONTWRITEBYTECODE=1, so a test run
 * writes none, and a `.pyc` planted there (which Python would load) is a change.
 */
export const DEFAULT_WORKSPACE_IGNORE: readonly string[] = [
  "/.git/",
  "/.hg/",
  "/.svn/",
  ".pytest_cache/",
  ".mypy_cache/",
  ".ruff_cache/",
];

/** Files larger than this are compared by stat signature only (a change in it counts as a change). */
const MAX_HASHED_BYTES = 64 * 1024 * 1024;
/** Entries modified this close to the moment they were hashed are hashed again: a timestamp can hide a change. */
const RACY_MS = 1_000;
/** Past this many characters a folder is reached through a handle on an ancestor, not by its full path. */
const ANCHOR_PATH_CHARS = 2_048;

const PROC_FD = "/proc/self/fd";
const anchorable = process.platform === "linux" && existsSync(PROC_FD);
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/**
 * What the walk knows of one path: a file's stat signature (git's: what changes when its content may have) and content
 * hash; a folder; a symbolic link and its target; anything else (a FIFO, a socket) and its mode.
 */
type Entry =
  | { kind: "f"; size: number; mtime: number; ctime: number; ino: number; mode: number; hash: string; racy: boolean }
  | { kind: "d" }
  | { kind: "l"; target: string }
  | { kind: "o"; mode: number };
type FileEntry = Extract<Entry, { kind: "f" }>;

const FOLDER: Entry = { kind: "d" };

function sameStat(entry: FileEntry, info: Stats): boolean {
  return entry.size === info.size && entry.mtime === info.mtimeMs && entry.ctime === info.ctimeMs &&
    entry.ino === info.ino && entry.mode === info.mode;
}

function statKey(info: Stats): string {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.mode}`;
}

/** Whether two entries describe the same content: kind, link target, and for files the hash and the executable bit. */
function sameContent(a: Entry, b: Entry): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "f") {
    return a.hash === (b as FileEntry).hash && (a.mode & 0o111 ? 1 : 0) === ((b as FileEntry).mode & 0o111 ? 1 : 0);
  }
  if (a.kind === "l") return a.target === (b as { target: string }).target;
  if (a.kind === "o") return a.mode === (b as { mode: number }).mode;
  return true;
}

/** A folder on the walk's stack: where to reach it, its entries still to visit, the handle it owns (if any). */
type Frame = { access: string; prefix: string; names: string[]; next: number; fd: number | null };

export class WorkspaceFingerprint {
  readonly #root: string;
  readonly #now: () => number;
  readonly #ignore: ScopedRules[];
  /** Whether any glob can name a file (most name only folders: files then skip the check). */
  readonly #ignoresFiles: boolean;
  /** Loom's own output files of this run, as exact paths relative to the root. */
  readonly #exclude: ReadonlySet<string>;
  #entries = new Map<string, Entry>();
  #seeded = false;
  #walked = false;

  constructor(
    root: string,
    { now = Date.now, ignore = DEFAULT_WORKSPACE_IGNORE, exclude = new Set() }: {
      now?: () => number;
      ignore?: readonly string[];
      exclude?: ReadonlySet<string>;
    } = {},
  ) {
    this.#root = root;
    this.#exclude = exclude;
    this.#now = now;
    const rules = parseIgnore(ignore.join("\n"));
    this.#ignore = [{ base: "", rules }];
    this.#ignoresFiles = rules.some((rule) => !rule.directoryOnly);
  }

  /**
   * Walks the workspace and says whether anything differs from the previous walk: a path added, removed, or with
   * other content, type, link target or executable bit. The first walk only records (false).
   */
  changed(): boolean {
    const first = !this.#walked;
    const differs = this.#walk();
    this.#walked = true;
    return !first && differs;
  }

  /** A digest of every path, type and content under the root, except what the ignore globs name. */
  take(): string {
    this.#walk();
    this.#walked = true;
    const parts: string[] = [];
    for (const [path, entry] of this.#entries) {
      if (entry.kind === "f") parts.push(`f\0${path}\0${entry.mode & 0o111 ? "x" : "-"}\0${entry.hash}\0`);
      else if (entry.kind === "l") parts.push(`l\0${path}\0${entry.target}\0`);
      else if (entry.kind === "o") parts.push(`o\0${path}\0${entry.mode}\0`);
      else parts.push(`d\0${path}\0`);
    }
    return createHash("sha256").update(parts.join("")).digest("hex");
  }

  /** The regular files of the last walk: path -> content signature (executable bit and hash), for snapshots. */
  files(): Map<string, string> {
    const files = new Map<string, string>();
    for (const [path, entry] of this.#entries) {
      if (entry.kind === "f") files.set(path, `${entry.mode & 0o111 ? "x" : "-"}${entry.hash}`);
    }
    return files;
  }

  /** One walk: the new entries replace the old; returns whether any differs (or appeared, or went away). */
  #walk(): boolean {
    if (!this.#seeded) {
      this.#seeded = true;
      this.#entries = seedFromGitIndex(this.#root);
    }
    const previous = this.#entries;
    // Seeds from git's index are not a previous walk: with them, every path still counts as seen for the first time.
    const compare = this.#walked;
    let differs = false;
    let carried = 0;
    const started = this.#now();
    const next = new Map<string, Entry>();
    const record = (path: string, entry: Entry) => {
      next.set(path, entry);
      if (!compare || differs) return;
      const before = previous.get(path);
      if (before === undefined || !sameContent(before, entry)) differs = true;
      else carried++;
    };
    const stack: Frame[] = [];
    const enter = (access: string, prefix: string, fd: number | null) => {
      let names: string[];
      try {
        names = readdirSync(access).sort();
      } catch {
        if (fd !== null) closeSync(fd);
        return; // unreadable or vanished
      }
      stack.push({ access, prefix, names, next: 0, fd });
    };
    enter(this.#root, "", null);
    for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
      const name = frame.names[frame.next++];
      if (name === undefined) {
        // the folder is done
        stack.pop();
        if (frame.fd !== null) closeSync(frame.fd);
        continue;
      }
      const path = frame.prefix === "" ? name : `${frame.prefix}/${name}`;
      const full = `${frame.access}/${name}`;
      let info: Stats;
      try {
        info = lstatSync(full);
      } catch {
        continue; // vanished while walking
      }
      if (info.isDirectory()) {
        if (isIgnored(this.#ignore, path, true)) continue;
        record(path, FOLDER);
        if (full.length < ANCHOR_PATH_CHARS || !anchorable) enter(full, path, null);
        else {
          // Deep: hold a handle on this folder and reach what is below it from there.
          let fd: number;
          try {
            fd = openSync(full, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
          } catch {
            record(path, { kind: "o", mode: -1 });
            continue;
          }
          enter(`${PROC_FD}/${fd}`, path, fd);
        }
        continue;
      }
      if (this.#exclude.has(path) || (this.#ignoresFiles && isIgnored(this.#ignore, path, false))) continue;
      if (info.isSymbolicLink()) {
        record(path, { kind: "l", target: safeReadlink(full) });
        continue;
      }
      if (!info.isFile()) {
        record(path, { kind: "o", mode: info.mode });
        continue;
      }
      const before = previous.get(path);
      if (before?.kind === "f" && !before.racy && sameStat(before, info)) {
        // The common case, kept cheap: unchanged and settled, the entry carries over as it is.
        next.set(path, before);
        if (compare) carried++;
        continue;
      }
      record(path, {
        kind: "f",
        size: info.size,
        mtime: info.mtimeMs,
        ctime: info.ctimeMs,
        ino: info.ino,
        mode: info.mode,
        hash: contentHash(full, info),
        racy: Math.max(info.mtimeMs, info.ctimeMs) >= started - RACY_MS,
      });
    }
    this.#entries = next;
    // Every path now was there before with the same content; anything more before is what went away.
    return differs || (compare && carried !== previous.size);
  }
}

/** git's blob id of a file's bytes: comparable with the ids in git's index. */
function contentHash(path: string, info: Stats): string {
  const signature = statKey(info);
  if (info.size > MAX_HASHED_BYTES) return `stat:${signature}`;
  let fd: number | undefined;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!fstatSync(fd).isFile()) return `stat:${signature}`;
    const bytes = readFileSync(fd);
    return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
  } catch {
    return `stat:${signature}`;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "";
  }
}

const NS = 1_000_000_000n;

/**
 * Entries from git's index (versions 2 and 3) whose recorded stat still matches the file as git checks it — size,
 * mtime and ctime to the nanosecond the index holds, inode and mode — keyed by path, with git's blob id as their hash.
 * An entry as new as the index itself is not trusted (git's racy rule). Anything unreadable or unexpected yields no
 * seed: the walk then hashes everything.
 */
function seedFromGitIndex(root: string): Map<string, Entry> {
  const seeds = new Map<string, Entry>();
  let bytes: Uint8Array;
  let indexMtimeNs: bigint;
  try {
    const gitDir = gitDirectory(root);
    if (!gitDir) return seeds;
    const indexPath = `${gitDir}/index`;
    bytes = readFileSync(indexPath);
    indexMtimeNs = lstatSync(indexPath, { bigint: true }).mtimeNs;
  } catch {
    return seeds;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || new TextDecoder().decode(bytes.subarray(0, 4)) !== "DIRC") return seeds;
  const version = view.getUint32(4);
  if (version !== 2 && version !== 3) return seeds;
  const count = view.getUint32(8);
  let at = 12;
  const decoder = new TextDecoder();
  for (let i = 0; i < count; i++) {
    if (at + 62 > bytes.length) return new Map();
    const ctimeS = BigInt(view.getUint32(at));
    const ctimeN = BigInt(view.getUint32(at + 4));
    const mtimeS = BigInt(view.getUint32(at + 8));
    const mtimeN = BigInt(view.getUint32(at + 12));
    const ino = view.getUint32(at + 20);
    const mode = view.getUint32(at + 24);
    const size = view.getUint32(at + 36);
    const sha = Array.from(bytes.subarray(at + 40, at + 60), (b) => b.toString(16).padStart(2, "0")).join("");
    const flags = view.getUint16(at + 60);
    const extended = version === 3 && (flags & 0x4000) !== 0;
    const nameStart = at + 62 + (extended ? 2 : 0);
    const nameEnd = bytes.indexOf(0, nameStart);
    if (nameEnd === -1) return new Map();
    const path = decoder.decode(bytes.subarray(nameStart, nameEnd));
    const entryLength = nameEnd - at + 1;
    at += Math.ceil(entryLength / 8) * 8;
    const stage = (flags >> 12) & 0x3;
    if (stage !== 0 || (mode & 0o170000) !== 0o100000) continue;
    // git's own racy rule: an entry as new as the index itself may hide a change, so it is not trusted.
    if (mtimeS * NS + mtimeN >= indexMtimeNs) continue;
    let info;
    try {
      info = lstatSync(`${root}/${path}`, { bigint: true });
    } catch {
      continue;
    }
    if (!info.isFile() || Number(info.size & 0xffffffffn) !== size || Number(info.ino & 0xffffffffn) !== ino) continue;
    if ((Number(info.mode) & 0o111 ? 0o755 : 0o644) !== (mode & 0o777)) continue;
    // Seconds must match; nanoseconds only where the index recorded them (git built without them writes 0).
    if (info.mtimeNs / NS !== mtimeS || info.ctimeNs / NS !== ctimeS) continue;
    if ((mtimeN !== 0n && info.mtimeNs % NS !== mtimeN) || (ctimeN !== 0n && info.ctimeNs % NS !== ctimeN)) continue;
    const plain = lstatSync(`${root}/${path}`);
    seeds.set(path, {
      kind: "f",
      size: plain.size,
      mtime: plain.mtimeMs,
      ctime: plain.ctimeMs,
      ino: plain.ino,
      mode: plain.mode,
      hash: sha,
      racy: false,
    });
  }
  return seeds;
}

/** The git directory of a workspace that is a repository's top level (`.git` directory, or a `gitdir:` file). */
function gitDirectory(root: string): string | undefined {
  const dotGit = `${root}/.git`;
  const info = lstatSync(dotGit, { throwIfNoEntry: false });
  if (!info) return undefined;
  if (info.isDirectory()) return dotGit;
  if (!info.isFile()) return undefined;
  const match = /^gitdir: (.+)$/m.exec(new TextDecoder().decode(readFileSync(dotGit)));
  if (!match) return undefined;
  const [, gitdir = ""] = match; // (.+) always captures
  const dir = gitdir.trim();
  return dir.startsWith("/") ? dir : `${root}/${dir}`;
}
