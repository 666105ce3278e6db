// The common shape every importer produces (one entry per model decision) and its mapping to a Loom recording.
import { ACTION_NAMES, type ActionName, takesArguments } from "../../vocabulary/actions.ts";
import { digestOf } from "../../text/digest.ts";
import { UsageError } from "../../errors.ts";
import {
  type RecordedAnswer,
  type RecordedExecution,
  type Recording,
  RECORDING_FORMAT,
  RECORDING_VERSION,
} from "../recording.ts";
import type { ExecutionReport, FinishStatus } from "../../vocabulary/reports.ts";
import { mayChangeFiles } from "./command-effect.ts";
import { NULL_USAGE, type Usage } from "../../vocabulary/turn.ts";

type StepBase = {
  /** The model's own words for this decision (its thought), verbatim; omitted when empty. */
  reason?: string;
  usage?: Usage;
};

/** A command the agent ran, with its output as the model saw it. */
export type CommandStep = StepBase & {
  kind: "command";
  argv: string[];
  /** The allowed-command prefix that covers argv (e.g. ["bash", "-c"]). */
  prefix: string[];
  exit_code: number | null;
  timed_out: boolean;
  output: string;
};

/** A turn the agent rejected (no valid action in the model's answer): nothing ran, the agent replied with an error. */
export type RefusedStep = StepBase & {
  kind: "refusal";
  argv: string[];
  prefix: string[];
  code: string;
  message: string;
};

/** Text the model addressed to the user without acting. */
export type PrintStep = StepBase & { kind: "print"; text: string };

export type FinishStep = StepBase & { kind: "finish"; status: FinishStatus; summary: string };

/** A file read, listing or search the agent's own tool did, with the text the model saw. */
export type LookStep = StepBase & {
  kind: "read" | "list" | "search";
  path: string;
  /** The search's pattern (search only). */
  query?: string;
  output: string;
};

/** A file the agent's own tool edited or wrote (Loom's edit_file or write_file arguments). */
export type EditStep = StepBase & {
  kind: "edit";
  action: "edit_file" | "write_file";
  args: { path: string; old_text: string; new_text: string } | { path: string; content: string };
  /** Every file the call changed (a patch may touch several). */
  paths: string[];
};

/** A shell command recognised as a test run (see test-command.ts): Loom's run_tests, with its output. */
export type TestStep = StepBase & { kind: "test"; exit_code: number | null; timed_out: boolean; output: string };

export type ImportedStep = CommandStep | RefusedStep | PrintStep | FinishStep | LookStep | EditStep | TestStep;

export type ImportedTask = {
  format: string;
  name: string;
  intent: string;
  instructions: string;
  model: string;
  command_timeout_ms?: number;
  /** The command of the run's test runs (the first one recognised), when the importer recognises them. */
  test_command?: string[];
};

const DEFAULT_TEST = { command: ["true"], timeout_ms: 60_000 };

