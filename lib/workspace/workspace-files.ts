// File access that cannot be raced out of the workspace. resolveInside checks a path; between that check and the use,
// something could swap a directory for a symlink to outside. So every use walks from the workspace root one component
// at a time through open directory handles (lib/io/dir-handle.ts: /proc/self/fd/N/NAME, Linux's openat), refusing any
// symlink on the way (O_NOFOLLOW): the file reached is the one that was checked, or the action is refused. Without
// /proc (macOS) the walk falls back to plain paths with an lstat per component, which narrows the window but cannot
// close it.
import {
  closeSync,
  constants,
  type Dirent,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  symlinkSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { errorCode } from "../errors.ts";
import { childPath, descend, type Dir, openChild, openDir, ownPath, releaseDir } from "../io/dir-handle.ts";
import { isIgnored, parseIgnore, type ScopedRules } from "../text/ignore-rules.ts";
import { compareCodeUnits, SKIPPED_DIRECTORIES } from "./workspace-paths.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** A path that changed under Loom while it was being used (a symlink appeared on the way). */
export class PathChangedError extends Error {
  readonly code = "ELOOP";
  constructor(readonly relative: string) {
    super(`Path ${JSON.stringify(relative)} changed while in use (a symlink appeared on the way); refused`);
  }
}

function segments(relative: string): string[] {
  return relative === "." || relative === "" ? [] : relative.split("/");
}

/** Runs `use` with a handle on the directory `relative` (workspace-relative, real, "/"-separated) names. */
function withDir<T>(
  realRoot: string,
  relative: string,
  use: (dir: Dir) => T,
  { create = false }: { create?: boolean } = {},
): T {
  const root = openDir(realRoot, { follow: false });
  const dir = descend(root, segments(relative), { create, refused: () => new PathChangedError(relative) });
  try {
    return use(dir);
  } finally {
    releaseDir(dir);
  }
}

function split(relative: string): { parent: string; name: string } {
  const at = relative.lastIndexOf("/");
  return at === -1 ? { parent: ".", name: relative } : { parent: relative.slice(0, at), name: relative.slice(at + 1) };
}

/** lstat of a workspace entry, reached without following symlinks on the way; undefined when it does not exist. */
export function statEntry(realRoot: string, relative: string): Stats | undefined {
  if (relative === ".") {
    return withDir(realRoot, ".", (dir) => (dir.fd === null ? lstatSync(dir.path) : fstatSync(dir.fd)));
  }
  const { parent, name } = split(relative);
  try {
    return withDir(realRoot, parent, (dir) => lstatSync(childPath(dir, name)));
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

/** Opens a file for reading without following a symlink anywhere on its path; checks it is a regular file. */
function openFile(dir: Dir, name: string, relative: string, flags: number): { fd: number; stats: Stats } {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not hang the run; it is refused below as not a regular file.
    fd = openSync(childPath(dir, name), flags | O_NOFOLLOW | O_NONBLOCK, 0o666);
  } catch (error) {
    if (errorCode(error) === "ELOOP") throw new PathChangedError(relative);
    throw error;
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw Object.assign(new Error("not a regular file"), { code: "EISDIR" });
  }
  return { fd, stats };
}

/**
 * The bytes of a regular workspace file, or `tooLarge` with its size when it exceeds `maxBytes` (checked on the open
 * file, so a file swapped after the check is never read).
 */
export function readEntry(
  realRoot: string,
  relative: string,
  { maxBytes }: { maxBytes: number },
): { bytes: Uint8Array } | { tooLarge: number } {
  const { parent, name } = split(relative);
  return withDir(realRoot, parent, (dir) => {
    const { fd, stats } = openFile(dir, name, relative, O_RDONLY);
    try {
      if (stats.size > maxBytes) return { tooLarge: stats.size };
      const bytes = readFileSync(fd);
      return bytes.length > maxBytes ? { tooLarge: bytes.length } : { bytes };
    } finally {
      closeSync(fd);
    }
  });
}

/** Why a write was refused before anything was written. */
export class WriteRefusedError extends Error {
  constructor(readonly refusal: "hard_linked", message: string) {
    super(message);
  }
}

/**
 * Replaces a regular file's content (creating it and missing parent directories), through the same pinned walk. The
 * content goes to a fresh temporary file beside it, which is then renamed over the name: a full disk (ENOSPC) or any
 * failed write leaves the old file whole and no temporary behind. A file with more than one hard link is refused
 * untouched (another name for it may live outside the workspace, and the model means that file); the new file keeps
 * the old one's mode.
 */
export function writeEntry(realRoot: string, relative: string, content: string | Uint8Array): void {
  const { parent, name } = split(relative);
  withDir(realRoot, parent, (dir) => {
    const existing = lstatOrUndefined(childPath(dir, name));
    if (existing?.isSymbolicLink()) throw new PathChangedError(relative);
    if (existing && !existing.isFile()) {
      throw Object.assign(new Error("not a regular file"), { code: existing.isDirectory() ? "EISDIR" : "ENXIO" });
    }
    if (existing && existing.nlink > 1) {
      throw new WriteRefusedError(
        "hard_linked",
        `File ${JSON.stringify(relative)} has ${existing.nlink} hard links; a write through it could change a file ` +
          "outside the workspace, so it is refused",
      );
    }
    replaceFile(dir, name, typeof content === "string" ? new TextEncoder().encode(content) : content, existing);
  }, { create: true });
}

/** Writes `bytes` to a fresh temporary file in `dir` and renames it over `name`; on failure nothing is left behind. */
function replaceFile(dir: Dir, name: string, bytes: Uint8Array, existing: Stats | undefined): void {
  const temp = `.${name.slice(0, 200)}.${randomBytes(6).toString("hex")}.loom-tmp`;
  const fd = openSync(childPath(dir, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0o666);
  try {
    try {
      if (existing) fchmodSync(fd, existing.mode & 0o7777);
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset, offset);
    } finally {
      closeSync(fd);
    }
    renameSync(childPath(dir, temp), childPath(dir, name));
  } catch (error) {
    rmSync(childPath(dir, temp), { force: true });
    throw error;
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Removes the entry `relative` names (a folder with everything in it; a link itself, never what it points to), reached
 * through the pinned walk: a link on the way is refused (PathChangedError), a missing entry is nothing to do.
 */
export function removeEntry(realRoot: string, relative: string): void {
  const { parent, name } = split(relative);
  try {
    withDir(realRoot, parent, (dir) => {
      const existing = lstatOrUndefined(childPath(dir, name));
      if (existing?.isDirectory()) rmSync(childPath(dir, name), { recursive: true, force: true });
      else if (existing) unlinkSync(childPath(dir, name));
    });
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
}

/** Puts a symbolic link with `target` as its text at `relative` (replacing what is there), through the pinned walk. */
export function linkEntry(realRoot: string, relative: string, target: string): void {
  const { parent, name } = split(relative);
  withDir(realRoot, parent, (dir) => {
    const existing = lstatOrUndefined(childPath(dir, name));
    if (existing?.isDirectory()) rmSync(childPath(dir, name), { recursive: true, force: true });
    else if (existing) unlinkSync(childPath(dir, name));
    symlinkSync(target, childPath(dir, name));
  }, { create: true });
}

/** The text of a small regular file in `dir` (a .gitignore), read without following a link; "" when there is none. */
function readSmall(dir: Dir, name: string): string {
  let fd: number;
  try {
    fd = openSync(childPath(dir, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return "";
  }
  try {
    const stats = fstatSync(fd);
    return stats.isFile() && stats.size <= 1024 * 1024 ? readFileSync(fd, "utf8") : "";
  } finally {
    closeSync(fd);
  }
}

/** A folder on the walk's stack: its handle, its path (relative to the walk's start), its entries still to visit. */
type WalkFrame = { dir: Dir; prefix: string; entries: Dirent[]; next: number; owned: boolean; scopes: number };

/**
 * Every non-directory entry under the directory `relative`, as paths relative to it, sorted; symlinked directories are
 * not followed and `.git` is skipped. Each directory is opened through its parent's handle, so a directory swapped for
 * a symlink mid-walk is skipped rather than followed. The walk is iterative and holds a handle only on folders with
 * entries still to visit (a folder past the limit of open handles is skipped). Unless `includeIgnored`, what `.gitignore` files (the top one, nested ones, negations)
 * and `.git/info/exclude` exclude is left out, and so is `node_modules`.
 */
export function walkEntries(
  realRoot: string,
  relative: string,
  { includeIgnored = false }: { includeIgnored?: boolean } = {},
): string[] {
  const found: string[] = [];
  const base = relative === "." ? "" : relative;
  const scopes: ScopedRules[] = [];
  const addScope = (dir: Dir, path: string) => {
    const text = readSmall(dir, ".gitignore");
    if (text !== "") scopes.push({ base: path, rules: parseIgnore(text) });
  };
  const readEntries = (dir: Dir): Dirent[] | undefined => {
    try {
      return readdirSync(ownPath(dir), { withFileTypes: true });
    } catch {
      return undefined; // unreadable or vanished: a listing shows what can be seen
    }
  };
  const start = (dir: Dir) => {
    if (!includeIgnored) {
      // The rules of the folders from the top down to where the walk starts apply too.
      withDir(realRoot, ".", (top) => {
        const exclude = (() => {
          try {
            return withDir(realRoot, ".git/info", (info) => readSmall(info, "exclude"));
          } catch {
            return "";
          }
        })();
        if (exclude !== "") scopes.push({ base: "", rules: parseIgnore(exclude) });
        addScope(top, "");
      });
      const parts = segments(base);
      for (let i = 0; i < parts.length; i++) {
        const path = parts.slice(0, i + 1).join("/");
        if (i === parts.length - 1) addScope(dir, path);
        else {
          try {
            withDir(realRoot, path, (ancestor) => addScope(ancestor, path));
          } catch { /* vanished: no rules */ }
        }
      }
    }
    const stack: WalkFrame[] = [];
    const first = readEntries(dir);
    if (first) stack.push({ dir, prefix: "", entries: first, next: 0, owned: false, scopes: scopes.length });
    for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
      const entry = frame.entries[frame.next++];
      if (entry === undefined) {
        // the folder is done
        stack.pop();
        if (frame.owned) releaseDir(frame.dir);
        scopes.length = stack.at(-1)?.scopes ?? 0;
        continue;
      }
      const path = frame.prefix === "" ? entry.name : `${frame.prefix}/${entry.name}`;
      const full = base === "" ? path : `${base}/${path}`;
      const isDir = entry.isDirectory();
      if (!includeIgnored && isIgnored(scopes, full, isDir)) continue;
      if (!isDir) {
        found.push(path);
        continue;
      }
      if (entry.name === ".git" || (!includeIgnored && SKIPPED_DIRECTORIES.has(entry.name))) continue;
      let sub: Dir;
      try {
        sub = openChild(frame.dir, entry.name, () => new PathChangedError(path));
      } catch {
        continue; // swapped for a symlink, removed since the listing, or out of handles
      }
      const entries = readEntries(sub);
      if (!entries) {
        releaseDir(sub);
        continue;
      }
      if (frame.next >= frame.entries.length) {
        // The folder has nothing left after this one: its handle is let go now, so a chain of folders as deep as you
        // like holds one handle, not one per level.
        stack.pop();
        if (frame.owned) releaseDir(frame.dir);
      }
      if (!includeIgnored) addScope(sub, full);
      stack.push({ dir: sub, prefix: path, entries, next: 0, owned: true, scopes: scopes.length });
    }
  };
  withDir(realRoot, relative, (dir) => start(dir));
  return found.sort(compareCodeUnits);
}
