// OpenAI-style chat logs: { messages: [...] } or a bare array, with system/developer and user messages, assistant
// messages carrying tool_calls [{id, type: "function", function: {name, arguments: "<JSON>"}}] and role "tool" results
// answering them by tool_call_id (the deprecated function_call / role "function" pair is read the same way).
import { z } from "zod";
import { UsageError } from "../errors.ts";
import type { Recording } from "../recording.ts";
import { formatZodError } from "../zod-error.ts";
import { isRecord, textOf } from "./source.ts";
import { type FinishStep, type ImportedStep, reasonOf, recordingFromSteps } from "./step.ts";
import { convertUsage } from "./usage.ts";

export const OPENAI_MESSAGES_EXPECTED = "an OpenAI-style chat log (messages[] with role/content and tool_calls)";

const FunctionCall = z.looseObject({
  name: z.string().min(1),
  // Logs that kept the parsed object instead of the JSON string are read too.
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
});

const ToolCall = z.looseObject({ id: z.string().nullish(), type: z.string().nullish(), function: FunctionCall });

const Message = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
  tool_calls: z.array(ToolCall).nullish(),
  function_call: FunctionCall.nullish(),
  tool_call_id: z.string().nullish(),
  refusal: z.string().nullish(),
  usage: z.unknown().optional(),
  model: z.string().nullish(),
});
type Message = z.infer<typeof Message>;

const ChatLog = z.looseObject({ messages: z.array(Message), model: z.string().nullish() });
const BareChatLog = z.array(Message);

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
const FINISH_TOOLS = new Set(["finish", "submit", "task_complete", "complete_task", "attempt_completion", "final_answer", "done"]);
const SUMMARY_FIELDS = ["message", "summary", "result", "final_answer", "answer", "output", "text", "content"];
const BASH = ["bash", "-c"];

type Call = { id: string | undefined; name: string; args: string; where: string };

export function importOpenAiMessages(json: unknown, { name }: { name: string }): Recording {
  // Parsed apart, so an error names the field (a union would only say "invalid input").
  const parsed = Array.isArray(json) ? BareChatLog.safeParse(json) : ChatLog.safeParse(json);
  if (!parsed.success) throw new UsageError(`${name}: expected ${OPENAI_MESSAGES_EXPECTED}: ${formatZodError(parsed.error)}`);
  const messages = Array.isArray(parsed.data) ? parsed.data : parsed.data.messages;
  const first = messages.findIndex((m) => m.role === "user");
  if (first < 0) throw new UsageError(`${name}: expected ${OPENAI_MESSAGES_EXPECTED}: no user message (the task)`);
  const instructions = messages
    .slice(0, first)
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => textOf(m.content))
    .join("\n\n");
  // Results answering no call are reported first: they explain a call that then seems unanswered.
  messages.forEach((m, i) => {
    if (m.role === "tool" || m.role === "function") checkAnswered(messages, i, name);
  });
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  const steps: ImportedStep[] = [];
  let finished: string | undefined;
  for (let i = first + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== "assistant") continue; // results are read with their call; later user/system turns have no counterpart
    if (finished) throw new UsageError(`${name}: messages[${i}]: assistant message after the run finished (${finished})`);
    const text = textOf(m.content);
    const usage = convertUsage(m.usage);
    const calls = callsOf(m, i);
    if (calls.length === 0) {
      if (i === lastAssistant) {
        const refused = typeof m.refusal === "string" && m.refusal !== "" && text === "";
        steps.push({ kind: "finish", usage, status: refused ? "failure" : "success", summary: refused ? m.refusal! : text });
      } else {
        steps.push({ kind: "print", usage, text });
      }
      continue;
    }
    const results = resultsFor(messages, i);
    calls.forEach((call, j) => {
      if (finished) throw new UsageError(`${name}: ${call.where}: tool call after the run finished (${finished})`);
      const decision = j === 0 ? { reason: reasonOf(text), usage } : {};
      if (FINISH_TOOLS.has(call.name)) {
        steps.push({ ...decision, ...finishOf(call) });
        finished = `${call.where} called ${call.name}`;
        return;
      }
      const result = resultOf(results, call, j);
      if (result === undefined && i !== lastAssistant) {
        throw new UsageError(`${name}: ${call.where}: no tool result for tool call ${JSON.stringify(call.id ?? call.name)}`);
      }
      const { argv, prefix } = commandOf(call);
      steps.push({ ...decision, kind: "command", argv, prefix, exit_code: null, timed_out: false, output: result ?? "" });
    });
  }
  const model = Array.isArray(parsed.data) ? undefined : parsed.data.model;
  return recordingFromSteps(
    {
      format: "openai-messages",
      name,
      intent: textOf(messages[first].content),
      instructions,
      model: model || messages.find((m) => m.role === "assistant" && m.model)?.model || "unknown",
    },
    steps,
  );
}

