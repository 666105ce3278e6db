// File effects shared by the run lifecycle and the commands: the one atomic writer, append-only recordings, and the
// check that an output path can be written before anything runs.
//
// Loom's own outputs (report, trace, recording, HTML, batch files) may live inside the workspace, where a test or a
// command of the run can plant a symlink or swap a folder for one. So every output is opened once, without following a
// link, through a folder handle pinned before any process ran: the check of an output path (outputPathProblem,
// outputFolderProblem, pinOutputPath) opens the deepest existing folder on its way, and every later write walks from
// that handle (dir-handle.ts) creating what is missing without following a link at any step. A folder swapped for a
// symlink afterwards is never followed; the write lands in the pinned folder or fails (on Linux; elsewhere the walk
// narrows the window but cannot close it).
import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeSync,
} from "node:fs";
import { childPath, descend, type Dir, isSymlink, openDir, releaseDir } from "./dir-handle.ts";
import { redactHeld } from "./held-keys.ts";
import { randomBytes } from "node:crypto";
import { basename, dirname, resolve } from "node:path";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** A folder Loom opened before anything of the run could change it; its handle outlives renames and swaps. */
type Pin = { path: string; fd: number | null; dev: number; ino: number };

// Folders pinned in this process, by the absolute path they had when pinned: every existing folder on the way to an
// output, so a folder removed below one of them is walked to again (without following links) from the nearest one
// that still exists. Pinning again (each run's checks) takes a path that names another folder now afresh.
const pins = new Map<string, Pin>();

/** A path a write was refused on: something on the way is a symbolic link Loom did not find there before the run. */
class OutputLinkError extends Error {
  readonly code = "ELOOP";
  constructor(path: string) {
    super(`${JSON.stringify(path)} is a symbolic link; Loom does not write its own files through links`);
  }
}

function pinAt(path: string): void {
  const pinned = pins.get(path);
  if (pinned && pinValid(pinned)) return;
  const { fd } = openDir(path, { follow: true });
  const info = fd === null ? statSync(path) : fstatSync(fd);
  const stale = pins.get(path);
  if (stale?.fd !== null && stale?.fd !== undefined) closeSync(stale.fd);
  pins.set(path, { path, fd, dev: info.dev, ino: info.ino });
}

/** Whether the pinned folder is still the one its path names (else it was moved, removed or swapped). */
function pinValid(pin: Pin): boolean {
  const now = statOrNull(pin.path);
  return now !== null && now.isDirectory() && now.dev === pin.dev && now.ino === pin.ino;
}

/**
 * Pins the deepest existing folder on the way to `dir` and every folder above it, so a later write never follows a
 * link planted below them. Called by the checks of output paths before a run starts; harmless to repeat. Returns
 * false when nothing could be pinned.
 */
function pinOutputFolder(dir: string): boolean {
  let existing = resolve(dir);
  while (!isDirectory(existing) && dirname(existing) !== existing) existing = dirname(existing);
  if (!isDirectory(existing)) return false;
  const chain: string[] = [];
  for (let at = existing;; at = dirname(at)) {
    chain.push(at);
    if (dirname(at) === at) break;
  }
  let pinned = false;
  for (const path of chain.reverse()) {
    try {
      pinAt(path);
      pinned = true;
    } catch {
      // unreadable (no search permission above): the folders below are pinned on their own
    }
  }
  return pinned;
}

/** Pins the folder of an output file (see pinOutputFolder). */
export function pinOutputPath(path: string): boolean {
  return pinOutputFolder(dirname(resolve(path)));
}

/** Whether a pinned folder still exists (it may have been moved: the write then follows it, never the old path). */
function pinAlive(pin: Pin): boolean {
  if (pin.fd === null) return isDirectory(pin.path) && !isSymlink(pin.path);
  try {
    return fstatSync(pin.fd).nlink > 0;
  } catch {
    return false;
  }
}

/**
 * The pinned folder closest above `dir` (or `dir` itself) that still exists, and the names from it down to `dir`. A
 * pinned folder moved away is still the one written into: what was put at its old path after the pin is not Loom's.
 */
function nearestPin(dir: string): { pin: Pin; rest: string[] } | undefined {
  let at = dir;
  const rest: string[] = [];
  for (;;) {
    const pin = pins.get(at);
    if (pin && pinAlive(pin)) return { pin, rest: rest.reverse() };
    const up = dirname(at);
    if (up === at) return undefined;
    rest.push(basename(at));
    at = up;
  }
}

/**
 * A handle on `dir`, reached from its nearest pinned folder without following links (created when `create`); a folder
 * nothing pinned is pinned now. The caller closes it with releaseDir.
 */
function reachDir(dir: string, { create }: { create: boolean }): Dir {
  const absolute = resolve(dir);
  // An output nothing checked before the run is pinned now (its existing folders as they are).
  if (!nearestPin(absolute)) pinOutputFolder(absolute);
  const found = nearestPin(absolute);
  if (!found) throw Object.assign(new Error(`no folder ${absolute}`), { code: "ENOENT" });
  const pinned: Dir = { path: found.pin.path, fd: found.pin.fd, owned: false };
  return descend(pinned, found.rest, { create, refused: (shown) => new OutputLinkError(shown) });
}

