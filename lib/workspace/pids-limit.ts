// The process-count limit of a sandboxed action: a cgroup of the kernel's pids controller, made for the action and
// removed after it. RLIMIT_NPROC cannot do this: it counts per user, and the kernel never applies it to root.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { errorCode } from "../errors.ts";
import { randomBytes } from "node:crypto";
import { join } from "node:path";

/** How many processes (threads included) one sandboxed action may have at once. */
export const SANDBOX_MAX_PROCESSES = 1024;

/** A pids cgroup Loom made: `argv` runs a program inside it from its first instruction; `release` removes it. */
export type PidsLimit = {
  dir: string;
  max: number;
  /** The argv that runs `argv` inside the cgroup: a fixed shell joins it, then becomes the program. */
  wrap: (argv: readonly string[]) => [program: string, ...args: string[]];
  release: () => void;
};

const SHELL = "/bin/sh";

/**
 * Where this process may make a pids cgroup: the v1 controller's folder, or the v2 hierarchy when it offers pids; the
 * folder of this process's own cgroup there, so a delegated subtree works too. Null when there is none, or it is not
 * writable (not Linux, not root and not delegated, a read-only /sys).
 */
export function pidsCgroupRoot(
  { mounts = "/sys/fs/cgroup", self = "/proc/self/cgroup" }: { mounts?: string; self?: string } = {},
): string | null {
  let lines: string[];
  try {
    lines = readFileSync(self, "utf8").split("\n");
  } catch {
    return null;
  }
  const v1 = lines.find((l) => /^\d+:([^:]*,)?pids(,[^:]*)?:/.test(l));
  const candidates: string[] = [];
  if (v1) candidates.push(join(mounts, "pids", v1.slice(v1.indexOf(":", v1.indexOf(":") + 1) + 1)));
  const v2 = lines.find((l) => l.startsWith("0::"));
  if (v2) {
    for (const base of [mounts, join(mounts, "unified")]) {
      try {
        if (readFileSync(join(base, "cgroup.controllers"), "utf8").split(/\s+/).includes("pids")) {
          candidates.push(join(base, v2.slice(3)));
        }
      } catch { /* not a v2 hierarchy with pids */ }
    }
  }
  return candidates.find((dir) => existsSync(join(dir, "cgroup.procs"))) ?? null;
}

/** A fresh pids cgroup limited to `max` processes, or null where none can be made (the action then runs unlimited). */
export function makePidsLimit(
  { max = SANDBOX_MAX_PROCESSES, root = pidsCgroupRoot() }: { max?: number; root?: string | null } = {},
): PidsLimit | null {
  if (root === null) return null;
  const dir = join(root, `loom-${process.pid}-${randomBytes(6).toString("hex")}`);
  try {
    mkdirSync(dir);
  } catch {
    return null;
  }
  try {
    writeFileSync(join(dir, "pids.max"), String(max));
  } catch {
    rmdirSync(dir);
    return null;
  }
  return {
    dir,
    max,
    // `$0` is the cgroup folder; the shell moves itself in, then execs the program, which inherits the cgroup.
    wrap: (argv) => [SHELL, "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir, ...argv],
    release: () => release(dir, 20),
  };
}

/**
 * Kills what is left in the cgroup, then removes it. The kernel refuses while a process, or its zombie, remains: a
 * few short waits here (the action has ended, so they are brief), then later tries that do not keep Loom running.
 */
function release(dir: string, tries: number): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      for (const pid of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch { /* gone */ }
      }
      rmdirSync(dir);
      return;
    } catch (error) {
      if (errorCode(error) !== "EBUSY") return;
      Atomics.wait(pause, 0, 0, 5);
    }
  }
  if (tries > 0) setTimeout(() => release(dir, tries - 1), 50).unref?.();
}
