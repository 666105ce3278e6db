#!/usr/bin/env bun
// The command router: parse argv, dispatch, and map what a command throws (usage errors, bugs) to exit codes. The only
// place that exits.
import process from "node:process";
import { Buffer } from "node:buffer";
import { existsSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { InterruptedError, UsageError } from "./lib/errors.ts";
import { VERSION, versionLine } from "./lib/version.ts";
import type { CommandSpec } from "./commands/cli-spec.ts";
import type { Io } from "./commands/io.ts";
import { keyValuesOf } from "./lib/text/redact.ts";
import { holdKeys, redactHeld } from "./lib/io/held-keys.ts";
import { inertOutput } from "./lib/text/safe-text.ts";

type Command = (argv: string[], io: Io) => Promise<number>;

// Loaded on first use, so `loom --version` does not evaluate the specs, providers, importers and schemas behind the
// commands. What each command accepts is its spec in commands/specs.ts.
export const COMMANDS: Record<string, Command> = {
  run: async (argv, io) => (await import("./commands/run.ts")).runCommand(argv, io),
  replay: async (argv, io) => (await import("./commands/replay.ts")).replayCommand(argv, io),
  report: async (argv, io) => (await import("./commands/report.ts")).reportCommand(argv, io),
  eval: async (argv, io) => (await import("./commands/eval.ts")).evalCommand(argv, io),
  schema: async (argv, io) => (await import("./commands/schema.ts")).schemaCommand(argv, io),
  models: async (argv, io) => (await import("./commands/models.ts")).modelsCommand(argv, io),
  config: async (argv, io) => (await import("./commands/config.ts")).configCommand(argv, io),
  doctor: async (argv, io) => (await import("./commands/doctor.ts")).doctorCommand(argv, io),
  completions: async (argv, io) => (await import("./commands/completions.ts")).completionsCommand(argv, io),
};

const VERSION_FLAGS = ["--version", "-V", "-v"];

export async function main(argv: string[], hostIo: Io): Promise<number> {
  // Every key in the environment is redacted from everything printed (and, through files.ts, written): a key a server
  // echoed, a model repeated or a file held never reaches the terminal, --json or stream-json (lib/text/redact.ts).
  holdKeys(keyValuesOf(hostIo.env));
  const io: Io = {
    ...hostIo,
    // stdout never carries a raw control character (a file's name with an escape sequence in it): text, JSON and
    // stream-json alike. stderr's lines escape what they quote where they are made (its live line is Loom's own codes).
    stdout: (text) => hostIo.stdout(inertOutput(redactHeld(text))),
    stderr: (text) => hostIo.stderr(redactHeld(text)),
  };
  const [name, ...rest] = argv;
  if ((name !== undefined && VERSION_FLAGS.includes(name)) || (name === "version" && rest.length === 0)) {
    io.stdout(`${versionLine()}\n`);
    return 0;
  }
  // Past the version flag: `loom --version` evaluates none of this (ending.ts brings zod, ~20 ms of a start).
  const { endingOf } = await import("./lib/ending.ts");
  // A missing or unknown command is bad input like any other: its exit code is the one endingOf gives a usage error.
  const USAGE_EXIT = endingOf({ threw: new UsageError("no command") }).exitCode;
  const { COMMAND_SPECS, EXIT_CODE_TEXT } = await import("./commands/specs.ts");
  const { didYouMean, findSpec, parseCommand, renderHelp, renderMainUsage } = await import("./commands/cli-spec.ts");
  const usage = () =>
    renderMainUsage(COMMAND_SPECS, {
      title: `loom ${VERSION} — runs LLM agent slices with a bounded working context`,
      exitCodes: EXIT_CODE_TEXT,
    });
  if (name === undefined) {
    // No command is a usage error: the usage goes where errors go.
    io.stderr(usage());
    return USAGE_EXIT;
  }
  if (name === "--help" || name === "-h" || (name === "help" && rest.length === 0)) {
    io.stdout(usage());
    return 0;
  }
  const names = Object.keys(COMMAND_SPECS);
  const unknown = (word: string, known: string[], what: string, command = "") => {
    const close = didYouMean(word, known);
    const expected = known.length > 0 ? `expected ${known.join(", ")}; ` : "";
    const loom = command ? `loom ${command}` : "loom";
    io.stderr(
      `${loom}: unknown ${what} ${JSON.stringify(word)}${
        close ? `; did you mean ${close}?` : ""
      } (${expected}see ${loom} --help)\n`,
    );
    return USAGE_EXIT;
  };
  // "loom --verison": an option where a command goes, compared with the options loom takes there.
  if (name.startsWith("-")) return unknown(name, [...VERSION_FLAGS.slice(0, 1), "--help"], "option");
  if (name === "help") {
    // "loom help run" is "loom run --help"; "loom help eval validate" a subcommand's; "loom help --help" help's own.
    const found = findSpec(COMMAND_SPECS, rest[0] === "--help" || rest[0] === "-h" ? ["help"] : rest);
    if ("unknown" in found) {
      const words = found.unknown.split(" ");
      const command = words.slice(0, -1).join(" ");
      return unknown(words.at(-1)!, found.known, command ? "subcommand" : "command", command);
    }
    io.stdout(renderHelp(found.path, found.spec));
    return 0;
  }
  // A command still parsing its own flags (no spec in commands/specs.ts yet) runs as it is; tests/cli-spec.test.ts
  // fails until it has one, since its help and completions cannot be generated.
  if (!Object.hasOwn(COMMAND_SPECS, name) && !Object.hasOwn(COMMANDS, name)) return unknown(name, names, "command");
  // The command and its subcommand: "eval validate SUITE" is the spec at ["eval", "validate"].
  let path = name, spec: CommandSpec | undefined = COMMAND_SPECS[name], args = rest;
  for (
    let [word] = args;
    word !== undefined && spec?.subcommands && Object.hasOwn(spec.subcommands, word);
    [word] = args
  ) {
    [path, spec, args] = [`${path} ${word}`, spec.subcommands[word], args.slice(1)];
  }
  // "loom eval vaildate suite/": a word close to a subcommand, and no file of that name, is a mistyped subcommand.
  const subcommands = Object.keys(spec?.subcommands ?? {});
  const [next] = args;
  if (next !== undefined && subcommands.length > 0 && !next.startsWith("-") && !existsSync(resolve(io.cwd, next))) {
    if (didYouMean(next, subcommands)) {
      return unknown(next, subcommands, "subcommand", path);
    }
  }
  try {
    // Flags are checked against the spec before the command loads: a mistyped one costs no provider or importer.
    if (spec && parseCommand(spec, args, { command: path }).help) {
      io.stdout(renderHelp(path, spec));
      return 0;
    }
    if (name === "version") {
      io.stdout(`${versionLine()}\n`);
      return 0;
    }
    const command = COMMANDS[name];
    // A name with a spec and no command is a spec-only entry (help): it has printed above or is unknown.
    if (command === undefined) return unknown(name, names, "command");
    return await command(rest, io);
  } catch (error) {
    // A command returns its result's exit code; what it throws is bad input, or a bug.
    if (error instanceof UsageError) {
      // run and replay promise a result object to pipelines that asked for JSON, bad input included.
      const { outputFormatOfArgv } = await import("./commands/options.ts");
      const { Reporter } = await import("./commands/reporter.ts");
      const format = name === "run" || name === "replay" ? outputFormatOfArgv(rest) : "text";
      return new Reporter(io, { command: path, format }).usageError(error);
    }
    // A bug: said through the reporter too, so a pipeline that asked for JSON gets its result object.
    const { outputFormatOfArgv } = await import("./commands/options.ts");
    const { Reporter } = await import("./commands/reporter.ts");
    const format = name === "run" || name === "replay" ? outputFormatOfArgv(rest) : "text";
    return new Reporter(io, { command: path, format }).thrown(error);
  }
}

/**
 * What stderr can do: redraw a live line (a terminal), its width, and colour (not on a dumb terminal, never with a
 * non-empty NO_COLOR: https://no-color.org).
 */
export function terminal(
  { isTTY, columns, env }: { isTTY: boolean; columns?: number; env: Record<string, string | undefined> },
): Pick<Io, "isTTY" | "columns" | "color"> {
  return { isTTY, columns: isTTY ? columns : undefined, color: isTTY && env.TERM !== "dumb" && !env.NO_COLOR };
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

/**
 * Writes to a stream in order, and tells when the last write has been handed to the OS. An empty write's callback
 * says nothing: in the compiled binary it fires while earlier writes still wait for a slow pipe (which process.exit
 * then cut off at 64 KiB), so the promise is the callback of the last write that carried bytes. A failed write (the
 * reader went away) settles it too. A reader that closed the pipe (`| head -1`: EPIPE, thrown or emitted) ends the
 * writing quietly: the rest is dropped, and the command ends with its own exit code, its report written.
 */
function orderedWriter(
  stream: {
    write: (text: string, done: (error?: Error | null) => void) => unknown;
    on: (event: "error", listener: (error: Error) => void) => unknown;
  },
): { write: (text: string) => void; drained: () => Promise<void> } {
  let last: Promise<void> = Promise.resolve();
  let closed = false;
  const closedBy = (error: unknown): boolean => {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "EPIPE" || code === "ERR_STREAM_DESTROYED") closed = true;
    return closed;
  };
  stream.on("error", (error) => {
    if (!closedBy(error)) throw error;
  });
  return {
    write: (text) => {
      if (text === "" || closed) return;
      last = new Promise((resolve, reject) => {
        try {
          stream.write(text, () => resolve());
        } catch (error) {
          if (closedBy(error)) resolve();
          else reject(error);
        }
      });
    },
    drained: () => last,
  };
}

/** `loom --version` alone: one line written straight to fd 1, before the first use of process.stdout and friends. */
function versionOnly(argv: string[]): boolean {
  const [name, ...rest] = argv;
  return rest.length === 0 && name !== undefined && (VERSION_FLAGS.includes(name) || name === "version");
}

if (import.meta.main && versionOnly(process.argv.slice(2))) {
  // A compiled binary's first touch of process.stdout/stderr/stdin costs ~10 ms, more than the rest of a start
  // (bench/startup.ts): the version line needs none of them, nor the signal handlers. Nothing in it is a key.
  writeSync(1, `${versionLine()}\n`);
  process.exit(0);
}

if (import.meta.main) {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    if (signals > 1) {
      void import("./lib/ending.ts").then(({ endingOf }) =>
        process.exit(endingOf({ threw: new InterruptedError() }).exitCode)
      );
      return;
    }
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const stdout = orderedWriter(process.stdout), stderr = orderedWriter(process.stderr);
  const io: Io = {
    stdout: stdout.write,
    stderr: stderr.write,
    readStdin: () => readAll(process.stdin, controller.signal),
    env: process.env,
    cwd: process.cwd(),
    ...terminal({ isTTY: Boolean(process.stderr.isTTY), columns: process.stderr.columns, env: process.env }),
    signal: controller.signal,
  };
  const code = await main(process.argv.slice(2), io);
  process.exitCode = code;
  // Leave once every byte written has reached the OS (a slow pipe included), even if a stray handle (a killed
  // child's pipe) is still open.
  await Promise.all([stdout.drained(), stderr.drained()]);
  process.exit(code);
}