function callsOf(m: Message, index: number): Call[] {
  const argsText = (args: string | Record<string, unknown>) => (typeof args === "string" ? args : JSON.stringify(args));
  if (m.tool_calls && m.tool_calls.length > 0) {
    return m.tool_calls.map((c, j) => ({
      id: c.id ?? undefined,
      name: c.function.name,
      args: argsText(c.function.arguments),
      where: `messages[${index}].tool_calls[${j}]`,
    }));
  }
  if (m.function_call) {
    const { name, arguments: args } = m.function_call;
    return [{ id: undefined, name, args: argsText(args), where: `messages[${index}].function_call` }];
  }
  return [];
}

type Results = { byId: Map<string, string>; byOrder: { id: string | undefined; text: string }[] };

/** The results that follow an assistant message, up to the next assistant message. */
function resultsFor(messages: Message[], index: number): Results {
  const results: Results = { byId: new Map(), byOrder: [] };
  for (let k = index + 1; k < messages.length && messages[k].role !== "assistant"; k++) {
    const m = messages[k];
    if (m.role !== "tool" && m.role !== "function") continue;
    const text = textOf(m.content);
    const id = typeof m.tool_call_id === "string" ? m.tool_call_id : undefined;
    if (id !== undefined) results.byId.set(id, text);
    results.byOrder.push({ id, text });
  }
  return results;
}

/** Matched by tool_call_id; a result logged without an id answers the call in the same position. */
function resultOf(results: Results, call: Call, position: number): string | undefined {
  const byId = call.id !== undefined ? results.byId.get(call.id) : undefined;
  if (byId !== undefined) return byId;
  const inOrder = results.byOrder[position];
  return inOrder && inOrder.id === undefined ? inOrder.text : undefined;
}

/** A tool result must answer a call of the assistant message before it. */
function checkAnswered(messages: Message[], index: number, name: string): void {
  const id = messages[index].tool_call_id;
  let k = index - 1;
  while (k >= 0 && messages[k].role !== "assistant") k--;
  const calls = k >= 0 ? callsOf(messages[k], k) : [];
  const known = typeof id === "string" ? calls.some((c) => c.id === id) : calls.length > 0;
  if (!known) {
    const what = typeof id === "string" ? `unknown tool_call_id ${JSON.stringify(id)}` : "no tool call before it";
    throw new UsageError(`${name}: messages[${index}]: tool result for ${what}`);
  }
}

/**
 * A shell tool becomes ["bash", "-c", command] (or its argv when `command` is an array); any other tool becomes
 * [tool name, arguments JSON string], allowed by the prefix [tool name].
 */
function commandOf(call: Call): { argv: string[]; prefix: string[] } {
  if (isShellTool(call.name)) {
    const args = parseArgs(call.args);
    const command = args?.command ?? args?.cmd;
    if (typeof command === "string") return { argv: [...BASH, command], prefix: BASH };
    if (Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === "string")) {
      return { argv: command, prefix: [command[0]] };
    }
  }
  return { argv: [call.name, call.args], prefix: [call.name] };
}

function isShellTool(name: string): boolean {
  const lower = name.toLowerCase();
  return SHELL_TOOLS.has(lower) || /(^|[_.-])(bash|shell)([_.-]|$)/.test(lower);
}

function finishOf(call: Call): Pick<FinishStep, "kind" | "status" | "summary"> {
  const args = parseArgs(call.args);
  if (!args) return { kind: "finish", status: "success", summary: call.args };
  const field = SUMMARY_FIELDS.map((key) => args[key]).find((value) => typeof value === "string");
  const summary = typeof field === "string" ? field : Object.keys(args).length === 0 ? "" : call.args;
  const failed = ["failure", "failed", "fail", "error"].includes(String(args.status).toLowerCase()) ||
    args.task_completed === false || args.task_completed === "false" || args.success === false;
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
