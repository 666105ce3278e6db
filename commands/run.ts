// loom run: argv -> a run's input (a SliceRequest file, or a request text and a catalog) -> startRun -> the reporter.
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type RunInput, type StartOptions, startRun } from "../lib/adapters/start-run.ts";
import { describeFsError, InterruptedError, LoomError, UsageError } from "../lib/errors.ts";
import { promptRequest, splitCommand } from "../lib/catalog/prompt-request.ts";
import { writeUnstartedReport } from "../lib/adapters/start-run.ts";
import { describeJsonFailure, readJson } from "../lib/text/json-text.ts";
import { type SliceRequest, SliceRequestFile } from "../lib/slice.ts";
import { formatZodError, MISSING_FIELDS } from "../lib/text/zod-error.ts";
import { DEFAULT_POLICY } from "../lib/policy.ts";
import { endingOf } from "../lib/ending.ts";
import type { Io } from "./io.ts";
import { parseCommand, type Values } from "./cli-spec.ts";
import { userSettings } from "./config.ts";
import {
  millisecondsOption,
  outputFormatOption,
  outputPathOption,
  policyOption,
  previewsOption,
  sandboxOption,
  stepProtocolOption,
} from "./options.ts";
import { RUN_SPEC } from "./specs.ts";
import { Reporter } from "./reporter.ts";
import { traceWriter } from "./trace-file.ts";
import { readModels } from "./models.ts";

