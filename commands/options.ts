// Option parsing and progress shared by run and replay.
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
    const line = `step ${p.step}/${p.max_steps} ${p.phase} ${p.request_bytes.toLocaleString("en-US")} B${p.checkpoint ? " (checkpoint)" : ""}`;
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
