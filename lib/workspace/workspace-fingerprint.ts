// A fingerprint of the workspace's content, so the revision counts every change — a command's or a test's too, not
// only the edits Loom made itself. git's own approach: a stat cache (size, mtime, ctime, inode, mode) per file, with a
// content hash only for entries whose stat changed, so touching a file without changing it is no change; an entry
// modified too close to the moment it was hashed is hashed again next time (git's "racy" entries). A folder's listing
// is kept with its stat (size, mtime, ctime, inode): a folder whose stat did not change has the same names (adding,
// removing or renaming an entry changes its mtime), so only changed folders are read again.
//
// In a git work tree (the workspace is the repository's top level) git does the per-file stat compare, in C and on
// several threads: `git diff-files` names the tracked files whose stat differs from the index, and every other file
// the index records — a regular file, older than the index (git's racy rule), with no assume-unchanged, skip-worktree
// or intent-to-add bit — is taken with the index's blob id (the same hash Loom computes) without a stat of Loom's own.
// Everything else (untracked and ignored files, links, what git names) is stat'ed and hashed by Loom as without git.
// The index is Loom's copy, read at the first walk, before any action ran: a process may rewrite the workspace's own
// (an entry with the new stat and the old blob id hides a change, issue 42), so that one is never read again. git runs
// with none of the workspace's configuration: its git directory is a private, empty one of Loom's holding the copy
// (read through GIT_INDEX_FILE, never written: no optional locks), no system or global config, fsmonitor and hooks
// off, no submodule looked into, a PATH without the workspace — so no filter, hook or fsmonitor the workspace names
// can run. No git, no index, an index git or Loom cannot read (version 4, split): the full scan.
//
// Names are read as bytes (file-names.ts): one that is not UTF-8 is walked, hashed and reported like any other. Each
// walk notes the entries that changed (delta), so the snapshot takes in what changed, not the whole tree (issue 43).
//
// The walk is iterative (a tree 30,000 folders deep is walked, not a stack overflow), and deep folders are reached
// through a handle on an ancestor (`/proc/self/fd/N/rest`, Linux's openat) once their path nears PATH_MAX, so a file
// deeper than PATH_MAX is fingerprinted like any other. What does not count as a change: only the paths the slice's
// `workspace_ignore` globs name (gitignore syntax), by default DEFAULT_WORKSPACE_IGNORE, and Loom's own output files
// (the report, recording, trace, diff of this run: `exclude`, exact paths, so no pattern can hide a file of the agent).
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { decodeName, encodeName, hasRawBytes } from "../text/file-names.ts";
import { isIgnored, parseIgnore, type ScopedRules } from "../text/ignore-rules.ts";
import { trustedPath } from "./process.ts";
import { makeScratch } from "./scratch.ts";

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
/**
 * A name the runtime cannot reach: Deno's file system calls take names as UTF-8, so a name that is not arrives as one
 * with U+FFFD in its place and cannot be looked at. It is kept as an entry of its own, never skipped as if it were not
 * there, and never the same as itself (sameContent): what Loom cannot look at may have changed at every look, so no
 * test result carries over while it is there.
 */
const UNREACHABLE: Entry = { kind: "o", mode: -2 };

/** The path to hand the file system: as it is, or its bytes when a name in it is not UTF-8 (see file-names.ts). */
export function onDisk(path: string): string | Buffer {
  return hasRawBytes(path) ? Buffer.from(encodeName(path)) : path;
}

/** A folder's names, each as the bytes it is (a name that is not UTF-8 is not mangled into another). */
function readNames(path: string): string[] {
  return readdirSync(onDisk(path), { encoding: "buffer" }).map((name) => decodeName(name));
}

/** What the snapshot keeps of an entry that is not a folder: kind and content, as one string (see WorkspaceSnapshot). */
function signature(entry: Entry): string {
  if (entry.kind === "f") return `${entry.mode & 0o111 ? "x" : "-"}${entry.hash}`;
  if (entry.kind === "l") return `l${entry.target}`;
  return `o${entry.kind === "o" ? entry.mode : ""}`;
}

