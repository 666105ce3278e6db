// Option parsing, output-path checks and progress shared by run and replay.
import { accessSync, constants, type Stats, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { ContextPolicyName } from "../lib/context.ts";
import { UsageError } from "../lib/errors.ts";
import type { Progress } from "../lib/loop.ts";
import type { Io } from "./io.ts";

export function policyOption(value: unknown): ContextPolicyName {
  if (value === "legacy" || value === "bounded") return value;
  throw new UsageError(`--context-policy ${JSON.stringify(value)}: expected legacy or bounded`);
}

/** Human progress on stderr: one live line on a terminal, plain lines otherwise. */
export function progressPrinter(io: Io): (p: Progress) => void {
  return (p) => {
    const line = `step ${p.step}/${p.max_steps} ${p.phase} ${p.request_bytes.toLocaleString("en-US")} B${
      p.checkpoint ? " (checkpoint)" : ""
    }`;
    if (io.isTTY) io.stderr(`\r\x1b[2K${line}`);
    else io.stderr(`${line}\n`);
  };
}

/** Ends a live progress line before other output. */
export function endProgress(io: Io): void {
  if (io.isTTY) io.stderr("\r\x1b[2K");
}

/** parseArgs with positionals, whose complaints become a one-line usage error (exit 2). */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig["options"]>>(
  argv: string[],
  options: O,
  { command }: { command: string },
) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options });
  } catch (error) {
    // Keep the first sentence: the runtime's advice about "--" is noise here.
    throw new UsageError(`${(error as Error).message.split(". ")[0]} (see loom ${command} --help)`);
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
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
  return null;
}

/**
 * Why a file Loom is asked to write (a report, a recording) could not be written, or null when it can: the path is
 * not a directory, and its folder exists or can be created. Checked before a run starts, so no run is wasted on a
 * report that cannot land.
 */
export function outputPathProblem(path: string): string | null {
  if (statOrNull(path)?.isDirectory()) return "is a directory, not a file";
  return folderProblem(dirname(path));
}

/** Why a folder Loom is asked to write files into could not be used, or null when it can. */
export function outputFolderProblem(dir: string): string | null {
  const stat = statOrNull(dir);
  if (stat !== null && !stat.isDirectory()) return "is not a directory";
  return folderProblem(dir);
}

/** The absolute path of a file flag (resolved against cwd), or a usage error naming the flag and the path. */
export function outputPathOption(
  flag: string,
  value: string,
  { cwd, folder = false }: { cwd: string; folder?: boolean },
): string {
  const path = resolve(cwd, value);
  const problem = folder ? outputFolderProblem(path) : outputPathProblem(path);
  if (problem) throw new UsageError(`${flag} ${JSON.stringify(value)}: ${problem}`);
  return path;
}

/** "1 recording", "2 recordings", "1,024 request bytes". */
export function plural(count: number, noun: string, many = `${noun}s`): string {
  return `${count.toLocaleString("en-US")} ${count === 1 ? noun : many}`;
}
