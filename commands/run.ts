// loom run: argv -> a run's input (a SliceRequest file, or a request text and a catalog) -> startRun -> the reporter.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type RunInput, type StartOptions, startRun } from "../lib/adapters/start-run.ts";
import { describeFsError, InterruptedError, LoomError, UsageError } from "../lib/errors.ts";
import { promptRequest, splitCommand } from "../lib/prompt-request.ts";
import { writeUnstartedReport } from "../lib/adapters/start-run.ts";
import { describeJsonFailure, readJson } from "../lib/json-text.ts";
import { type SliceRequest, SliceRequestFile } from "../lib/slice.ts";
import { formatZodError, MISSING_FIELDS } from "../lib/zod-error.ts";
import type { Io } from "./io.ts";
import {
  millisecondsOption,
  outputFormatOption,
  outputPathOption,
  parseCommandArgs,
  policyOption,
  previewsOption,
  sandboxOption,
  stepProtocolOption,
} from "./options.ts";
import { Reporter } from "./reporter.ts";
import { traceWriter } from "./trace-file.ts";

const HELP = `loom run "TEXT" --model PROVIDER/MODEL [options]     a prompt, with defaults for everything else
loom run REQUEST [options]                             a SliceRequest file (JSON or JSONC), or - for stdin
loom run --catalog FILE "TEXT" [options]               a request routed through a catalog

A prompt (TEXT, or - for stdin) runs in --workspace (default: the current folder) with --max-steps 30, the actions
read_file, list_files, search, edit_file, write_file, print and finish, plus run_tests with --test-command and
run_command with --allow-command; the model is "PROVIDER/MODEL": anthropic/…, openai/… or openai-compatible/…
(see README: Providers).

Prompt options:
  --model PROVIDER/MODEL  the model (makes TEXT a prompt)
  --max-steps N           at most N executed actions (default 30)
  --actions A,B,…         exactly these actions (finish is always offered)
  --test-command CMD      what run_tests runs, split like a shell would (no shell runs it), e.g. "npm test"
  --test-timeout SECONDS  kill the tests after this long (default 300)
  --allow-command CMD     an argv prefix run_command may run (repeatable), e.g. "git diff"
  --instructions TEXT     how to work (default: read, make the smallest change, check it, summarise)

Options:
  --catalog FILE          route the request through a catalog (JSON or JSONC)
  --slice NAME            with --catalog: run this slice, skipping routing
  --workspace DIR         the workspace (overrides the request's or the catalog's)
  --context-policy NAME   legacy (default) or bounded
  --step-protocol NAME    two-call (default: a selection call, then an arguments call per step) or single-call
                          (one call per step: the action with its arguments)
  --previews SIZE         bounded previews of retained outputs: compact (512 B), balanced (default, 512 B-2 KiB)
                          or wide (1-4 KiB)
  --context-report PATH   write the context report (also when the run fails)
  --record PATH           write a recorded workflow (JSONL) that loom replay reproduces
  --sandbox MODE          auto (default), required or off: where test and command processes run (docs/sandbox.md)
  --provider-deadline-ms N  a model call, retries included, ends within N ms (default 60000)
  --provider-idle-timeout-ms N  an attempt that receives nothing for N ms fails and is retried (default 30000)
  --trace FILE            write a request trace: one JSON line per model call with the TurnRequest exactly as
                          measured and the provider request body as sent (it holds prompts and workspace
                          content; never credentials; reports never hold either)
  --output-format FORMAT  text (default), json (one result object) or stream-json (one JSON event per line as the
                          run happens, then the result; schema: loom schema events)
  --json                  short for --output-format json
  --quiet                 no progress on stderr
`;

export const RUN_OPTIONS = {
  catalog: { type: "string" },
  slice: { type: "string" },
  workspace: { type: "string" },
  "context-policy": { type: "string" },
  "step-protocol": { type: "string" },
  previews: { type: "string" },
  "context-report": { type: "string" },
  record: { type: "string" },
  sandbox: { type: "string" },
  "provider-deadline-ms": { type: "string" },
  "provider-idle-timeout-ms": { type: "string" },
  trace: { type: "string" },
  model: { type: "string" },
  "max-steps": { type: "string" },
  actions: { type: "string" },
  "test-command": { type: "string" },
  "test-timeout": { type: "string" },
  "allow-command": { type: "string", multiple: true },
  instructions: { type: "string" },
  "output-format": { type: "string" },
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
  const format = outputFormatOption({ json: values.json, format: values["output-format"] });
  const plan = await planRun(values, positionals, io);
  const reporter = new Reporter(io, { command: "run", format, quiet: values.quiet });
  if ("unstarted" in plan) {
    // Interrupted while reading the request from stdin: the run never started, but its report still lands.
    if (plan.unstarted instanceof InterruptedError && plan.options.contextReport) {
      writeUnstartedReport(plan.options.contextReport, {
        policy: plan.options.contextPolicy ?? "legacy",
        outcome: "interrupted",
        error: plan.unstarted,
      });
    }
    return reporter.unstarted(plan.unstarted);
  }
  const result = await startRun(plan.input, {
    ...plan.options,
    signal: io.signal,
    env: io.env,
    // --quiet: the result and the report say whether the run was sandboxed (sandbox.active).
    warn: values.quiet ? () => {} : (message) => io.stderr(`loom run: ${message}\n`),
    onProgress: reporter.progress,
    onRouting: (note) => reporter.routing(note),
    onEvent: reporter.onEvent,
  });
  return reporter.run(result, { label: `run ${"catalog" in plan.input ? result.report.slice ?? "" : ""}`.trim() });
}

