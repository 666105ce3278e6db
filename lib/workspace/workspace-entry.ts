// What the fingerprint's walk knows of one path (an entry), and how two walks' entries compare: a file's stat
// signature and git's blob id of its bytes, a folder, a link and its target, anything else and its mode. Names are
// handed to the file system as the bytes they are (file-names.ts), so a name that is not UTF-8 is one like any other.
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  type Stats,
} from "node:fs";
import { decodeName, encodeName, hasRawBytes } from "../text/file-names.ts";

/** Files larger than this are compared by stat signature only (a change in it counts as a change). */
const MAX_HASHED_BYTES = 64 * 1024 * 1024;

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

/**
 * What the walk knows of one path: a file's stat signature (git's: what changes when its content may have) and content
 * hash; a folder; a symbolic link and its target; anything else (a FIFO, a socket) and its mode.
 */
export type Entry =
  | { kind: "f"; size: number; mtime: number; ctime: number; ino: number; mode: number; hash: string; racy: boolean }
  | { kind: "d" }
  | { kind: "l"; target: string }
  | { kind: "o"; mode: number };
export type FileEntry = Extract<Entry, { kind: "f" }>;

export const FOLDER: Entry = { kind: "d" };
/**
 * A name the runtime cannot reach: Deno's file system calls take names as UTF-8, so a name that is not arrives as one
 * with U+FFFD in its place and cannot be looked at. It is kept as an entry of its own, never skipped as if it were not
 * there, and never the same as itself (sameContent): what Loom cannot look at may have changed at every look, so no
 * test result carries over while it is there.
 */
export const UNREACHABLE: Entry = { kind: "o", mode: -2 };

/** The path to hand the file system: as it is, or its bytes when a name in it is not UTF-8 (see file-names.ts). */
export function onDisk(path: string): string | Buffer {
  return hasRawBytes(path) ? Buffer.from(encodeName(path)) : path;
}

/** A folder's names, each as the bytes it is (a name that is not UTF-8 is not mangled into another). */
export function readNames(path: string): string[] {
  return readdirSync(onDisk(path), { encoding: "buffer" }).map((name) => decodeName(name));
}

/** What the snapshot keeps of an entry that is not a folder: kind and content, as one string (see WorkspaceSnapshot). */
export function signature(entry: Entry): string {
  if (entry.kind === "f") return `${entry.mode & 0o111 ? "x" : "-"}${entry.hash}`;
  if (entry.kind === "l") return `l${entry.target}`;
  return `o${entry.kind === "o" ? entry.mode : ""}`;
}

export function sameStat(entry: FileEntry, info: Stats): boolean {
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

/** Notes in `delta` the entries (not folders) of a folder that changed: new content or kind, added, gone. */
export function noteChanges(
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
export function sameEntries(before: Map<string, Entry> | undefined, now: Map<string, Entry>): boolean {
  if (before === undefined || before.size !== now.size) return false;
  for (const [name, entry] of now) {
    const was = before.get(name);
    if (was === undefined || !sameContent(was, entry)) return false;
  }
  return true;
}

/** git's blob id of a file's bytes: comparable with the ids in git's index. */
export function contentHash(path: string | Buffer, info: Stats): string {
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

export function safeReadlink(path: string | Buffer): string {
  try {
    return decodeName(readlinkSync(path, { encoding: "buffer" }));
  } catch {
    return "";
  }
}
