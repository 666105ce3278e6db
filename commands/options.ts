// Option parsing shared by the commands: flags become validated values or a usage error.
import { resolve } from "node:path";
import { outputFolderProblem, outputPathProblem } from "../lib/adapters/files.ts";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ContextPolicyName } from "../lib/policy.ts";
import { UsageError } from "../lib/errors.ts";

export function policyOption(value: unknown): ContextPolicyName {
  const parsed = ContextPolicyName.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(
    `--context-policy ${JSON.stringify(value)}: expected ${ContextPolicyName.options.join(" or ")}`,
  );
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
