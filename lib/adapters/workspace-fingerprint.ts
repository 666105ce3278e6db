// A fingerprint of the workspace's content, so the revision counts every change — a command's or a test's too, not
// only the edits Loom made itself. A stat walk: an entry whose stat signature (type, size, mtime, ctime, inode) is
// unchanged keeps its content hash; a changed one is hashed again, so touching a file without changing it is no change.
// In a git repository the index seeds the hashes (git's blob ids, the same hash Loom computes), so the first
// fingerprint of a large checkout hashes only what differs from the index. Git itself is never run: a workspace's
// git config could make it run programs outside the sandbox.
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

/** Directories never fingerprinted: git's own, and caches tests rewrite on every run (which are not the code). */
export const UNTRACKED_DIRECTORIES: ReadonlySet<string> = new Set([
  ".git",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
]);

/** Files larger than this are compared by stat signature only (a change in it counts as a change). */
const MAX_HASHED_BYTES = 64 * 1024 * 1024;
/** Entries modified this close to a walk are hashed again next time: a timestamp can miss a change made within it. */
const RACY_MS = 1_000;

type Entry = { signature: string; hash: string; racy: boolean };

export class WorkspaceFingerprint {
  readonly #root: string;
  readonly #now: () => number;
  #entries = new Map<string, Entry>();
  #seeded = false;

  constructor(root: string, { now = Date.now }: { now?: () => number } = {}) {
    this.#root = root;
    this.#now = now;
  }

  /** A digest of every path, type and content under the root (see UNTRACKED_DIRECTORIES). */
  take(): string {
    if (!this.#seeded) {
      this.#seeded = true;
      this.#entries = seedFromGitIndex(this.#root);
    }
    const started = this.#now();
    const next = new Map<string, Entry>();
    const digest = createHash("sha256");
    const walk = (dir: string, prefix: string) => {
      let names: string[];
      try {
        names = readdirSync(dir).sort();
      } catch {
        return;
      }
      for (const name of names) {
        const path = prefix === "" ? name : `${prefix}/${name}`;
        const full = join(dir, name);
        let info;
        try {
          info = lstatSync(full);
        } catch {
          continue; // vanished while walking
        }
        if (info.isDirectory()) {
          if (UNTRACKED_DIRECTORIES.has(name)) continue;
          digest.update(`d\0${path}\0`);
          walk(full, path);
          continue;
        }
        if (info.isSymbolicLink()) {
          digest.update(`l\0${path}\0${safeReadlink(full)}\0`);
          continue;
        }
        if (!info.isFile()) {
          digest.update(`o\0${path}\0${info.mode}\0`);
          continue;
        }
        const signature = `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}`;
        const previous = this.#entries.get(path);
        const hash = previous && !previous.racy && previous.signature === signature
          ? previous.hash
          : contentHash(full, info.size, signature);
        const racy = Math.max(info.mtimeMs, info.ctimeMs) >= started - RACY_MS;
        next.set(path, { signature, hash, racy });
        digest.update(`f\0${path}\0${info.mode & 0o111 ? "x" : "-"}\0${hash}\0`);
      }
    };
    walk(this.#root, "");
    this.#entries = next;
    return digest.digest("hex");
  }
}

/** git's blob id of a file's bytes: comparable with the ids in git's index. */
function contentHash(path: string, size: number, signature: string): string {
  if (size > MAX_HASHED_BYTES) return `stat:${signature}`;
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
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

/**
 * Entries from git's index (versions 2 and 3) whose recorded stat still matches the file, keyed by path, with git's
 * blob id as their hash. Anything unreadable or unexpected yields no seed: the walk then hashes everything.
 */
function seedFromGitIndex(root: string): Map<string, Entry> {
  const seeds = new Map<string, Entry>();
  let bytes: Uint8Array;
  let indexMtime: number;
  try {
    const gitDir = gitDirectory(root);
    if (!gitDir) return seeds;
    const indexPath = join(gitDir, "index");
    bytes = readFileSync(indexPath);
    indexMtime = lstatSync(indexPath).mtimeMs;
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
    const mtimeS = view.getUint32(at + 8);
    const mtimeNs = view.getUint32(at + 12);
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
    if (stage !== 0) continue;
    // git's own racy rule: an entry as new as the index itself may hide a change, so it is not trusted.
    const mtimeMs = mtimeS * 1000 + mtimeNs / 1e6;
    if (mtimeMs >= indexMtime) continue;
    let info;
    try {
      info = lstatSync(join(root, path));
    } catch {
      continue;
    }
    if (!info.isFile() || info.size !== size || Math.floor(info.mtimeMs / 1000) !== mtimeS) continue;
    if (Math.abs(info.mtimeMs - mtimeMs) >= 1) continue;
    seeds.set(path, { signature: `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}`, hash: sha, racy: false });
  }
  return seeds;
}

/** The git directory of a workspace that is a repository's top level (`.git` directory, or a `gitdir:` file). */
function gitDirectory(root: string): string | undefined {
  const dotGit = join(root, ".git");
  const info = lstatSync(dotGit, { throwIfNoEntry: false });
  if (!info) return undefined;
  if (info.isDirectory()) return dotGit;
  if (!info.isFile()) return undefined;
  const match = /^gitdir: (.+)$/m.exec(new TextDecoder().decode(readFileSync(dotGit)));
  if (!match) return undefined;
  const dir = match[1].trim();
  return dir.startsWith("/") ? dir : join(root, dir);
}
