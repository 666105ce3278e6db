#!/usr/bin/env bun
// The command router: parse argv, dispatch, and map what a command throws (usage errors, bugs) to exit codes. The only
// place that exits.
import process from "node:process";
import { Buffer } from "node:buffer";
import { errorMessage, InterruptedError, UsageError } from "./lib/errors.ts";
import { EXIT_CODES } from "./lib/outcome.ts";
import { VERSION, versionLine } from "./lib/version.ts";
import type { Io } from "./commands/io.ts";

const USAGE = `loom ${VERSION} — runs LLM agent slices with a bounded working context

Usage:
  loom run    "TEXT" --model PROVIDER/MODEL [--workspace DIR] [--max-steps N] [--actions A,B,…]
              [--test-command CMD] [--allow-command CMD]…
  loom run    REQUEST | - | --catalog FILE "TEXT" [--slice NAME] [--workspace DIR]
              [--context-policy legacy|bounded] [--context-report PATH] [--record PATH] [--trace FILE]
              [--output-format text|json|stream-json | --json]
  loom replay RECORDING… | - [--from auto|loom|mini-swe-agent|swe-agent|openai-messages]
              [--context-policy legacy|bounded] [--context-report PATH] [--workspace DIR --execute] [--jobs N] [--resume] [--json]
  loom report REPORT [REPORT…] [--json | --html FILE] [--label NAME…]
  loom report --merge AGGREGATE… [-o FILE]
  loom eval   SUITE --model PROVIDER/MODEL [--policies legacy,bounded] [--repeats N] [--jobs J] [--out DIR]
              [--shard i/n] [--resume] [--prices FILE] [--seed S] [--margin POINTS] [--max-cost USD]
  loom eval   validate SUITE | rescore DIR
  loom schema catalog|request|recording|report|aggregate|events|suite|eval|prices
  loom completions bash|zsh|fish
  loom help [COMMAND]        loom version

Run "loom help COMMAND" (or "loom COMMAND --help") for a command's options. Exit codes: 0 completed, 1 failed, 2 usage error,
3 routing or startup failure, 4 suspended, 5 archive capacity exceeded, 6 step limit, 130 interrupted.
`;

type Command = (argv: string[], io: Io) => Promise<number>;

// Loaded on first use, so `loom --version`, `--help` and a usage error do not evaluate the providers, importers and
// schemas behind the commands.
const COMMANDS: Record<string, Command> = {
  run: async (argv, io) => (await import("./commands/run.ts")).runCommand(argv, io),
  replay: async (argv, io) => (await import("./commands/replay.ts")).replayCommand(argv, io),
  report: async (argv, io) => (await import("./commands/report.ts")).reportCommand(argv, io),
  eval: async (argv, io) => (await import("./commands/eval.ts")).evalCommand(argv, io),
  schema: async (argv, io) => (await import("./commands/schema.ts")).schemaCommand(argv, io),
  completions: async (argv, io) => (await import("./commands/completions.ts")).completionsCommand(argv, io),
};

const COMMAND_NAMES = [...Object.keys(COMMANDS), "help", "version"];

export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    // No command is a usage error: the usage goes where errors go.
    io.stderr(USAGE);
    return EXIT_CODES.usage;
  }
  if (name === "--help" || name === "-h" || (name === "help" && rest.length === 0)) {
    io.stdout(USAGE);
    return 0;
  }
  if (name === "--version" || name === "-V" || name === "-v" || name === "version") {
    io.stdout(`${versionLine()}\n`);
    return 0;
  }
  // "loom help run" is "loom run --help".
  const [commandName, args] = name === "help" ? [rest[0], ["--help"]] : [name, rest];
  const command = Object.hasOwn(COMMANDS, commandName) ? COMMANDS[commandName] : undefined;
  if (!command) {
    io.stderr(
      `loom: unknown command ${JSON.stringify(commandName)} (expected ${COMMAND_NAMES.join(", ")}; see loom --help)\n`,
    );
    return EXIT_CODES.usage;
  }
  try {
    return await command(args, io);
  } catch (error) {
    // A command returns its result's exit code; what it throws is bad input, or a bug.
    if (error instanceof UsageError) {
      // run and replay promise a result object to pipelines that asked for JSON, bad input included.
      const { outputFormatOfArgv } = await import("./commands/options.ts");
      const { Reporter } = await import("./commands/reporter.ts");
      const format = commandName === "run" || commandName === "replay" ? outputFormatOfArgv(args) : "text";
      return new Reporter(io, { command: commandName, format }).usageError(error);
    }
    io.stderr(`loom ${commandName}: internal error: ${errorMessage(error)}\n`);
    return EXIT_CODES.internal_error;
  }
}

/**
 * All of a stream as UTF-8 text, read without blocking the event loop (a blocking read would hold SIGINT and SIGTERM
 * back until the writer closes the pipe). Rejects with InterruptedError as soon as the signal aborts.
 */
export function readAll(stream: AsyncIterable<Uint8Array | string>, signal: AbortSignal): Promise<string> {
  if (signal.aborted) return Promise.reject(new InterruptedError());
  let onAbort = () => {};
  const interrupted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new InterruptedError());
    signal.addEventListener("abort", onAbort, { once: true });
  });
  const reading = (async () => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream) chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
    return Buffer.concat(chunks).toString("utf8");
  })();
  return Promise.race([reading, interrupted]).finally(() => signal.removeEventListener("abort", onAbort));
}

if (import.meta.main) {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    if (signals > 1) process.exit(EXIT_CODES.interrupted);
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const io: Io = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: () => readAll(process.stdin, controller.signal),
    env: process.env,
    cwd: process.cwd(),
    isTTY: Boolean(process.stderr.isTTY),
    signal: controller.signal,
  };
  const code = await main(process.argv.slice(2), io);
  process.exitCode = code;
  // Let stdout drain, then leave even if a stray handle (a killed child's pipe) is still open.
  process.stdout.write("", () => process.exit(process.exitCode));
}
