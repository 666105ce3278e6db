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
// `workspace_ignore` globs name (gitignore syntax), by default DEFAULT_WORKSPACE_IGNORE.
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
import { isIgnored, parseIgnore, type ScopedRules } from "../ignore-rules.ts";

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

/** A file's stat signature (git's: what changes when its content may have) and its content hash. */
type Entry = { size: number; mtime: number; ctime: number; ino: number; mode: number; hash: string; racy: boolean };

function sameStat(entry: Entry, info: Stats): boolean {
  return entry.size === info.size && entry.mtime === info.mtimeMs && entry.ctime === info.ctimeMs &&
    entry.ino === info.ino && entry.mode === info.mode;
}

function statKey(info: Stats): string {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.mode}`;
}

/** A folder on the walk's stack: where to reach it, its entries still to visit, the handle it owns (if any). */
type Frame = { access: string; prefix: string; names: string[]; next: number; fd: number | null };

export class WorkspaceFingerprint {
  readonly #root: string;
  readonly #now: () => number;
  readonly #ignore: ScopedRules[];
  /** Whether any glob can name a file (most name only folders: files then skip the check). */
  readonly #ignoresFiles: boolean;
  #entries = new Map<string, Entry>();
  #seeded = false;

  constructor(
    root: string,
    { now = Date.now, ignore = DEFAULT_WORKSPACE_IGNORE }: { now?: () => number; ignore?: readonly string[] } = {},
  ) {
    this.#root = root;
    this.#now = now;
    const rules = parseIgnore(ignore.join("\n"));
    this.#ignore = [{ base: "", rules }];
    this.#ignoresFiles = rules.some((rule) => !rule.directoryOnly);
  }

  /** A digest of every path, type and content under the root, except what the ignore globs name. */
  take(): string {
    if (!this.#seeded) {
      this.#seeded = true;
      this.#entries = seedFromGitIndex(this.#root);
    }
    const started = this.#now();
    const next = new Map<string, Entry>();
    // One string hashed at the end: a native hash call per entry costs more than the lstat it follows.
    const parts: string[] = [];
    const digest = { update: (part: string) => parts.push(part) };
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
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.next >= frame.names.length) {
        stack.pop();
        if (frame.fd !== null) closeSync(frame.fd);
        continue;
      }
      const name = frame.names[frame.next++];
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
        digest.update(`d\0${path}\0`);
        if (full.length < ANCHOR_PATH_CHARS || !anchorable) enter(full, path, null);
        else {
          // Deep: hold a handle on this folder and reach what is below it from there.
          let fd: number;
          try {
            fd = openSync(full, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
          } catch {
            digest.update(`?\0${path}\0`);
            continue;
          }
          enter(`${PROC_FD}/${fd}`, path, fd);
        }
        continue;
      }
      if (this.#ignoresFiles && isIgnored(this.#ignore, path, false)) continue;
      if (info.isSymbolicLink()) {
        digest.update(`l\0${path}\0${safeReadlink(full)}\0`);
        continue;
      }
      if (!info.isFile()) {
        digest.update(`o\0${path}\0${info.mode}\0`);
        continue;
      }
      const previous = this.#entries.get(path);
      if (previous && !previous.racy && sameStat(previous, info)) {
        // The common case, kept cheap: unchanged and settled, the entry carries over as it is.
        next.set(path, previous);
        digest.update(`f\0${path}\0${info.mode & 0o111 ? "x" : "-"}\0${previous.hash}\0`);
        continue;
      }
      const hash = contentHash(full, info);
      const racy = Math.max(info.mtimeMs, info.ctimeMs) >= started - RACY_MS;
      next.set(path, {
        size: info.size,
        mtime: info.mtimeMs,
        ctime: info.ctimeMs,
        ino: info.ino,
        mode: info.mode,
        hash,
        racy,
      });
      digest.update(`f\0${path}\0${info.mode & 0o111 ? "x" : "-"}\0${hash}\0`);
    }
    this.#entries = next;
    return createHash("sha256").update(parts.join("")).digest("hex");
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
  const dir = match[1].trim();
  return dir.startsWith("/") ? dir : `${root}/${dir}`;
}
