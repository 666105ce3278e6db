// Runs one program (no shell) in its own process group, so a timeout or an interruption can kill everything it started.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { delimiter, isAbsolute, resolve as resolvePath, sep } from "node:path";
import { InterruptedError } from "../errors.ts";
import { type Bubblewrap, childEnv, sandboxedArgv, type SandboxPolicy, whichProgram } from "./sandbox.ts";
import { makePidsLimit, SANDBOX_MAX_PROCESSES } from "./pids-limit.ts";
import { openOutputFile, type OutputFile } from "./output-file.ts";

export type ProcessSpec = {
  /** Program and arguments; run without a shell. */
  argv: string[];
  cwd: string;
  /** Kill the whole process group after this many milliseconds. */
  timeoutMs: number;
};

export type ProcessOptions = {
  /** Aborting kills the process group and rejects with InterruptedError. */
  signal?: AbortSignal;
  /** The host environment the child's is picked from (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Variables passed on top of the allow-list (PATH, locale, TZ, TERM, NO_COLOR): what the slice names. */
  passEnv?: readonly string[];
  /** Exact variable names never passed, even when named (the providers' key variables). */
  removeEnv?: readonly string[];
  /** Run inside this sandbox (the workspace is `root`, mounted read-write); unsandboxed when absent. */
  sandbox?: {
    bwrap: Bubblewrap;
    policy: SandboxPolicy;
    root: string;
    /** The workspace's git folders and `gitdir:` files at the run's start: their config and hooks mounted read-only. */
    gitPaths?: readonly string[];
  };
  now?: () => number;
  /** Captured-output cap (default 2 MiB); head and tail are kept. */
  maxOutputBytes?: number;
  /** Sandboxed: at most this many processes at once, where a pids cgroup can be made (default 1024). */
  maxProcesses?: number;
  /** The command is stopped once its output file holds more than this (default 256 MiB): a disk is not a cap. */
  maxWrittenBytes?: number;
};

export type ProcessResult = {
  /** Exit status; null when the process was killed by a signal. 127 when the program does not exist. */
  exitCode: number | null;
  timedOut: boolean;
  /** stdout and stderr combined in the order written (both write to one file), UTF-8. */
  output: string;
  durationMs: number;
};

export const MAX_OUTPUT_BYTES = 2 * 1024 * 1024;
export const MISSING_PROGRAM_EXIT_CODE = 127;

// The command's stdout and stderr are one file (output-file.ts), read once the leader has exited and its group was
// killed: nothing waits for pipes to drain, and no busy loop can make a program that ends itself drop what it wrote.
const MAX_WRITTEN_BYTES = 256 * 1024 * 1024;
// How often the output file's size is checked against maxWrittenBytes.
const WRITTEN_CHECK_MS = 250;
const writtenNote = (bytes: number) =>
  `\n[… loom stopped the command here: it had written more than ${bytes} bytes of output …]\n`;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The environment a child sees: the allow-list plus the names passed, without the names removed. */
export function processEnv(
  env: Record<string, string | undefined>,
  { pass = [], remove = [], sandboxed }: { pass?: readonly string[]; remove?: readonly string[]; sandboxed: boolean },
): Record<string, string> {
  const out = childEnv(env, { pass, sandboxed });
  for (const name of remove) delete out[name];
  return out;
}

/**
 * PATH without the entries a workspace could fill: relative ones (resolved against the working folder, which is the
 * workspace) and absolute ones inside any of `workspaces`, as written or with links resolved (a link in the workspace
 * can be pointed elsewhere later). The rest keep their order.
 */
export function trustedPath(path: string, workspaces: readonly string[]): string {
  const roots = [...new Set(workspaces.flatMap((root) => [resolvePath(root), realOr(root)]))];
  const within = (at: string) =>
    roots.some((root) => at === root || at.startsWith(root.endsWith(sep) ? root : root + sep));
  const inside = (entry: string) => within(resolvePath(entry)) || within(realOr(entry));
  return path.split(delimiter).filter((entry) => isAbsolute(entry) && !inside(entry)).join(delimiter);
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolvePath(path);
  }
}

/** The variable that marks every process an unsandboxed action started, so the ones that escaped its group are found. */
const PROCESS_TOKEN_VARIABLE = "LOOM_PROCESS_TOKEN";

/**
 * Kills every process (Linux: read from /proc) whose environment carries `token`: what an unsandboxed command left
 * behind outside its process group (setsid, daemons). Best effort: a process that clears its environment is not found;
 * the OS sandbox is what guarantees nothing outlives an action.
 */
function killMarked(token: string): number {
  if (process.platform !== "linux") return 0;
  const needle = `${PROCESS_TOKEN_VARIABLE}=${token}`;
  let killed = 0;
  // Twice: a process forked while the first pass ran is caught by the second.
  for (let pass = 0; pass < 2; pass++) {
    let names: string[];
    try {
      names = readdirSync("/proc");
    } catch {
      return killed;
    }
    for (const name of names) {
      if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
      let environ: string;
      try {
        environ = readFileSync(`/proc/${name}/environ`, "latin1");
      } catch {
        continue; // gone, or not ours to read
      }
      if (!environ.split("\0").includes(needle)) continue;
      try {
        process.kill(Number(name), "SIGKILL");
        killed++;
      } catch { /* already gone */ }
    }
  }
  return killed;
}