/** Each step becomes a selection answer, an arguments answer and one execution, numbered from 1. */
export function recordingFromSteps(task: ImportedTask, steps: ImportedStep[]): Recording {
  if (task.intent.trim() === "") {
    throw new UsageError(`${task.name}: no task found (the first user message is missing or empty)`);
  }
  if (steps.length === 0) throw new UsageError(`${task.name}: no agent steps to import`);
  const answers: RecordedAnswer[] = [];
  const executions: RecordedExecution[] = [];
  const used = new Set<ActionName>();
  const prefixes = new Map<string, string[]>();
  let revision = 0;
  let testRuns = false;
  steps.forEach((s, index) => {
    const step = index + 1;
    const { action, args, report, results } = mapStep(s, step);
    // The revision follows what the commands may have changed (see command-effect.ts), as a live run's does.
    if (report.kind === "command" && mayChangeFiles(report.argv)) {
      report.revision_before = `r${revision}`;
      report.revision_after = `r${++revision}`;
    }
    if (report.kind === "edit") {
      report.revision_before = `r${revision}`;
      report.revision_after = `r${++revision}`;
    }
    if (report.kind === "test") report.revision = `r${revision}`;
    used.add(action);
    if (s.kind === "test") testRuns = true;
    if (s.kind === "command" || s.kind === "refusal") prefixes.set(JSON.stringify(s.prefix), s.prefix);
    const selection: Record<string, unknown> = { action };
    if (s.reason !== undefined && s.reason.trim() !== "") selection.reason = s.reason;
    answers.push({ type: "answer", phase: "selection", step, value: selection, usage: s.usage ?? NULL_USAGE });
    // An action without arguments (run_tests) has no arguments call, as in a live run.
    if (takesArguments(action)) {
      answers.push({ type: "answer", phase: "arguments", step, value: args, usage: NULL_USAGE });
    }
    executions.push({ type: "execution", step, action, args, report, results });
  });
  const limits: Recording["header"]["slice"]["limits"] = { max_steps: steps.length };
  if (task.command_timeout_ms !== undefined) limits.command_timeout_ms = task.command_timeout_ms;
  const slice: Recording["header"]["slice"] = {
    intent: task.intent,
    instructions: task.instructions,
    actions: ACTION_NAMES.filter((name) => used.has(name)),
    test: testRuns && task.test_command ? { ...DEFAULT_TEST, command: task.test_command } : DEFAULT_TEST,
    model: task.model,
    limits,
  };
  if (prefixes.size > 0) slice.commands = [...prefixes.values()];
  return {
    header: {
      type: "header",
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      slice,
      source: { format: task.format, name: task.name },
    },
    answers,
    executions,
  };
}

function mapStep(
  s: ImportedStep,
  step: number,
): { action: ActionName; args: Record<string, unknown>; report: ExecutionReport; results: Record<string, string> } {
  switch (s.kind) {
    case "command": {
      const output = digestOf(s.output);
      return {
        action: "run_command",
        args: { argv: s.argv },
        report: { kind: "command", argv: s.argv, exit_code: s.exit_code, timed_out: s.timed_out, output },
        results: { [output]: s.output },
      };
    }
    case "refusal":
      return {
        action: "run_command",
        args: { argv: s.argv },
        report: { kind: "refusal", step, code: s.code, reason: s.message },
        results: {},
      };
    case "print": {
      const text = digestOf(s.text);
      return { action: "print", args: { text: s.text }, report: { kind: "print", text }, results: { [text]: s.text } };
    }
    case "finish":
      return {
        action: "finish",
        args: { status: s.status, summary: s.summary },
        report: { kind: "finish", status: s.status, summary: s.summary },
        results: {},
      };
    case "read": {
      const result = digestOf(s.output);
      return {
        action: "read_file",
        args: { path: s.path },
        report: { kind: "read", path: s.path, result },
        results: { [result]: s.output },
      };
    }
    case "list": {
      const result = digestOf(s.output);
      return {
        action: "list_files",
        args: { path: s.path },
        report: { kind: "list", path: s.path, count: lineCount(s.output), result },
        results: { [result]: s.output },
      };
    }
    case "search": {
      const result = digestOf(s.output);
      const query = s.query === undefined || s.query === "" ? "?" : s.query;
      return {
        action: "search",
        args: { query, path: s.path },
        report: { kind: "search", query, path: s.path, matches: lineCount(s.output), result },
        results: { [result]: s.output },
      };
    }
    case "edit":
      // The revisions are set by the caller, which counts the workspace's changes.
      return {
        action: s.action,
        args: s.args,
        report: { kind: "edit", paths: s.paths, revision_before: "r0", revision_after: "r0" },
        results: {},
      };
    case "test": {
      const output = digestOf(s.output);
      return {
        action: "run_tests",
        args: {},
        report: {
          kind: "test",
          revision: "r0",
          exit_code: s.exit_code,
          timed_out: s.timed_out,
          duration_ms: 0,
          output,
        },
        results: { [output]: s.output },
      };
    }
  }
}

/** Lines of a listing or a search's matches (a blank output has none). */
function lineCount(text: string): number {
  return text.split("\n").filter((line) => line.trim() !== "").length;
}

/** The thought of a decision, verbatim; undefined when it is blank. */
export function reasonOf(text: string | null | undefined): string | undefined {
  return typeof text === "string" && text.trim() !== "" ? text : undefined;
}