/** A new file (never an existing one, so never a link or another name of a file) in `dir`, open for writing. */
function createFresh(dir: Dir, name: string): { fd: number; temp: string } {
  const temp = `.${name}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(childPath(dir, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0o644);
  return { fd, temp };
}

function writeAll(fd: number, text: string): void {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/**
 * Writes a file so that readers see either the old file or the whole new one, never half of it. Missing folders are
 * created unless `createFolders` is false. The file is written fresh and renamed over the name, so a symlink or a
 * hard link at the name is replaced, never written through; the folder is reached from its pinned handle.
 */
export function writeFileAtomic(
  path: string,
  content: string,
  { createFolders = true }: { createFolders?: boolean } = {},
): void {
  const dir = reachDir(dirname(resolve(path)), { create: createFolders });
  try {
    const name = basename(path);
    const { fd, temp } = createFresh(dir, name);
    try {
      writeAll(fd, redactHeld(content));
      closeSync(fd);
      renameSync(childPath(dir, temp), childPath(dir, name));
    } catch (error) {
      try {
        closeSync(fd);
      } catch { /* already closed */ }
      rmSync(childPath(dir, temp), { force: true });
      throw error;
    }
  } finally {
    releaseDir(dir);
  }
}

/**
 * A JSONL sink: a new, empty file replaces whatever held the name (a link is replaced, not followed), then one line is
 * appended per call through the same handle (a crash leaves every whole line readable). A name swapped for a link
 * during the run changes nothing outside: the lines keep going to the file Loom opened. Loom's writer wins: before
 * each line (and at close), when a process of the run changed the file (its size or mtime is not what Loom left, or
 * the name no longer holds it — truncated, overwritten, replaced, swapped for a link), the whole file is written again
 * fresh from the lines kept in memory and renamed over the name, in the folder pinned before the run.
 */
export function openLineSink(
  path: string,
): ((line: string) => void) & { close: () => void; settle: () => void } {
  const name = basename(path);
  /** A new file at the name holding `text`, open for appending more; the folder reached from its pinned handle. */
  const fresh = (text: string): number => {
    const dir = reachDir(dirname(resolve(path)), { create: true });
    try {
      const created = createFresh(dir, name);
      try {
        writeAll(created.fd, text);
        renameSync(childPath(dir, created.temp), childPath(dir, name));
      } catch (error) {
        closeSync(created.fd);
        rmSync(childPath(dir, created.temp), { force: true });
        throw error;
      }
      return created.fd;
    } finally {
      releaseDir(dir);
    }
  };
  let fd = fresh("");
  const lines: string[] = [];
  let mark = fstatSync(fd);
  /** Whether the file is as Loom left it: the same size and mtime, and still the file at the name. */
  const intact = (): boolean => {
    const now = fstatSync(fd);
    if (now.size !== mark.size || now.mtimeMs !== mark.mtimeMs) return false;
    const dir = reachDir(dirname(resolve(path)), { create: false });
    try {
      const at = lstatSync(childPath(dir, name));
      return at.isFile() && at.ino === now.ino && at.dev === now.dev;
    } catch {
      return false;
    } finally {
      releaseDir(dir);
    }
  };
  const restore = () => {
    let ok = false;
    try {
      ok = intact();
    } catch { /* the folder is gone: written again below */ }
    if (ok) return;
    const next = fresh(lines.join(""));
    closeSync(fd);
    fd = next;
    mark = fstatSync(fd);
  };
  let open = true;
  // After close, a line is dropped: the descriptor's number may already name another file.
  return Object.assign((line: string) => {
    if (!open) return;
    try {
      restore();
    } catch { /* cannot write it again now (its folder gone or full): the line goes where the others went */ }
    const text = redactHeld(line);
    writeAll(fd, text);
    lines.push(text);
    mark = fstatSync(fd);
  }, {
    /** Writes the file again if a process changed it (as before a line), and keeps it open. */
    settle: () => {
      if (!open) return;
      try {
        restore();
      } catch { /* as it stands */ }
    },
    close: () => {
      if (!open) return;
      try {
        restore();
      } catch { /* the recording as it stands: nothing more can be done at the end */ }
      closeSync(fd);
      open = false;
    },
  });
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function isDirectory(path: string): boolean {
  return statOrNull(path)?.isDirectory() ?? false;
}

/** Why Loom could not create `dir` (with its missing parents) and write into it, or null when it can. */
function folderProblem(dir: string): string | null {
  let existing = dir;
  let stat = statOrNull(existing);
  while (stat === null && dirname(existing) !== existing) {
    existing = dirname(existing);
    stat = statOrNull(existing);
  }
  if (stat === null) return `its folder ${JSON.stringify(dir)} cannot be created`;
  if (!stat.isDirectory()) return `its folder cannot be created: ${JSON.stringify(existing)} is not a directory`;
  try {
    accessSync(existing, constants.W_OK);
  } catch {
    return `${JSON.stringify(existing)} is not writable`;
  }
  pinOutputFolder(existing);
  return null;
}

/**
 * Why a file Loom is asked to write (a report, a recording) could not be written, or null when it can: the path is
 * not a directory, and its folder exists or can be created. Checked before a run starts, so no run is wasted on a
 * report that cannot land; the folder is pinned then (see the top of this file).
 */
export function outputPathProblem(path: string): string | null {
  if (statOrNull(path)?.isDirectory()) return "is a directory, not a file";
  return folderProblem(dirname(resolve(path)));
}

/** Why a folder Loom is asked to write files into could not be used, or null when it can (then it is pinned). */
export function outputFolderProblem(dir: string): string | null {
  const stat = statOrNull(dir);
  if (stat !== null && !stat.isDirectory()) return "is not a directory";
  return folderProblem(resolve(dir));
}