function omissionMarker(bytes: number): string {
  return `\n[… ${bytes} bytes omitted by loom …]\n`;
}

/** Keeps the first and last bytes of a stream within a fixed budget, counting what falls in between. */
export class HeadTailBuffer {
  readonly #headCap: number;
  readonly #tailCap: number;
  readonly #head: Uint8Array[] = [];
  #headBytes = 0;
  #tail: Uint8Array[] = [];
  #tailBytes = 0;
  #omitted = 0;

  constructor(maxBytes: number) {
    // Room for the marker is reserved so head + marker + tail never exceeds maxBytes.
    const budget = Math.max(0, maxBytes - 64);
    this.#headCap = Math.floor(budget / 2);
    this.#tailCap = budget - this.#headCap;
  }

  push(chunk: Uint8Array): void {
    if (this.#headBytes < this.#headCap) {
      const take = Math.min(chunk.length, this.#headCap - this.#headBytes);
      this.#head.push(chunk.subarray(0, take));
      this.#headBytes += take;
      chunk = chunk.subarray(take);
    }
    if (chunk.length === 0) return;
    this.#tail.push(chunk);
    this.#tailBytes += chunk.length;
    while (this.#tailBytes > this.#tailCap) {
      const first = this.#tail[0];
      if (first === undefined) break; // the bytes over the cap are in the tail
      const excess = this.#tailBytes - this.#tailCap;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailBytes -= first.length;
        this.#omitted += first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailBytes -= excess;
        this.#omitted += excess;
      }
    }
  }

  text(): string {
    let head = concat(this.#head);
    let tail = concat(this.#tail);
    if (this.#omitted === 0) return decode(concat([head, tail]));
    // Cut on character boundaries so the kept text decodes cleanly.
    const headEnd = charStartAtOrBefore(head, head.length);
    const tailStart = charStartAtOrAfter(tail, 0);
    const omitted = this.#omitted + (head.length - headEnd) + tailStart;
    head = head.subarray(0, headEnd);
    tail = tail.subarray(tailStart);
    return decode(head) + omissionMarker(omitted) + decode(tail);
  }
}

/** Runs argv in cwd; resolves with its status and output. Rejects only with InterruptedError (on abort). */
export function runProcess(spec: ProcessSpec, options: ProcessOptions = {}): Promise<ProcessResult> {
  const {
    signal,
    env = process.env,
    passEnv = [],
    removeEnv = [],
    sandbox,
    now = Date.now,
    maxOutputBytes = MAX_OUTPUT_BYTES,
    maxProcesses = SANDBOX_MAX_PROCESSES,
    maxWrittenBytes = MAX_WRITTEN_BYTES,
  } = options;
  const started = now();
  if (signal?.aborted) return Promise.reject(new InterruptedError());
  const [program, ...args] = spec.argv;
  const missing = (message: string): Promise<ProcessResult> =>
    Promise.resolve({
      exitCode: MISSING_PROGRAM_EXIT_CODE,
      timedOut: false,
      output: `${message}\n`,
      durationMs: now() - started,
    });
  if (program === undefined || program === "") return missing("Cannot run an empty command");
  if (!isDirectory(spec.cwd)) {
    return missing(
      `Cannot run ${JSON.stringify(program)}: working directory ${JSON.stringify(spec.cwd)} does not exist`,
    );
  }

  const childEnvironment = processEnv(env, { pass: passEnv, remove: removeEnv, sandboxed: sandbox !== undefined });
  // The program (and whatever it starts) is found on PATH without its relative entries and without entries in the
  // workspace: `node_modules/.bin` on PATH would otherwise let the code under test plant `node` for the next check.
  if (childEnvironment.PATH !== undefined) {
    childEnvironment.PATH = trustedPath(childEnvironment.PATH, [spec.cwd, ...(sandbox ? [sandbox.root] : [])]);
  }
  // Python reads its bytecode cache but writes none: a test run leaves no __pycache__ behind to count as a change, and
  // a .pyc planted there is a change like any other file (docs/sandbox.md, "The revision").
  childEnvironment.PYTHONDONTWRITEBYTECODE ??= "1";
  // Unsandboxed, every process of the action carries a token, so the ones that leave its group can be found and killed.
  const token = sandbox ? undefined : randomBytes(9).toString("hex");
  if (token) childEnvironment[PROCESS_TOKEN_VARIABLE] = token;
  let command = program;
  let commandArgs = args;
  if (sandbox) {
    // Inside the sandbox a missing program is bubblewrap's own error; say it the way an unsandboxed run does.
    const found = program.includes("/")
      ? isExecutableAt(spec.cwd, program)
      : whichProgram(program, childEnvironment.PATH ?? "") !== undefined;
    if (!found) return missing(`Cannot run ${JSON.stringify(program)}: program not found`);
    [command, ...commandArgs] = sandboxedArgv(sandbox.bwrap, {
      argv: spec.argv,
      root: sandbox.root,
      env: childEnvironment,
      policy: sandbox.policy,
      ...(sandbox.gitPaths ? { gitPaths: sandbox.gitPaths } : {}),
    });
  }
  let outputFile: OutputFile;
  try {
    outputFile = openOutputFile();
  } catch (error) {
    return Promise.resolve({
      exitCode: null,
      timedOut: false,
      output: `Cannot run ${JSON.stringify(program)}: no file for its output: ${String(error).split("\n")[0]}\n`,
      durationMs: now() - started,
    });
  }
  // A fork bomb inside the sandbox meets the pids cgroup's limit instead of the machine's.
  const pids = sandbox ? makePidsLimit({ max: maxProcesses }) : null;
  if (pids) [command, ...commandArgs] = pids.wrap([command, ...commandArgs]);

  return new Promise<ProcessResult>((resolve, reject) => {
    let timedOut = false;
    let interrupted = false;
    let settled = false;
    let overWritten = false;

    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, commandArgs, {
        cwd: spec.cwd,
        // Sandboxed, this is bubblewrap's environment, which it hands to the child unchanged: never on an argument list.
        env: childEnvironment,
        detached: true,
        stdio: ["ignore", outputFile.fd, outputFile.fd],
        windowsHide: true,
      });
    } catch (error) {
      outputFile.close();
      pids?.release();
      throw error;
    }

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        // A negative pid addresses the whole group (the child is its leader because of `detached`).
        if (process.platform === "win32") child.kill("SIGKILL");
        else process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is already gone.
      }
    };
    const onAbort = () => {
      interrupted = true;
      killGroup();
    };
    // setTimeout fires at once for delays beyond 2^31-1 ms; clamp so a huge timeout means "about 24 days".
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, Math.min(spec.timeoutMs, MAX_TIMER_MS));
    signal?.addEventListener("abort", onAbort, { once: true });
    const sizeCheck = setInterval(() => {
      if (overWritten || outputFile.size() <= maxWrittenBytes) return;
      overWritten = true;
      killGroup();
    }, WRITTEN_CHECK_MS);

