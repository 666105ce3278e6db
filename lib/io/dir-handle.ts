// A folder reached without following links, for Loom's own output files (files.ts) and the workspace executor's file
// access (lib/workspace/workspace-files.ts). On Linux with /proc a handle is an open descriptor and a child is opened
// through it (`/proc/self/fd/N/NAME`, Linux's openat) with O_NOFOLLOW, so a folder swapped for a symlink after a check
// is never followed. Elsewhere (macOS, Windows) a handle is a path checked with an lstat per step, which narrows the
// window but cannot close it.
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync } from "node:fs";
import { sep } from "node:path";
import { errorCode } from "../errors.ts";

const PROC_FD = "/proc/self/fd";
const descriptors = process.platform === "linux" && existsSync(PROC_FD);
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** A folder: its descriptor (null where handles are paths), the path it was reached by, whether releasing closes it. */
export type Dir = { path: string; fd: number | null; owned: boolean };

/** The path node:fs opens `name` inside `dir` by: through its descriptor where it has one. */
export function childPath(dir: Dir, name: string): string {
  return dir.fd === null ? `${dir.path}${sep}${name}` : `${PROC_FD}/${dir.fd}/${name}`;
}

/** The path node:fs names `dir` itself by (to list it). */
export function ownPath(dir: Dir): string {
  return dir.fd === null ? dir.path : `${PROC_FD}/${dir.fd}`;
}

/**
 * A handle on the folder at `path`, a start for the walks below; a link at `path` is followed only when `follow` (a
 * refused link is the open's own ELOOP). The caller releases it.
 */
export function openDir(path: string, { follow }: { follow: boolean }): Dir {
  if (!descriptors) return { path, fd: null, owned: false };
  return { path, fd: openSync(path, O_RDONLY | O_DIRECTORY | (follow ? 0 : O_NOFOLLOW)), owned: true };
}

/**
 * The folder `name` inside `dir`, opened without following a link: a link there throws what `refused` makes of the
 * path it was reached by. The caller releases it.
 */
export function openChild(dir: Dir, name: string, refused: (shown: string) => Error): Dir {
  const path = childPath(dir, name);
  const shown = `${dir.path}${sep}${name}`;
  if (dir.fd === null) {
    if (lstatSync(path).isSymbolicLink()) throw refused(shown);
    return { path, fd: null, owned: false };
  }
  try {
    return { path: shown, fd: openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW), owned: true };
  } catch (error) {
    const code = errorCode(error);
    if (code === "ELOOP" || (code === "ENOTDIR" && isSymlink(path))) throw refused(shown);
    throw error;
  }
}

/**
 * The folder `names` lead to from `start`, each opened through its parent's handle without following a link (and
 * made first when missing and `create`). Every handle on the way, `start` included, is released, also on a failure;
 * the caller releases the one returned.
 */
export function descend(
  start: Dir,
  names: readonly string[],
  { create, refused }: { create: boolean; refused: (shown: string) => Error },
): Dir {
  let current = start;
  try {
    for (const name of names) {
      if (create) {
        try {
          mkdirSync(childPath(current, name));
        } catch (error) {
          if (errorCode(error) !== "EEXIST") throw error;
        }
      }
      const next = openChild(current, name, refused);
      releaseDir(current);
      current = next;
    }
    return current;
  } catch (error) {
    releaseDir(current);
    throw error;
  }
}

/** Closes a handle this module opened (a borrowed one, or a path, is left alone). */
export function releaseDir(dir: Dir): void {
  if (dir.owned && dir.fd !== null) closeSync(dir.fd);
}

/** Whether `path` is a symbolic link itself (false when it cannot be read). */
export function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
