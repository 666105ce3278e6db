// Option parsing shared by the commands: flags become validated values or a usage error.
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { outputFolderProblem, outputPathProblem } from "../lib/io/files.ts";
import { UsageError } from "../lib/errors.ts";
import { milliseconds } from "../lib/settings/setting-table.ts";
import { OUTPUT_FORMATS } from "./specs.ts";

/** A positive whole number of milliseconds from a flag, or undefined when the flag is absent. */
export function millisecondsOption(flag: string, value: unknown): number | undefined {
  return value === undefined ? undefined : milliseconds(flag, value);
}

/**
 * The absolute path of a file flag (resolved against cwd), or a usage error naming the flag and the path. A missing
 * folder is created when the file is written, and `notice` says so first: never silently — as root, nothing else
 * would tell that a mistyped `--context-report /ect/r.json` made /ect.
 */
export function outputPathOption(
  flag: string,
  value: string,
  { cwd, folder = false, notice }: { cwd: string; folder?: boolean; notice?: (message: string) => void },
): string {
  const path = resolve(cwd, value);
  const problem = folder ? outputFolderProblem(path) : outputPathProblem(path);
  if (problem) throw new UsageError(`${flag} ${JSON.stringify(value)}: ${problem}`);
  const missing = folder ? path : dirname(path);
  if (notice && !existsSync(missing)) notice(`${flag}: creating the folder ${JSON.stringify(missing)}`);
  return path;
}

export type RunOutputFormat = (typeof OUTPUT_FORMATS)[number];

/** --output-format text|json|stream-json (checked by the spec's values list), with --json as the short form of json. */
export function outputFormatOption(
  { json, format }: { json?: boolean; format?: RunOutputFormat },
): RunOutputFormat {
  if (json && format !== undefined && format !== "json") {
    throw new UsageError(`--json is --output-format json; it cannot be combined with --output-format ${format}`);
  }
  return json ? "json" : format ?? "text";
}

/**
 * The output format argv asks for, read leniently (for a usage error, when the options themselves may not parse), so
 * a pipeline that asked for JSON still gets a result object.
 */
export function outputFormatOfArgv(argv: string[]): RunOutputFormat {
  let format: RunOutputFormat = "text";
  argv.forEach((arg, i) => {
    if (arg === "--json") format = "json";
    const value = arg === "--output-format" ? argv[i + 1] : arg.startsWith("--output-format=") ? arg.slice(16) : null;
    const known = OUTPUT_FORMATS.find((f) => f === value);
    if (known !== undefined && known !== "text") format = known;
  });
  return format;
}