    /** What the command wrote, within maxOutputBytes; null: the output file's, read now. */
    const finish = (exitCode: number | null, message: string | null) => {
      if (settled) return;
      settled = true;
      if (token) killMarked(token);
      pids?.release();
      clearTimeout(timer);
      clearInterval(sizeCheck);
      signal?.removeEventListener("abort", onAbort);
      let text = message ?? "";
      try {
        if (message === null) {
          const output = new HeadTailBuffer(maxOutputBytes);
          outputFile.readAll((chunk) => output.push(chunk));
          text = output.text() + (overWritten ? writtenNote(maxWrittenBytes) : "");
        }
      } catch (error) {
        text = `Cannot read the output of ${JSON.stringify(program)}: ${String(error).split("\n")[0]}\n`;
      } finally {
        outputFile.close();
      }
      if (interrupted) reject(new InterruptedError());
      else resolve({ exitCode, timedOut, output: text, durationMs: now() - started });
    };

    child.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") {
        finish(MISSING_PROGRAM_EXIT_CODE, `Cannot run ${JSON.stringify(program)}: program not found\n`);
      } else finish(null, `Cannot run ${JSON.stringify(program)}: ${error.message.split("\n")[0]}\n`);
    });
    child.on("exit", (code) => {
      // The leader is gone: the timeout no longer applies (a late firing would call a finished command timed out).
      clearTimeout(timer);
      // Background processes the command left behind belong to it: kill them so none outlives the action. What they
      // wrote before is in the file; one that escaped the kill may go on writing to it, unread.
      killGroup();
      finish(code, null);
    });
  });
}

function isExecutableAt(cwd: string, program: string): boolean {
  try {
    const info = statSync(resolvePath(cwd, program));
    return info.isFile() && (info.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const first = parts[0];
  if (parts.length === 1 && first !== undefined) return first;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function decode(bytes: Uint8Array): string {
  return new TextDecoder("utf-8").decode(bytes);
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;
/** Whether bytes[i] is a UTF-8 continuation byte; outside the bytes there is none. */
const continuationAt = (bytes: Uint8Array, i: number) => {
  const byte = bytes[i];
  return byte !== undefined && isContinuation(byte);
};

/** The largest index <= end where only whole characters precede it (drops a trailing partial character). */
function charStartAtOrBefore(bytes: Uint8Array, end: number): number {
  let i = end - 1;
  let continuations = 0;
  while (continuations < 3 && continuationAt(bytes, i)) {
    i--;
    continuations++;
  }
  const lead = bytes[i];
  if (lead === undefined || lead < 0xc0) return end;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  return continuations + 1 >= length ? end : i;
}

/** The smallest index >= start that begins a character (skips leading continuation bytes). */
function charStartAtOrAfter(bytes: Uint8Array, start: number): number {
  let i = start;
  while (i - start < 3 && continuationAt(bytes, i)) i++;
  return i;
}
