// The common shape every importer produces (one entry per model decision) and its mapping to a Loom recording.
import { ACTION_NAMES, type ActionName } from "../../vocabulary/actions.ts";
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

export type ImportedStep = CommandStep | RefusedStep | PrintStep | FinishStep;

export type ImportedTask = {
  format: string;
  name: string;
  intent: string;
  instructions: string;
  model: string;
  command_timeout_ms?: number;
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
  steps.forEach((s, index) => {
    const step = index + 1;
    const { action, args, report, results } = mapStep(s, step);
    // The revision follows what the commands may have changed (see command-effect.ts), as a live run's does.
    if (report.kind === "command" && mayChangeFiles(report.argv)) {
      report.revision_before = `r${revision}`;
      report.revision_after = `r${++revision}`;
    }
    used.add(action);
    if (s.kind === "command" || s.kind === "refusal") prefixes.set(JSON.stringify(s.prefix), s.prefix);
    const selection: Record<string, unknown> = { action };
    if (s.reason !== undefined && s.reason.trim() !== "") selection.reason = s.reason;
    answers.push({ type: "answer", phase: "selection", step, value: selection, usage: s.usage ?? NULL_USAGE });
    answers.push({ type: "answer", phase: "arguments", step, value: args, usage: NULL_USAGE });
    executions.push({ type: "execution", step, action, args, report, results });
  });
  const limits: Recording["header"]["slice"]["limits"] = { max_steps: steps.length };
  if (task.command_timeout_ms !== undefined) limits.command_timeout_ms = task.command_timeout_ms;
  const slice: Recording["header"]["slice"] = {
    intent: task.intent,
    instructions: task.instructions,
    actions: ACTION_NAMES.filter((name) => used.has(name)),
    test: DEFAULT_TEST,
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
  }
}

/** The thought of a decision, verbatim; undefined when it is blank. */
export function reasonOf(text: string | null | undefined): string | undefined {
  return typeof text === "string" && text.trim() !== "" ? text : undefined;
}
