// Spawns the compiled binary (dist/loom) as a real process, for end-to-end tests. Builds nothing: scripts/test.sh
// runs compile.sh first. The child gets a small, explicit environment (PATH plus what the test passes), so
// credentials and base URLs in the developer's shell never leak into a test.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { findBubblewrap } from "../../lib/workspace/sandbox.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Where bubblewrap is missing (a clone without it), processes run unsandboxed on purpose: LOOM_SANDBOX=off keeps the
 * "running without a sandbox" notice out of the output tests compare. With bubblewrap, runs are sandboxed as usual.
 */
export const SANDBOX_ENV: Record<string, string> = findBubblewrap().found ? {} : { LOOM_SANDBOX: "off" };
export const LOOM_BINARY = resolve(ROOT, "dist", process.platform === "win32" ? "loom.exe" : "loom");

export type LoomRun = {
  /** Exit status; null when the process died of a signal. */
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
};

export type LoomOptions = {
  /** Working directory of the binary. */
  cwd: string;
  /** Added to the base environment (PATH, HOME, TMPDIR); a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. Without it stdin is closed at once (an empty stdin). */
  stdin?: string;
};

export type LoomProcess = {
  child: ChildProcess;
  pid: number;
  /** Resolves when the process has exited and its output is complete. */
  done: Promise<LoomRun>;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
};

/** Throws a clear error when the binary has not been built. */
export function assertBinaryBuilt(): void {
  if (!existsSync(LOOM_BINARY)) {
    throw new Error(`${LOOM_BINARY} does not exist: build it with "bash compile.sh" (scripts/test.sh builds it first)`);
  }
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "TMPDIR", "SYSTEMROOT", "LOOM_BWRAP"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, SANDBOX_ENV);
  return env;
}

/** Starts dist/loom with args; the caller awaits `done` (and should kill it on failure paths). */
export function startLoom(args: string[], { cwd, env = {}, stdin }: LoomOptions): LoomProcess {
  assertBinaryBuilt();
  const fullEnv: Record<string, string> = baseEnv();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete fullEnv[name];
    else fullEnv[name] = value;
  }
  const child = spawn(LOOM_BINARY, args, { cwd, env: fullEnv, stdio: ["pipe", "pipe", "pipe"] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr!.on("data", (chunk: Buffer) => err.push(chunk));
  // The binary may exit before reading stdin; a broken pipe then is not the test's concern.
  child.stdin!.on("error", () => {});
  child.stdin!.end(stdin ?? "");
  const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString("utf8");
  const done = new Promise<LoomRun>((resolveRun, reject) => {
    child.on("error", reject);
    // "close" fires after the exit and after stdout and stderr have ended.
    child.on("close", (code, signal) => resolveRun({ code, signal, stdout: text(out), stderr: text(err) }));
  });
  if (child.pid === undefined) throw new Error(`Could not start ${LOOM_BINARY}`);
  return { child, pid: child.pid, done, stdout: () => text(out), stderr: () => text(err) };
}

/** Runs dist/loom to completion. */
export function runLoom(args: string[], options: LoomOptions): Promise<LoomRun> {
  return startLoom(args, options).done;
}

/** The non-empty lines of a text. */
export function lines(text: string): string[] {
  return text.split("\n").filter((line) => line.trim() !== "");
}

/**
 * Whether a process exists and has not exited. A zombie (exited, not yet reaped by its new parent) counts as gone:
 * it runs no code and holds no resources but its pid.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  if (!existsSync("/proc/self/stat")) return true; // no /proc (macOS): signal 0 succeeded, so it exists
  try {
    // /proc/PID/stat: "pid (comm) STATE …"; comm may hold spaces or parentheses, so read after the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const end = stat.lastIndexOf(")");
    return stat.slice(end + 2, end + 3) !== "Z";
  } catch {
    return false; // reaped since the signal check
  }
}

/** Polls until check() is true; throws with `what` after about `limitMs` (a guard against hangs, not a timed assert). */
export async function waitFor(
  check: () => boolean,
  { what, limitMs = 120_000 }: { what: string; limitMs?: number },
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The host pid of a process that wrote `pid` about itself while running in `cwd`. Inside the sandbox a process sees
 * its own PID namespace, so the number it writes is not the host's: the host process is the one whose innermost NSpid
 * is `pid` and whose working directory is `cwd`. Without a namespace (or without /proc) `pid` is already the host's.
 */
export function hostPid(pid: number, cwd: string): number {
  if (!existsSync("/proc/self/status")) return pid;
  const real = realpathSync(cwd);
  const runsIn = (candidate: string) => {
    try {
      return readlinkSync(`/proc/${candidate}/cwd`) === real;
    } catch {
      return false;
    }
  };
  if (runsIn(String(pid))) return pid;
  for (const candidate of readdirSync("/proc")) {
    if (!/^\d+$/.test(candidate) || !runsIn(candidate)) continue;
    try {
      const nspid = /^NSpid:\s*(.+)$/m.exec(readFileSync(`/proc/${candidate}/status`, "utf8"));
      if (nspid && Number(nspid[1].trim().split(/\s+/).at(-1)) === pid) return Number(candidate);
    } catch { /* gone */ }
  }
  return pid;
}
