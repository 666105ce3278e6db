// loom run: argv -> a run's input (a SliceRequest file, or a request text and a catalog) -> startRun -> the reporter.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type RunInput, type StartOptions, startRun } from "../lib/adapters/start-run.ts";
import { LoomError, UsageError } from "../lib/errors.ts";
import { SliceRequest } from "../lib/slice.ts";
import { formatZodError } from "../lib/zod-error.ts";
import type { Io } from "./io.ts";
import { millisecondsOption, outputPathOption, parseCommandArgs, policyOption, sandboxOption } from "./options.ts";
import { Reporter } from "./reporter.ts";

const HELP = `loom run [REQUEST | -] [options]

Runs one slice. REQUEST is a SliceRequest JSON file (or - for stdin); with --catalog it is the request text and
the catalog routes it to a slice.

Options:
  --catalog FILE          route the request through a catalog (JSON or JSONC)
  --slice NAME            with --catalog: run this slice, skipping routing
  --workspace DIR         override the workspace
  --context-policy NAME   legacy (default) or bounded
  --context-report PATH   write the context report (also when the run fails)
  --record PATH           write a recorded workflow (JSONL) that loom replay reproduces
  --sandbox MODE          auto (default), required or off: where test and command processes run (docs/sandbox.md)
  --provider-deadline-ms N  a model call, retries included, ends within N ms (default 60000)
  --provider-idle-timeout-ms N  an attempt that receives nothing for N ms fails and is retried (default 30000)
  --json                  print one JSON result object on stdout
  --quiet                 no progress on stderr

The model is "PROVIDER/MODEL": anthropic/…, openai/… or openai-compatible/… (see README: Providers).
`;

export const RUN_OPTIONS = {
  catalog: { type: "string" },
  slice: { type: "string" },
  workspace: { type: "string" },
  "context-policy": { type: "string" },
  "context-report": { type: "string" },
  record: { type: "string" },
  sandbox: { type: "string" },
  "provider-deadline-ms": { type: "string" },
  "provider-idle-timeout-ms": { type: "string" },
  json: { type: "boolean", default: false },
  quiet: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

export async function runCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, RUN_OPTIONS, { command: "run" });
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  const plan = await planRun(values, positionals, io);
  const reporter = new Reporter(io, { command: "run", format: values.json ? "json" : "text", quiet: values.quiet });
  if ("unstarted" in plan) return reporter.unstarted(plan.unstarted);
  const result = await startRun(plan.input, {
    ...plan.options,
    signal: io.signal,
    env: io.env,
    warn: (message) => io.stderr(`loom run: ${message}\n`),
    onProgress: reporter.progress,
    onRouting: (note) => reporter.routing(note),
  });
  return reporter.run(result, { label: `run ${"catalog" in plan.input ? result.report.slice ?? "" : ""}`.trim() });
}

type RunPlan =
  | { input: RunInput; options: Pick<StartOptions, "contextPolicy" | "contextReport" | "record" | "sandbox" | "http"> }
  | { unstarted: LoomError };

/** The flags, validated, as a run's input and options. A bad flag is a usage error (main.ts prints it). */
async function planRun(
  values: { [K in keyof typeof RUN_OPTIONS]?: string | boolean },
  positionals: string[],
  io: Io,
): Promise<RunPlan> {
  const flag = (name: keyof typeof RUN_OPTIONS) => values[name] as string | undefined;
  if (flag("catalog") === undefined && flag("slice") !== undefined) {
    throw new UsageError("--slice needs --catalog FILE");
  }
  if (flag("catalog") === "") throw new UsageError("--catalog needs a FILE");
  const catalog = flag("catalog");
  if (positionals.length !== 1) {
    throw new UsageError(
      catalog === undefined
        ? "Expected one REQUEST (a SliceRequest JSON file, or - for stdin)"
        : "Expected one REQUEST (the request text, or - for stdin)",
    );
  }
  const policy = flag("context-policy");
  const contextPolicy = policy === undefined ? undefined : policyOption(policy);
  // Where the report and the recording go is checked before anything runs: a run must not end in an unwritable path.
  const report = flag("context-report");
  const contextReport = report ? outputPathOption("--context-report", report, { cwd: io.cwd }) : undefined;
  const record = flag("record") ? outputPathOption("--record", flag("record")!, { cwd: io.cwd }) : undefined;
  const workspace = flag("workspace") ? resolve(io.cwd, flag("workspace")!) : undefined;
  const sandbox = sandboxOption(flag("sandbox"));
  const http = {
    deadlineMs: millisecondsOption("--provider-deadline-ms", flag("provider-deadline-ms")),
    timeoutMs: millisecondsOption("--provider-idle-timeout-ms", flag("provider-idle-timeout-ms")),
  };
  const options = { contextPolicy, contextReport, record, sandbox, http };

  if (catalog !== undefined) {
    const text = (positionals[0] === "-" ? await io.readStdin() : positionals[0]).trim();
    if (text === "") throw new UsageError("The request is empty");
    const file = resolve(io.cwd, catalog);
    return { input: { catalog: { file, name: catalog, text, slice: flag("slice"), workspace } }, options };
  }
  try {
    return { input: { request: await readRequest(positionals[0], { io, workspace }) }, options };
  } catch (error) {
    if (error instanceof LoomError) return { unstarted: error };
    throw error;
  }
}

/** The SliceRequest file (or stdin), validated, with the workspace made absolute (--workspace wins). */
async function readRequest(source: string, { io, workspace }: { io: Io; workspace?: string }): Promise<SliceRequest> {
  let text: string;
  try {
    text = source === "-" ? await io.readStdin() : readFileSync(resolve(io.cwd, source), "utf8");
  } catch (error) {
    if (error instanceof LoomError) throw error; // interrupted while waiting for stdin
    throw new UsageError(
      `Cannot read request ${JSON.stringify(source)}: ${
        (error as NodeJS.ErrnoException).code ?? (error as Error).message
      }`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source}: not valid JSON (${(error as Error).message})`);
  }
  const request = SliceRequest.safeParse(json);
  if (!request.success) throw new UsageError(`${source}: invalid SliceRequest: ${formatZodError(request.error)}`);
  return { ...request.data, workspace: workspace ?? resolve(io.cwd, request.data.workspace) };
}
