// loom run: argv -> a run's input (a SliceRequest file, or a request text and a catalog) -> startRun -> the reporter.
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { InterruptedError, LoomError, UsageError } from "../lib/errors.ts";
import { type RunHooks, type RunInput, startRun } from "../lib/run/start-run.ts";
import { type RunPlan, runPlan } from "../lib/run/run-plan.ts";
import { promptRequest, splitCommand } from "../lib/prompt-request.ts";
import { writeUnstartedReport } from "../lib/run/start-run.ts";
import { endingOf } from "../lib/ending.ts";
import type { Io } from "./io.ts";
import { parseCommand, type Values } from "./cli-spec.ts";
import { positiveInteger, settingFlags, startupFiles, userSettings } from "./config.ts";
import { outputFormatOption, outputPathOption } from "./options.ts";
import { readRequest } from "./request-file.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { RUN_SPEC } from "./specs.ts";
import { Reporter } from "./reporter.ts";
import { traceWriter } from "./trace-file.ts";
import { readModels } from "./models-table.ts";
import { type NamedPath, type OutputKind, refuseCollisions, refuseWorkspaceFiles } from "./output-paths.ts";
import { loadCatalog } from "../lib/catalog/catalog.ts";

export async function runCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(RUN_SPEC, argv, { command: "run" });
  const format = outputFormatOption({ json: values.json, format: values["output-format"] });
  const planned = await planCommand(values, positionals, io);
  const reporter = new Reporter(io, { command: "run", format, quiet: values.quiet });
  if ("unstarted" in planned) {
    // Interrupted while reading the request from stdin: the run never started, but its report still lands.
    const { outputs: { contextReport }, settings } = planned.plan;
    if (planned.unstarted instanceof InterruptedError && contextReport) {
      writeUnstartedReport(contextReport, {
        policy: planned.policy,
        stepProtocol: settings.ok ? settings.settings.step_protocol.value : undefined,
        outcome: endingOf({ threw: planned.unstarted }).outcome,
        error: planned.unstarted,
      });
    }
    return reporter.unstarted(planned.unstarted);
  }
  const result = await startRun(planned.input, planned.plan, {
    trace: planned.trace,
    signal: io.signal,
    env: io.env,
    // --quiet: the result and the report say whether the run was sandboxed (sandbox.active).
    warn: values.quiet ? () => {} : (message) => io.stderr(`loom run: ${message}\n`),
    onProgress: reporter.progress,
    onRouting: (note) => reporter.routing(note),
    onEvent: reporter.onEvent,
  });
  return reporter.run(result, {
    label: `run ${"catalog" in planned.input ? result.report.slice ?? "" : ""}`.trim(),
  });
}

/** The run's plan and the trace's writer (opened once the outputs are checked). */
type Planned =
  & { plan: RunPlan; trace?: RunHooks["trace"] }
  & (
    | { input: RunInput }
    /** The policy a report of the unstarted run says: the user's (flag, environment, config file, built-in). */
    | { unstarted: LoomError; policy: ContextPolicyName }
  );