function sameStat(entry: FileEntry, info: Stats): boolean {
  return entry.size === info.size && entry.mtime === info.mtimeMs && entry.ctime === info.ctimeMs &&
    entry.ino === info.ino && entry.mode === info.mode;
}

function statKey(info: Stats): string {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.mode}`;
}

/** Whether two entries describe the same content: kind, link target, and for files the hash and the executable bit. */
function sameContent(a: Entry, b: Entry): boolean {
  if (a.kind === "f" && b.kind === "f") {
    return a.hash === b.hash && (a.mode & 0o111 ? 1 : 0) === (b.mode & 0o111 ? 1 : 0);
  }
  if (a.kind === "l" && b.kind === "l") return a.target === b.target;
  if (a.kind === "o" && b.kind === "o") return a.mode === b.mode && a !== UNREACHABLE;
  return a.kind === "d" && b.kind === "d";
}

/**
 * A folder as last walked: its stat when read (racy when read too soon after a change), its names and their paths from
 * the root (made once: a kept string keeps its hash), and the entries of the names that count, in name order.
 */
type Folder = {
  key: string;
  racy: boolean;
  names: string[];
  paths: string[];
  entries: Map<string, Entry>;
  /** Positions in `names` of the subfolders that count. */
  subfolders: number[];
  /** The index entries every file here came from, when git vouched for all of them (so none was stat'ed). */
  vouchedBy: Map<string, FileEntry> | undefined;
};

/** A folder on the walk's stack: where to reach it, the positions still to visit, the handle it owns (if any). */
type Frame = {
  access: string;
  prefix: string;
  folder: Folder;
  known: Folder | undefined;
  /** The positions to visit: every name, or (nothing in the folder changed) only the subfolders. */
  visit: number[] | undefined;
  next: number;
  fd: number | null;
};

/** What git vouches for in this walk (see gitStatDirty): the trusted index entries minus the files git names. */
type Vouched = { trusted: Map<string, FileEntry>; dirty: Set<string>; dirtyFolders: Set<string> };

function folderKey(info: Stats): string {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.dev}`;
}

export class WorkspaceFingerprint {
  readonly #root: string;
  readonly #now: () => number;
  readonly #ignore: ScopedRules[];
  /** Whether any glob can name a file (most name only folders: files then skip the check). */
  readonly #ignoresFiles: boolean;
  /** Whether to ask git (tests compare with the full scan). */
  readonly #useGit: boolean;
  /** Loom's own output files of this run, as exact paths relative to the root. */
  readonly #exclude: ReadonlySet<string>;
  /** Every folder walked last time, by path from the root ("" is the root). */
  #folders = new Map<string, Folder>();
  /**
   * The workspace's git index as it was at the first walk (before any action ran), held by Loom: git compares the
   * work tree with this copy, never with the index in the workspace, which a process may rewrite (issue 42: an entry
   * given the old blob id and the new stat hid a change). null: there was none Loom could use.
   */
  #index: { bytes: Uint8Array; trusted: Map<string, FileEntry> } | null | undefined;
  #walked = false;
  /** What changed since delta() was last called: path -> signature of its entry now (null: gone). */
  #delta = new Map<string, string | null>();

