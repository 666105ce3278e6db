// A fingerprint of the workspace's content, so the revision counts every change — a command's or a test's too, not
// only the edits Loom made itself. git's own approach: a stat cache (size, mtime, ctime, inode, mode) per file, with a
// content hash only for entries whose stat changed, so touching a file without changing it is no change; an entry
// modified too close to the moment it was hashed is hashed again next time (git's "racy" entries). A folder's listing
// is kept with its stat (size, mtime, ctime, inode): a folder whose stat did not change has the same names (adding,
// removing or renaming an entry changes its mtime), so only changed folders are read again.
//
// In a git work tree (the workspace is the repository's top level) git does the per-file stat compare and vouches
// for the files whose stat matches the index Loom holds (git-index.ts); everything else is stat'ed and hashed here.
//
// Names are read as bytes (file-names.ts): one that is not UTF-8 is walked, hashed and reported like any other. Each
// walk notes the entries that changed (delta), so the snapshot takes in what changed, not the whole tree (issue 43).
//
// The walk is iterative (a tree 30,000 folders deep is walked, not a stack overflow), and deep folders are reached
// through a handle on an ancestor (`/proc/self/fd/N/rest`, Linux's openat) once their path nears PATH_MAX, so a file
// deeper than PATH_MAX is fingerprinted like any other. What does not count as a change: only the paths the slice's
// `workspace_ignore` globs name (gitignore syntax), by default DEFAULT_WORKSPACE_IGNORE, and Loom's own output files
// (the report, recording, trace, diff of this run: `exclude`, exact paths, so no pattern can hide a file of the agent).
import { createHash } from "node:crypto";
import { closeSync, constants, existsSync, lstatSync, openSync, type Stats, statSync } from "node:fs";
import process from "node:process";
import { isIgnored, parseIgnore, type ScopedRules } from "../text/ignore-rules.ts";
import { gitStatDirty, type HeldIndex, heldIndex } from "./git-index.ts";
import {
  contentHash,
  type Entry,
  type FileEntry,
  FOLDER,
  noteChanges,
  onDisk,
  readNames,
  safeReadlink,
  sameEntries,
  sameStat,
  signature,
  UNREACHABLE,
} from "./workspace-entry.ts";

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

/** Entries modified this close to the moment they were hashed are hashed again: a timestamp can hide a change. */
const RACY_MS = 1_000;
/** Past this many characters a folder is reached through a handle on an ancestor, not by its full path. */
const ANCHOR_PATH_CHARS = 2_048;

const PROC_FD = "/proc/self/fd";
const anchorable = process.platform === "linux" && existsSync(PROC_FD);
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

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
  #index: HeldIndex | null | undefined;
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
