// What git vouches for of the workspace's files, so the fingerprint need not stat and hash them itself.
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
import { lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { decodeName } from "../text/file-names.ts";
import { trustedPath } from "./process.ts";
import { makeScratch } from "./scratch.ts";
import type { FileEntry } from "./workspace-entry.ts";

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

/** A workspace's git index as Loom holds it: its bytes, and the entries git's answer can vouch for. */
export type HeldIndex = { bytes: Uint8Array; trusted: Map<string, FileEntry> };

/**
 * The workspace's index, read once at the first walk (before any action), with the entries it can vouch for; null
 * when there is none, or it is unreadable.
 */
export function heldIndex(root: string): HeldIndex | null {
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
export function gitStatDirty(root: string, index: Uint8Array): Set<string> | undefined {
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