type PlanOptions = Pick<
  StartOptions,
  "contextPolicy" | "contextReport" | "record" | "trace" | "sandbox" | "http" | "stepProtocol" | "previewMode"
>;
type RunPlan = { input: RunInput; options: PlanOptions } | { unstarted: LoomError; options: PlanOptions };

/** The flags, validated, as a run's input and options. A bad flag is a usage error (main.ts prints it). */
async function planRun(
  values: { [K in keyof typeof RUN_OPTIONS]?: string | boolean | string[] },
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
  const tracePath = flag("trace") ? outputPathOption("--trace", flag("trace")!, { cwd: io.cwd }) : undefined;
  const trace = tracePath ? traceWriter(tracePath, { shown: flag("trace")! }) : undefined;
  const sandbox = sandboxOption(flag("sandbox"));
  const http = {
    deadlineMs: millisecondsOption("--provider-deadline-ms", flag("provider-deadline-ms")),
    timeoutMs: millisecondsOption("--provider-idle-timeout-ms", flag("provider-idle-timeout-ms")),
  };
  const stepProtocol = stepProtocolOption(flag("step-protocol"));
  const previewMode = previewsOption(flag("previews"));
  const options = { contextPolicy, contextReport, record, trace, sandbox, http, stepProtocol, previewMode };

  const prompt = flag("model") !== undefined;
  if (prompt && catalog !== undefined) throw new UsageError("--model runs a prompt; a catalog names its own models");
  for (const name of PROMPT_FLAGS) {
    if (!prompt && values[name] !== undefined) throw new UsageError(`--${name} is for a prompt: give --model too`);
  }
  try {
    if (catalog !== undefined) {
      const text = await requestText(positionals[0], io);
      const file = resolve(io.cwd, catalog);
      return { input: { catalog: { file, name: catalog, text, slice: flag("slice"), workspace } }, options };
    }
    if (prompt) {
      const request = promptRequest({
        text: await requestText(positionals[0], io),
        model: flag("model")!,
        workspace: workspace ?? io.cwd,
        maxSteps: flag("max-steps") === undefined ? undefined : positiveInteger("--max-steps", flag("max-steps")!),
        actions: flag("actions")?.split(",").map((a) => a.trim()).filter(Boolean),
        testCommand: commandOption("--test-command", flag("test-command")),
        testTimeoutSeconds: flag("test-timeout") === undefined
          ? undefined
          : positiveInteger("--test-timeout", flag("test-timeout")!),
        allowCommands: ((values["allow-command"] as string[] | undefined) ?? []).map((c) =>
          commandOption("--allow-command", c)!
        ),
        instructions: flag("instructions"),
      });
      return { input: { request }, options };
    }
    return { input: { request: await readRequest(positionals[0], { io, workspace }) }, options };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if (error instanceof LoomError) return { unstarted: error, options };
    throw error;
  }
}

const PROMPT_FLAGS = [
  "max-steps",
  "actions",
  "test-command",
  "test-timeout",
  "allow-command",
  "instructions",
] as const satisfies readonly (keyof typeof RUN_OPTIONS)[];

/** The request text: the argument, or stdin for "-"; never empty. */
async function requestText(source: string, io: Io): Promise<string> {
  const text = (source === "-" ? await io.readStdin() : source).trim();
  if (text === "") throw new UsageError("The request is empty");
  return text;
}

function positiveInteger(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: expected a positive integer`);
  }
  return n;
}

function commandOption(flag: string, value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const argv = splitCommand(value);
  if (argv.length === 0) throw new UsageError(`${flag} needs a command`);
  return argv;
}

/**
 * The SliceRequest file (or stdin), validated, with the workspace made absolute: --workspace against the current
 * folder, the file's own `workspace` against the file's folder (as catalog paths resolve against the catalog).
 */
async function readRequest(source: string, { io, workspace }: { io: Io; workspace?: string }): Promise<SliceRequest> {
  let text: string;
  const path = source === "-" ? null : resolve(io.cwd, source);
  try {
    text = path === null ? await io.readStdin() : readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof LoomError) throw error; // interrupted while waiting for stdin
    if ((error as { code?: string }).code === "ENOENT" && /\s/.test(source.trim())) {
      throw new UsageError(
        `${JSON.stringify(source)} is not a request file; to run it as a prompt, give --model PROVIDER/MODEL`,
      );
    }
    throw new UsageError(`Cannot read request ${JSON.stringify(source)}: ${describeFsError(error)}`);
  }
  const name = path === null ? "stdin" : source;
  const json = readJson(text, { strictKeys: true });
  if (!json.ok) throw new UsageError(`${name}: not valid JSON: ${describeJsonFailure(json)}`);
  const request = SliceRequestFile.safeParse(json.value, { error: MISSING_FIELDS });
  if (!request.success) {
    throw new UsageError(
      `${name}: invalid SliceRequest: ${formatZodError(request.error, { schema: SliceRequestFile })}`,
    );
  }
  const { $schema: _, ...slice } = request.data;
  const base = path === null ? io.cwd : dirname(path);
  return { ...slice, workspace: workspace ?? resolve(base, slice.workspace) };
}