/** The flags, validated, as a run's input and plan. A bad flag is a usage error (main.ts prints it). */
async function planCommand(
  values: Values<typeof RUN_SPEC.flags>,
  positionals: string[],
  io: Io,
): Promise<Planned> {
  const flag = (
    name: Exclude<
      keyof typeof RUN_SPEC.flags,
      | "allow-command"
      | "allow-key-host"
      | "allow-key-env"
      | "json"
      | "quiet"
      | "require-passing-tests"
      | "sandbox-network"
      | "sandbox-env"
      | "sandbox-read-only"
    >,
  ) => values[name];
  if (flag("catalog") === undefined && flag("slice") !== undefined) {
    throw new UsageError("--slice needs --catalog FILE");
  }
  if (flag("catalog") === "") throw new UsageError("--catalog needs a FILE");
  const catalog = flag("catalog");
  const [source, ...more] = positionals;
  if (source === undefined || more.length > 0) {
    throw new UsageError(
      catalog === undefined
        ? "Expected one REQUEST (a SliceRequest JSON file, or - for stdin)"
        : "Expected one REQUEST (the request text, or - for stdin)",
    );
  }
  // Every setting is resolved by lib/settings/settings.ts (flag, environment, config files, default), once, here:
  // startRun layers the catalog or request onto this plan.
  const flags = settingFlags(values);
  const user = userSettings(io, flags, { workspace: flag("workspace") ?? io.cwd });
  const userLevel = user.plan;
  // Where the report and the recording go is checked before anything runs: a run must not end in an unwritable path.
  const output = (name: "context-report" | "record" | "trace" | "diff") => {
    const value = flag(name);
    return value ? outputPathOption(`--${name}`, value, { cwd: io.cwd, notice: note(io) }) : undefined;
  };
  const contextReport = output("context-report");
  const record = output("record");
  const given = flag("workspace");
  const workspace = given ? resolve(io.cwd, given) : undefined;
  const tracePath = output("trace");
  const diff = output("diff");
  const plan = runPlan(user.plan, {
    contextReport,
    record,
    trace: tracePath,
    diff,
    models: readModels(flag("models"), io),
  });

  const outputs: NamedPath[] = [
    ...named("--context-report", contextReport, "report"),
    ...named("--record", record, "recording"),
    ...named("--trace", tracePath, "trace"),
    ...named("--diff", diff, "diff"),
  ];
  // Every output checked together before anything is written (the trace file is opened only then): no two name one
  // file, none names an input, none overwrites a file of the workspace that Loom did not write.
  const checked = <T extends Planned>(planned: T, workspaces: string[], inputs: NamedPath[] = []): T => {
    // The config files and model table read at start are inputs too: a report written over one breaks every later run.
    const read = startupFiles(io.env, [resolve(io.cwd, flag("workspace") ?? io.cwd), ...workspaces]);
    refuseCollisions(outputs, { inputs: [...inputs, ...named("--models", flag("models")), ...read] });
    refuseWorkspaceFiles(outputs, { workspaces });
    if (tracePath) planned.trace = traceWriter(tracePath, { shown: flag("trace") ?? tracePath });
    return planned;
  };
  const namedIn = (label: string, path: string | undefined, kind?: OutputKind): NamedPath[] =>
    named(label, path === undefined ? undefined : resolve(io.cwd, path), kind);

  if (catalog !== undefined && flag("model") !== undefined) {
    throw new UsageError("--model runs a prompt; a catalog names its own models");
  }
  if (catalog !== undefined && flags.base_url !== undefined) {
    throw new UsageError("--base-url is for a prompt or a request file; a catalog names each model's base_url");
  }
  const model = catalog === undefined ? userLevel.settings.model.value : null;
  // With --model, TEXT is a prompt. With a default model (LOOM_MODEL or the config), TEXT is a prompt unless it
  // names a file (or a missing *.json); "-" is a prompt unless stdin holds a JSON object.
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
      const text = await requestText(source, io);
      const file = resolve(io.cwd, catalog);
      const of = catalogOutputs(file, workspace);
      // The catalog's own report paths are written only when --context-report is not given.
      if (contextReport === undefined) {
        outputs.push(
          ...of.reports.map((path) => ({ flag: `${catalog}'s context_report`, path, kind: "report" as const })),
        );
      }
      return checked(
        { input: { catalog: { file, name: catalog, text, slice: flag("slice"), workspace } }, plan },
        of.workspaces,
        namedIn("--catalog", catalog),
      );
    }
    if (prompt) {
      // A prompt has a model: --model, or the default model that made TEXT a prompt.
      if (model === null) throw new Error("a prompt without a model");
      const request = promptRequest({
        text: stdinText !== undefined ? nonEmpty(stdinText) : await requestText(source, io),
        model,
        workspace: workspace ?? io.cwd,
        // The step limit as resolved: the flag, else the project's or the user's file, else the default.
        maxSteps: userLevel.settings.max_steps.value,
        actions: flag("actions")?.split(",").map((a) => a.trim()).filter(Boolean),
        testCommand: commandOption("--test-command", flag("test-command")),
        testTimeoutSeconds: optional(flag("test-timeout"), (value) => positiveInteger("--test-timeout", value)),
        allowCommands: (values["allow-command"] ?? []).map((c) => commandArgv("--allow-command", c)),
        effort: flag("effort"),
        instructions: flag("instructions"),
      });
      requireTests(request, values["require-passing-tests"], "--test-command CMD");
      return checked({ input: { request }, plan }, [request.workspace]);
    }
    const file = source === "-" ? "stdin" : source;
    const request = await readRequest(source, { io, workspace, stdinText });
    requireTests(request, values["require-passing-tests"], `run_tests in ${file}'s actions`);
    return checked(
      { input: { request, file }, plan },
      [request.workspace],
      namedIn("REQUEST", source === "-" ? undefined : source),
    );
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if (error instanceof LoomError) {
      const workspaces = catalog === undefined && workspace !== undefined ? [workspace] : [];
      return checked({ unstarted: error, plan, policy: userLevel.settings.context_policy.value }, workspaces);
    }
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

/** A flag's path as a checked output or input, or nothing when the flag was not given. */
function named(flag: string, path: string | undefined, kind?: OutputKind): NamedPath[] {
  return path === undefined ? [] : [{ flag, path, ...(kind ? { kind } : {}) }];
}

/**
 * The workspaces a catalog's slices may run in and the report paths it names (relative to the catalog), read before
 * the run so its outputs are checked against them too; an unreadable catalog names none (the run says why it fails).
 */
function catalogOutputs(file: string, workspace: string | undefined): { workspaces: string[]; reports: string[] } {
  let catalog;
  try {
    catalog = loadCatalog(readFileSync(file, "utf8"), { file });
  } catch {
    return { workspaces: workspace ? [workspace] : [], reports: [] };
  }
  const at = (path: string | undefined) => (path === undefined ? [] : [resolve(dirname(file), path)]);
  const slices = Object.values(catalog.slices);
  const defaults = catalog.defaults ?? {};
  return {
    workspaces: workspace ? [workspace] : [...new Set(slices.flatMap((s) => at(s.workspace ?? defaults.workspace)))],
    reports: [...new Set([...at(defaults.context_report), ...slices.flatMap((s) => at(s.context_report))])],
  };
}

/** A one-line notice on stderr ("creating the folder …"). */
function note(io: Io): (message: string) => void {
  return (message) => io.stderr(`loom run: ${message}\n`);
}

function commandOption(flag: string, value: string | undefined): string[] | undefined {
  return optional(value, (given) => commandArgv(flag, given));
}

function commandArgv(flag: string, value: string): string[] {
  const argv = splitCommand(value);
  if (argv.length === 0) throw new UsageError(`${flag} needs a command`);
  return argv;
}

function optional<T>(value: string | undefined, parse: (value: string) => T): T | undefined {
  return value === undefined ? undefined : parse(value);
}

/** --require-passing-tests on a run that can never run its tests could never be verified: a usage error, said now. */
function requireTests(request: { actions: readonly string[] }, required: boolean | undefined, needs: string): void {
  if (required && !request.actions.includes("run_tests")) {
    throw new UsageError(
      `--require-passing-tests needs ${needs}: without a test to run, the run can never be verified`,
    );
  }
}
