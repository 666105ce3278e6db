// What another agent's tool call means to Loom: a shell command, the end of the run, or an opaque call kept whole.
import { isRecord } from "./source.ts";
import type { FinishStep } from "./step.ts";

/** One tool call as a chat log records it; `args` is the arguments' JSON text, verbatim where the log had text. */
export type ToolCall = { id: string | undefined; name: string; args: string; where: string };

/** Tool names whose `command` (or `cmd`) argument is a shell command line or an argv. */
const SHELL_TOOLS = new Set([
  "bash",
  "execute_bash",
  "run_bash",
  "shell",
  "run_shell_command",
  "shell_exec",
  "local_shell",
  "terminal",
  "execute_command",
  "exec_command",
  "run_command",
  "run_terminal_cmd",
  "cmd",
]);
/** Tool names that end the run; their arguments carry the final message. */
const FINISH_TOOLS = new Set([
  "finish",
  "submit",
  "task_complete",
  "complete_task",
  "attempt_completion",
  "final_answer",
  "done",
]);
const SUMMARY_FIELDS = ["message", "summary", "result", "final_answer", "answer", "output", "text", "content"];
const FAILED = new Set(["failure", "failed", "fail", "error", "false", "partial"]);

const BASH = ["bash", "-c"];

function isShellTool(name: string): boolean {
  const lower = name.toLowerCase();
  return SHELL_TOOLS.has(lower) || /(^|[_.:-])(bash|shell)([_.:-]|$)/.test(lower);
}

export function isFinishTool(name: string): boolean {
  return FINISH_TOOLS.has(name.toLowerCase());
}

/**
 * A shell tool becomes ["bash", "-c", command] (or its argv when `command` is an array); any other tool becomes
 * [tool name, arguments JSON text], allowed by the prefix [tool name].
 */
export function commandOf(call: ToolCall): { argv: string[]; prefix: string[] } {
  if (isShellTool(call.name)) {
    const args = parseArgs(call.args);
    const command = args?.command ?? args?.cmd;
    if (typeof command === "string") return { argv: [...BASH, command], prefix: BASH };
    if (
      Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === "string" && part !== "")
    ) {
      return { argv: command, prefix: [command[0]] };
    }
  }
  return { argv: [call.name, call.args], prefix: [call.name] };
}

/** The shell command line of a call to a shell tool, or undefined. */
export function shellCommandOf(call: ToolCall): string | undefined {
  if (!isShellTool(call.name)) return undefined;
  const args = parseArgs(call.args);
  const command = args?.command ?? args?.cmd;
  return typeof command === "string" ? command : undefined;
}

export function finishOf(call: ToolCall): Pick<FinishStep, "kind" | "status" | "summary"> {
  const args = parseArgs(call.args);
  if (!args) return { kind: "finish", status: "success", summary: call.args };
  const field = SUMMARY_FIELDS.map((key) => args[key]).find((value) => typeof value === "string");
  const summary = typeof field === "string" ? field : Object.keys(args).length === 0 ? "" : call.args;
  const failed = FAILED.has(String(args.status).toLowerCase()) ||
    args.task_completed === false || FAILED.has(String(args.task_completed).toLowerCase()) ||
    args.success === false;
  return { kind: "finish", status: failed ? "failure" : "success", summary };
}

function parseArgs(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
