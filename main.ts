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
  loom run    [REQUEST | -] [--catalog FILE] [--slice NAME] [--workspace DIR]
              [--context-policy legacy|bounded] [--context-report PATH] [--record PATH] [--json]
  loom replay RECORDING… [--from loom|mini-swe-agent|swe-agent|openai-messages|auto]
              [--context-policy legacy|bounded] [--context-report PATH] [--workspace DIR --execute] [--jobs N] [--json]
  loom report REPORT [REPORT…] [--json | --html FILE]
  loom schema catalog|recording|report

Run "loom COMMAND --help" for a command's options. Exit codes: 0 completed, 1 failed, 2 usage error,
3 routing or startup failure, 4 suspended, 5 archive capacity exceeded, 6 step limit, 130 interrupted.
`;

type Command = (argv: string[], io: Io) => Promise<number>;

// Loaded on first use, so `loom --version`, `--help` and a usage error do not evaluate the providers, importers and
// schemas behind the commands.
const COMMANDS: Record<string, Command> = {
  run: async (argv, io) => (await import("./commands/run.ts")).runCommand(argv, io),
  replay: async (argv, io) => (await import("./commands/replay.ts")).replayCommand(argv, io),
  report: async (argv, io) => (await import("./commands/report.ts")).reportCommand(argv, io),
  schema: async (argv, io) => (await import("./commands/schema.ts")).schemaCommand(argv, io),
};

export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    // No command is a usage error: the usage goes where errors go.
    io.stderr(USAGE);
    return EXIT_CODES.usage;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    io.stdout(USAGE);
    return 0;
  }
  if (name === "--version" || name === "-V") {
    io.stdout(`${versionLine()}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(
      `loom: unknown command ${JSON.stringify(name)} (expected run, replay, report or schema; see loom --help)\n`,
    );
    return EXIT_CODES.usage;
  }
  try {
    return await command(rest, io);
  } catch (error) {
    // A command returns its result's exit code; what it throws is bad input, or a bug.
    if (error instanceof UsageError) {
      io.stderr(`loom ${name}: ${error.message}\n`);
      return EXIT_CODES.usage;
    }
    io.stderr(`loom ${name}: internal error: ${errorMessage(error)}\n`);
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