  constructor(
    root: string,
    { now = Date.now, ignore = DEFAULT_WORKSPACE_IGNORE, git = true, exclude = new Set() }: {
      now?: () => number;
      ignore?: readonly string[];
      git?: boolean;
      exclude?: ReadonlySet<string>;
    } = {},
  ) {
    this.#root = root;
    this.#now = now;
    const rules = parseIgnore(ignore.join("\n"));
    this.#ignore = [{ base: "", rules }];
    this.#ignoresFiles = rules.some((rule) => !rule.directoryOnly);
    this.#useGit = git;
    this.#exclude = exclude;
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
    const root = this.#folders.get("");
    const stack: { prefix: string; entries: [string, Entry][]; next: number }[] = [];
    if (root !== undefined) stack.push({ prefix: "", entries: [...root.entries], next: 0 });
    for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
      const item = frame.entries[frame.next++];
      if (item === undefined) {
        stack.pop();
        continue;
      }
      const [name, entry] = item;
      const path = frame.prefix === "" ? name : `${frame.prefix}/${name}`;
      if (entry.kind === "f") parts.push(`f\0${path}\0${entry.mode & 0o111 ? "x" : "-"}\0${entry.hash}\0`);
      else if (entry.kind === "l") parts.push(`l\0${path}\0${entry.target}\0`);
      else if (entry.kind === "o") parts.push(`o\0${path}\0${entry.mode}\0`);
      else {
        parts.push(`d\0${path}\0`);
        const folder = this.#folders.get(path);
        if (folder !== undefined) stack.push({ prefix: path, entries: [...folder.entries], next: 0 });
      }
    }
    return createHash("sha256").update(parts.join("")).digest("hex");
  }

  /**
   * Every entry of the last walk but folders — files, links, anything else — as path -> signature (kind and content:
   * `x`/`-` and the hash for a file, `l` and the target for a link, `o` and the mode otherwise), for snapshots.
   */
  entries(): Map<string, string> {
    const entries = new Map<string, string>();
    for (const [prefix, folder] of this.#folders) {
      for (const [name, entry] of folder.entries) {
        if (entry.kind !== "d") entries.set(prefix === "" ? name : `${prefix}/${name}`, signature(entry));
      }
    }
    this.#delta.clear();
    return entries;
  }

  /**
   * The entries (not folders) whose content, kind or presence changed since the last call (or entries()): path ->
   * signature now, null when gone. Found while walking, so a snapshot costs what changed, not the size of the tree.
   */
  delta(): Map<string, string | null> {
    const delta = this.#delta;
    this.#delta = new Map();
    return delta;
  }

  /** Whether a path is outside what counts (one place, so further exclusions join here). */
  #ignored(path: string, folder: boolean): boolean {
    if (!folder && this.#exclude.has(path)) return true;
    if (!folder && !this.#ignoresFiles) return false;
    return isIgnored(this.#ignore, path, folder);
  }

  /** What git vouches for now, or undefined: not a git work tree, or git or its index not usable. */
  #vouched(): Vouched | undefined {
    if (!this.#useGit) return undefined;
    if (this.#index === undefined) this.#index = this.#walked ? null : heldIndex(this.#root);
    if (this.#index === null) return undefined;
    const { bytes, trusted } = this.#index;
    if (trusted.size === 0) return undefined;
    const dirty = gitStatDirty(this.#root, bytes);
    if (!dirty) return undefined;
    const dirtyFolders = new Set<string>();
    for (const path of dirty) dirtyFolders.add(path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");
    return { trusted, dirty, dirtyFolders };
  }

  /** One walk: the new folders replace the old; returns whether anything differs (or appeared, or went away). */
  #walk(): boolean {
    const vouched = this.#vouched();
    const previous = this.#folders;
    const compare = this.#walked;
    let differs = false;
    const started = this.#now();
    const folders = new Map<string, Folder>();
    const stack: Frame[] = [];
    const enter = (access: string, prefix: string, fd: number | null, info: Stats) => {
      const key = folderKey(info);
      const racy = Math.max(info.mtimeMs, info.ctimeMs) >= started - RACY_MS;
      const known = previous.get(prefix);
      const same = known !== undefined && known.key === key && !known.racy;
      if (
        same && vouched !== undefined && known.vouchedBy === vouched.trusted && !vouched.dirtyFolders.has(prefix)
      ) {
        // The same names, and every file one git still vouches for with the same index: only subfolders to walk.
        const folder = { ...known, racy };
        folders.set(prefix, folder);
        stack.push({ access, prefix, folder, known, visit: known.subfolders, next: 0, fd });
        return;
      }
      let names: string[];
      let paths: string[];
      if (same) ({ names, paths } = known);
      else {
        try {
          names = readNames(access).sort();
        } catch {
          if (fd !== null) closeSync(fd);
          return; // unreadable or vanished
        }
        paths = prefix === "" ? names : names.map((name) => `${prefix}/${name}`);
      }
      const folder: Folder = {
        key,
        racy,
        names,
        paths,
        entries: new Map(),
        subfolders: [],
        vouchedBy: vouched?.trusted,
      };
      folders.set(prefix, folder);
      stack.push({ access, prefix, folder, known, visit: undefined, next: 0, fd });
    };
    let rootInfo: Stats | undefined;
    try {
      rootInfo = statSync(this.#root);
    } catch { /* no workspace: nothing in it */ }
    if (rootInfo !== undefined) enter(this.#root, "", null, rootInfo);
    for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
      const { folder, known } = frame;
      const at = frame.visit === undefined ? frame.next++ : frame.visit[frame.next++];
      const name = at === undefined ? undefined : folder.names[at];
      const path = at === undefined ? undefined : folder.paths[at];
      if (at === undefined || name === undefined || path === undefined) {
        // the folder is done
        stack.pop();
        if (frame.fd !== null) closeSync(frame.fd);
        if (frame.visit === undefined) {
          if (compare && !differs) differs = !sameEntries(known?.entries, folder.entries);
          if (compare) noteChanges(this.#delta, frame.prefix, known?.entries, folder.entries);
        }
        continue;
      }
      const sure = frame.visit === undefined && !vouched?.dirty.has(path) ? vouched?.trusted.get(path) : undefined;
      if (sure !== undefined) {
        // git saw this tracked file's stat match its index entry: its content is the index's blob.
        if (!this.#ignored(path, false)) folder.entries.set(name, sure);
        continue;
      }
      const full = `${frame.access}/${name}`;
      let info: Stats;
      try {
        info = lstatSync(onDisk(full));
      } catch {
        folder.vouchedBy = undefined;
        if (frame.visit !== undefined) differs = true;
        // A name this runtime cannot reach (see UNREACHABLE) is there all the same; any other vanished while walking.
        else if (name.includes("\uFFFD") && !this.#ignored(path, false)) folder.entries.set(name, UNREACHABLE);
        continue;
      }
      if (info.isDirectory()) {
        if (frame.visit === undefined) {
          if (this.#ignored(path, true)) continue;
          folder.entries.set(name, FOLDER);
          folder.subfolders.push(at);
        }
        if (full.length < ANCHOR_PATH_CHARS || !anchorable) enter(full, path, null, info);
        else {
          // Deep: hold a handle on this folder and reach what is below it from there.
          let fd: number;
          try {
            fd = openSync(onDisk(full), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
          } catch {
            if (frame.visit !== undefined) differs = true;
            else folder.entries.set(name, { kind: "o", mode: -1 });
            folder.vouchedBy = undefined;
            continue;
          }
          enter(`${PROC_FD}/${fd}`, path, fd, info);
        }
        continue;
      }
      if (frame.visit !== undefined) {
        // A subfolder that is one no more: the folder changed after all (its stat is racy-proof only to the second).
        differs = true;
        continue;
      }
      if (this.#ignored(path, false)) continue;
      folder.vouchedBy = undefined;
      if (info.isSymbolicLink()) {
        folder.entries.set(name, { kind: "l", target: safeReadlink(onDisk(full)) });
        continue;
      }
      if (!info.isFile()) {
        folder.entries.set(name, { kind: "o", mode: info.mode });
        continue;
      }
      const before = known?.entries.get(name);
      if (before?.kind === "f" && !before.racy && sameStat(before, info)) {
        // Unchanged and settled: the entry carries over as it is.
        folder.entries.set(name, before);
        continue;
      }
      folder.entries.set(name, {
        kind: "f",
        size: info.size,
        mtime: info.mtimeMs,
        ctime: info.ctimeMs,
        ino: info.ino,
        mode: info.mode,
        hash: contentHash(onDisk(full), info),
        racy: Math.max(info.mtimeMs, info.ctimeMs) >= started - RACY_MS,
      });
    }
    // A folder walked before and not now went away with its parent's entry, which the parent's compare saw.
    if (compare && !differs && rootInfo === undefined && previous.size > 0) differs = true;
    for (const [prefix, gone] of previous) {
      if (!folders.has(prefix)) noteChanges(this.#delta, prefix, gone.entries, undefined);
    }
    this.#folders = folders;
    return differs;
  }
}

/** Notes in `delta` the entries (not folders) of a folder that changed: new content or kind, added, gone. */
function noteChanges(
  delta: Map<string, string | null>,
  prefix: string,
  before: Map<string, Entry> | undefined,
  now: Map<string, Entry> | undefined,
): void {
  const at = (name: string) => (prefix === "" ? name : `${prefix}/${name}`);
  for (const [name, entry] of now ?? []) {
    const was = before?.get(name);
    if (entry.kind === "d") {
      if (was !== undefined && was.kind !== "d") delta.set(at(name), null);
    } else if (was === undefined || !sameContent(was, entry)) delta.set(at(name), signature(entry));
  }
  for (const [name, was] of before ?? []) {
    if (was.kind !== "d" && !now?.has(name)) delta.set(at(name), null);
  }
}

/** Whether a folder's entries are those it had: the same names, each with the same content. */
function sameEntries(before: Map<string, Entry> | undefined, now: Map<string, Entry>): boolean {
  if (before === undefined || before.size !== now.size) return false;
  for (const [name, entry] of now) {
    const was = before.get(name);
    if (was === undefined || !sameContent(was, entry)) return false;
  }
  return true;
}

/** git's blob id of a file's bytes: comparable with the ids in git's index. */
function contentHash(path: string | Buffer, info: Stats): string {
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

function safeReadlink(path: string | Buffer): string {
  try {
    return decodeName(readlinkSync(path, { encoding: "buffer" }));
  } catch {
    return "";
  }
}

const NS = 1_000_000_000n;
const CE_VALID = 0x8000;
const CE_EXTENDED = 0x4000;
const CE_SKIP_WORKTREE = 0x4000;
const CE_INTENT_TO_ADD = 0x2000;

/**
 * The regular files git's index (versions 2 and 3) records that git's answer can vouch for, keyed by path, with git's
 * blob id as their hash: stage 0, no assume-unchanged bit (git would not look at the file), no skip-worktree or
 * intent-to-add bit, and older than the index itself (git's racy rule: such an entry may hide a change) by its mtime
 * and, in whole seconds, by its ctime. Anything
 * unreadable or unexpected (version 4, a split index) yields none: the walk then stats and hashes everything itself.
 */
function trustedIndexEntries(bytes: Uint8Array, indexMtimeNs: bigint): Map<string, FileEntry> {
  const trusted = new Map<string, FileEntry>();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder();
  if (bytes.length < 12 || decoder.decode(bytes.subarray(0, 4)) !== "DIRC") return trusted;
  const version = view.getUint32(4);
  if (version !== 2 && version !== 3) return trusted;
  const count = view.getUint32(8);
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at + 62 > bytes.length) return new Map();
    const ctimeS = BigInt(view.getUint32(at));
    const mtimeS = BigInt(view.getUint32(at + 8));
    const mtimeN = BigInt(view.getUint32(at + 12));
    const mode = view.getUint32(at + 24);
    const flags = view.getUint16(at + 60);
    const extended = version === 3 && (flags & CE_EXTENDED) !== 0;
    const extendedFlags = extended ? view.getUint16(at + 62) : 0;
    const nameStart = at + 62 + (extended ? 2 : 0);
    const nameEnd = bytes.indexOf(0, nameStart);
    if (nameEnd === -1) return new Map();
    const entryStart = at;
    at += Math.ceil((nameEnd - at + 1) / 8) * 8;
    const stage = (flags >> 12) & 0x3;
    if (stage !== 0 || (mode & 0o170000) !== 0o100000 || (flags & CE_VALID) !== 0) continue;
    if ((extendedFlags & (CE_SKIP_WORKTREE | CE_INTENT_TO_ADD)) !== 0) continue;
    if (mtimeS * NS + mtimeN >= indexMtimeNs) continue;
    // git (as most distributions build it) compares whole seconds: a rewrite in the second the entry's ctime was
    // recorded in — with its mtime put back — looks unchanged to it. Such a rewrite comes after the index was written,
    // so an entry whose ctime is not in a second before the index's is not trusted either.
    if (ctimeS >= indexMtimeNs / NS) continue;
    let sha = "";
    for (let b = entryStart + 40; b < entryStart + 60; b++) sha += HEX[bytes[b] as number];
    trusted.set(decodeName(bytes.subarray(nameStart, nameEnd)), {
      kind: "f",
      size: -1,
      mtime: -1,
      ctime: -1,
      ino: -1,
      mode: mode & 0o111 ? 0o100755 : 0o100644,
      hash: sha,
      // Never carried by Loom's own stat compare: once git names it, the file is hashed.
      racy: true,
    });
  }
  return trusted;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** An empty git directory of Loom's, with no configuration (a scratch folder: one a killed Loom left goes later). */
function emptyGitDir(): string {
  const dir = makeScratch("git");
  mkdirSync(join(dir, "objects"));
  mkdirSync(join(dir, "refs"));
  writeFileSync(join(dir, "HEAD"), "ref: refs/heads/loom\n");
  writeFileSync(join(dir, "config"), "");
  return dir;
}

/**
 * The workspace's index, read once at the first walk (before any action), with the entries it can vouch for; null
 * when there is none, or it is unreadable.
 */
function heldIndex(root: string): { bytes: Uint8Array; trusted: Map<string, FileEntry> } | null {
  try {
    const gitDir = gitDirectory(root);
    if (!gitDir) return null;
    const indexPath = `${gitDir}/index`;
    const info = lstatSync(indexPath, { bigint: true });
    if (!info.isFile()) return null;
    const bytes = readFileSync(indexPath);
    return { bytes, trusted: trustedIndexEntries(bytes, info.mtimeNs) };
  } catch {
    return null;
  }
}

/**
 * The paths of tracked files whose stat differs from the index Loom holds (or that are gone), as `git diff-files`
 * names them — it does not refresh the index, so a touched file is named too (Loom then hashes it). The index is
 * Loom's copy, written into its own empty git directory for git to read. undefined when git cannot say.
 */
function gitStatDirty(root: string, index: Uint8Array): Set<string> | undefined {
  let gitDir: string;
  try {
    gitDir = emptyGitDir();
  } catch {
    return undefined;
  }
  try {
    writeFileSync(join(gitDir, "index"), index);
    return gitDiffFiles(root, join(gitDir, "index"), gitDir);
  } catch {
    return undefined;
  } finally {
    rmSync(gitDir, { recursive: true, force: true });
  }
}

function gitDiffFiles(root: string, indexPath: string, gitDir: string): Set<string> | undefined {
  const result = spawnSync(
    "git",
    [
      ...["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false"],
      ...["-c", "core.trustctime=true", "-c", "core.checkStat=default", "-c", "core.filemode=true"],
      ...["-c", "core.ignoreStat=false", "-c", "core.preloadIndex=true", "-c", "index.sparse=false"],
      ...["diff-files", "--name-only", "-z", "--ignore-submodules=all", "--no-ext-diff", "--no-textconv"],
    ],
    {
      cwd: root,
      env: {
        PATH: trustedPath(process.env.PATH ?? "", [root]),
        HOME: gitDir,
        XDG_CONFIG_HOME: gitDir,
        GIT_DIR: gitDir,
        GIT_WORK_TREE: root,
        GIT_INDEX_FILE: indexPath,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_ATTR_NOSYSTEM: "1",
        GIT_OPTIONAL_LOCKS: "0",
        GIT_TERMINAL_PROMPT: "0",
        LC_ALL: "C",
      },
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 256 * 1024 * 1024,
      timeout: 300_000,
    },
  );
  if (result.error !== undefined || result.status !== 0) return undefined;
  const paths = new Set<string>();
  let start = 0;
  for (let end = result.stdout.indexOf(0); end !== -1; start = end + 1, end = result.stdout.indexOf(0, start)) {
    if (end > start) paths.add(decodeName(result.stdout.subarray(start, end)));
  }
  return paths;
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
