// Option parsing shared by the commands: flags become validated values or a usage error.
import { resolve } from "node:path";
import { outputFolderProblem, outputPathProblem } from "../lib/adapters/files.ts";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { SANDBOX_MODES, type SandboxMode } from "../lib/adapters/sandbox.ts";
import { ContextPolicyName, PreviewMode, StepProtocol } from "../lib/policy.ts";
import { UsageError } from "../lib/errors.ts";

export function policyOption(value: unknown): ContextPolicyName {
  const parsed = ContextPolicyName.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(
    `--context-policy ${JSON.stringify(value)}: expected ${ContextPolicyName.options.join(" or ")}`,
  );
}

/** --step-protocol two-call|single-call, or undefined when absent. */
export function stepProtocolOption(value: unknown): StepProtocol | undefined {
  if (value === undefined) return undefined;
  const parsed = StepProtocol.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`--step-protocol ${JSON.stringify(value)}: expected ${StepProtocol.options.join(" or ")}`);
}

/** --previews compact|balanced|wide, or undefined when absent. */
export function previewsOption(value: unknown): PreviewMode | undefined {
  if (value === undefined) return undefined;
  const parsed = PreviewMode.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`--previews ${JSON.stringify(value)}: expected ${PreviewMode.options.join(", ")}`);
}

/** parseArgs with positionals, whose complaints become a one-line usage error (exit 2). */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig["options"]>>(
  argv: string[],
  options: O,
  { command }: { command: string },
) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options });
  } catch (error) {
    // Keep the first sentence: the runtime's advice about "--" is noise here.
    throw new UsageError(`${(error as Error).message.split(". ")[0]} (see loom ${command} --help)`);
  }
  // An empty argument is never meant: as a path it would resolve to the current folder (`loom replay ""`).
  if (parsed.positionals.some((arg) => arg === "")) {
    throw new UsageError(`An argument is empty; give a path (see loom ${command} --help)`);
  }
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === "") throw new UsageError(`--${name} is empty; give a value (see loom ${command} --help)`);
  }
  return parsed;
}

/** --sandbox MODE, validated. */
export function sandboxOption(value: unknown): SandboxMode | undefined {
  if (value === undefined) return undefined;
  if ((SANDBOX_MODES as readonly unknown[]).includes(value)) return value as SandboxMode;
  throw new UsageError(`--sandbox ${JSON.stringify(value)}: expected ${SANDBOX_MODES.join(", ")}`);
}

/** A positive whole number of milliseconds from a flag, or undefined when the flag is absent. */
export function millisecondsOption(flag: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms <= 0) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: expected a positive number of milliseconds`);
  }
  return ms;
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

export const OUTPUT_FORMATS = ["text", "json", "stream-json"] as const;
export type RunOutputFormat = (typeof OUTPUT_FORMATS)[number];

/** --output-format text|json|stream-json, with --json as the short form of json. */
export function outputFormatOption(
  { json, format }: { json?: boolean; format?: string },
): RunOutputFormat {
  if (format !== undefined && !(OUTPUT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--output-format ${JSON.stringify(format)}: expected one of ${OUTPUT_FORMATS.join(", ")}`);
  }
  if (json && format !== undefined && format !== "json") {
    throw new UsageError(`--json is --output-format json; it cannot be combined with --output-format ${format}`);
  }
  return json ? "json" : (format as RunOutputFormat | undefined) ?? "text";
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
    if (value === "json" || value === "stream-json") format = value;
  });
  return format;
}
