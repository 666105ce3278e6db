// Loom's scratch folders (an evaluation's workspace copies, a check's copy) and what a killed Loom leaves behind. Each
// scratch folder and each pids cgroup carries the PID of the Loom that made it (`loom-eval-<pid>-…`,
// `loom-<pid>-<hex>`), so a later Loom can tell which are its own kind and whose maker is gone: `kill -9` runs no
// cleanup, and without this the copies (the task's files, the agent's changes) would pile up in the temporary folder.
import { lstatSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { errorCode } from "../errors.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { pidsCgroupRoot } from "./pids-limit.ts";

const SCRATCH_KINDS = ["eval", "check", "rescore", "validate", "git", "output"] as const;
type ScratchKind = (typeof SCRATCH_KINDS)[number];

const SCRATCH_NAME = new RegExp(`^loom-(?:${SCRATCH_KINDS.join("|")})-(\\d+)-[A-Za-z0-9]{6}$`);
const CGROUP_NAME = /^loom-(\d+)-[0-9a-f]{12}$/;

/** A fresh, private scratch folder in the temporary folder, named with its kind and this process's PID. */
export function makeScratch(kind: ScratchKind): string {
  return mkdtempSync(join(tmpdir(), `loom-${kind}-${process.pid}-`));
}

/** Whether a process with this PID exists (one of another user counts: it cannot be signalled, but it is there). */
function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}

/**
 * Removes the scratch folders and pids cgroups a Loom that no longer runs left behind: only names Loom gives, only
 * real folders (never a link someone planted at such a name: it is not followed) owned by this user, only when the
 * PID in the name is dead. Returns how many were removed. Best effort: what cannot be removed is left.
 */
function removeStaleLeftovers(
  { temp = tmpdir(), cgroups = pidsCgroupRoot() }: { temp?: string; cgroups?: string | null } = {},
): number {
  let removed = 0;
  const uid = process.getuid?.();
  const sweep = (dir: string, pattern: RegExp, remove: (path: string) => void) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const match = pattern.exec(name);
      if (!match || alive(Number(match[1]))) continue;
      const path = join(dir, name);
      try {
        const entry = lstatSync(path);
        if (!entry.isDirectory() || (uid !== undefined && entry.uid !== uid)) continue;
        remove(path);
        removed++;
      } catch { /* in use, or gone already */ }
    }
  };
  sweep(temp, SCRATCH_NAME, (path) => rmSync(path, { recursive: true, force: true }));
  // An empty cgroup folder is removed with rmdir (its control files are not real files); one with processes stays.
  if (cgroups !== null) sweep(cgroups, CGROUP_NAME, (path) => rmdirSync(path));
  return removed;
}

let swept = false;

/** removeStaleLeftovers once per process, at the start of the first run or evaluation. */
export function sweepLeftoversOnce(): void {
  if (swept) return;
  swept = true;
  removeStaleLeftovers();
}