export async function runCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(RUN_SPEC, argv, { command: "run" });
  const format = outputFormatOption({ json: values.json, format: values["output-format"] });
  const plan = await planRun(values, positionals, io);
  const reporter = new Reporter(io, { command: "run", format, quiet: values.quiet });
  if ("unstarted" in plan) {
    // Interrupted while reading the request from stdin: the run never started, but its report still lands.
    if (plan.unstarted instanceof InterruptedError && plan.options.contextReport) {
      writeUnstartedReport(plan.options.contextReport, {
        policy: plan.options.contextPolicy ?? plan.options.defaultPolicy ?? DEFAULT_POLICY,
        outcome: endingOf({ threw: plan.unstarted }).outcome,
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
  | "contextPolicy"
  | "defaultPolicy"
  | "contextReport"
  | "record"
  | "trace"
  | "sandbox"
  | "http"
  | "baseUrl"
  | "defaultBaseUrl"
  | "stepProtocol"
  | "previewMode"
  | "requirePassingTests"
  | "maxCost"
  | "models"
>;
type RunPlan = { input: RunInput; options: PlanOptions } | { unstarted: LoomError; options: PlanOptions };

/** The flags, validated, as a run's input and options. A bad flag is a usage error (main.ts prints it). */
async function planRun(
  values: Values<typeof RUN_SPEC.flags>,
  positionals: string[],
  io: Io,
): Promise<RunPlan> {
  const flag = (
    name: Exclude<keyof typeof RUN_SPEC.flags, "allow-command" | "json" | "quiet" | "require-passing-tests">,
  ) => values[name];
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
  // Defaults: flag > environment (LOOM_MODEL, LOOM_CONTEXT_POLICY, LOOM_BASE_URL) > config file > built-in.
  const baseUrlFlag = flag("base-url");
  if (baseUrlFlag !== undefined && !isHttpUrl(baseUrlFlag)) {
    throw new UsageError(`--base-url ${JSON.stringify(baseUrlFlag)}: expected an http(s) URL`);
  }
  const settings = userSettings(io, {
    model: flag("model"),
    context_policy: flag("context-policy"),
    base_url: baseUrlFlag,
  });
  // A catalog's own context_policy comes before the user's defaults; only the flag overrides it.
  const policy = policyOption(settings.context_policy.value);
  const userDefault = settings.context_policy.source !== "flag" && settings.context_policy.source !== "built-in";
  const contextPolicy = catalog === undefined || settings.context_policy.source === "flag" ? policy : undefined;
  const defaultPolicy = catalog !== undefined && userDefault ? policy : undefined;
  // The config file's base_url is below the environment: a provider's own variable (ANTHROPIC_BASE_URL, …) wins.
  const fromConfig = settings.base_url.source === "config";
  const baseUrl = fromConfig ? undefined : settings.base_url.value ?? undefined;
  const defaultBaseUrl = fromConfig ? settings.base_url.value ?? undefined : undefined;
  // Where the report and the recording go is checked before anything runs: a run must not end in an unwritable path.
  const report = flag("context-report");
  const contextReport = report
    ? outputPathOption("--context-report", report, { cwd: io.cwd, notice: note(io) })
    : undefined;
  const record = flag("record")
    ? outputPathOption("--record", flag("record")!, { cwd: io.cwd, notice: note(io) })
    : undefined;
  const workspace = flag("workspace") ? resolve(io.cwd, flag("workspace")!) : undefined;
  const tracePath = flag("trace")
    ? outputPathOption("--trace", flag("trace")!, { cwd: io.cwd, notice: note(io) })
    : undefined;
  const trace = tracePath ? traceWriter(tracePath, { shown: flag("trace")! }) : undefined;
  const sandbox = sandboxOption(flag("sandbox"));
  const http = {
    deadlineMs: millisecondsOption("--provider-deadline-ms", flag("provider-deadline-ms")),
    timeoutMs: millisecondsOption("--provider-idle-timeout-ms", flag("provider-idle-timeout-ms")),
  };
  const stepProtocol = stepProtocolOption(flag("step-protocol"));
  const previewMode = previewsOption(flag("previews"));
  const options = {
    contextPolicy,
    defaultPolicy,
    stepProtocol,
    previewMode,
    contextReport,
    record,
    trace,
    sandbox,
    http,
    baseUrl,
    defaultBaseUrl,
    requirePassingTests: values["require-passing-tests"],
    maxCost: costOption("--max-cost", flag("max-cost")),
    models: readModels(flag("models"), io.cwd),
  };

  if (catalog !== undefined && flag("model") !== undefined) {
    throw new UsageError("--model runs a prompt; a catalog names its own models");
  }
  if (catalog !== undefined && baseUrlFlag !== undefined) {
    throw new UsageError("--base-url is for a prompt or a request file; a catalog names each model's base_url");
  }
  const model = catalog === undefined ? settings.model.value : null;
  // With --model, TEXT is a prompt. With a default model (LOOM_MODEL or the config), TEXT is a prompt unless it
  // names a file (or a missing *.json); "-" is a prompt unless stdin holds a JSON object.
  const source = positionals[0];
  const isFile = source !== "-" && (existsSync(resolve(io.cwd, source)) || /^\S+\.jsonc?$/.test(source));
  let prompt = flag("model") !== undefined || (model !== null && catalog === undefined && !isFile && source !== "-");
  let stdinText: string | undefined;
  if (!prompt && model !== null && catalog === undefined && source === "-") {
    stdinText = await io.readStdin();
    prompt = !stdinText.trimStart().startsWith("{");
  }
  for (const name of PROMPT_FLAGS) {
    if (!prompt && values[name] !== undefined) {
      throw new UsageError(`--${name} is for a prompt: give --model too (or set LOOM_MODEL)`);
    }
  }
  try {
    if (catalog !== undefined) {
      const text = await requestText(positionals[0], io);
      const file = resolve(io.cwd, catalog);
      return { input: { catalog: { file, name: catalog, text, slice: flag("slice"), workspace } }, options };
    }
    if (prompt) {
      const request = promptRequest({
        text: stdinText !== undefined ? nonEmpty(stdinText) : await requestText(positionals[0], io),
        model: model!,
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
        effort: flag("effort"),
        instructions: flag("instructions"),
      });
      return { input: { request }, options };
    }
    return { input: { request: await readRequest(positionals[0], { io, workspace, stdinText }) }, options };
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
] as const satisfies readonly (keyof typeof RUN_SPEC.flags)[];

/** The request text: the argument, or stdin for "-"; never empty. */
async function requestText(source: string, io: Io): Promise<string> {
  return nonEmpty(source === "-" ? await io.readStdin() : source);
}

function nonEmpty(text: string): string {
  if (text.trim() === "") throw new UsageError("The request is empty");
  return text.trim();
}

/** A one-line notice on stderr ("creating the folder …"). */
function note(io: Io): (message: string) => void {
  return (message) => io.stderr(`loom run: ${message}\n`);
}

function isHttpUrl(text: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

/** A money cap in US dollars: a positive number ("0.50", "2"). */
function costOption(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const usd = Number(value.trim().replace(/^\$/, ""));
  if (value.trim() === "" || !Number.isFinite(usd) || usd <= 0) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: expected an amount of US dollars above 0, e.g. 0.50`);
  }
  return usd;
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
async function readRequest(
  source: string,
  { io, workspace, stdinText }: { io: Io; workspace?: string; stdinText?: string },
): Promise<SliceRequest> {
  let text: string;
  const path = source === "-" ? null : resolve(io.cwd, source);
  try {
    text = path === null ? stdinText ?? await io.readStdin() : readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof LoomError) throw error; // interrupted while waiting for stdin
    if ((error as { code?: string }).code === "ENOENT" && /\s/.test(source.trim())) {
      throw new UsageError(
        `${
          JSON.stringify(source)
        } is not a request file; to run it as a prompt, give --model PROVIDER/MODEL (or set LOOM_MODEL; see loom config)`,
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
      `${name}: invalid SliceRequest: ${formatZodError(request.error, { schema: SliceRequestFile, worded: true })}`,
    );
  }
  const { $schema: _, ...slice } = request.data;
  const base = path === null ? io.cwd : dirname(path);
  return { ...slice, workspace: workspace ?? resolve(base, slice.workspace) };
}
