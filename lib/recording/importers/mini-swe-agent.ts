// mini-swe-agent trajectories. Version 1 (`trajectory_format: "mini-swe-agent-1"`): messages[] where each assistant
// message holds a THOUGHT and one ```bash block, and the next user message the command's output framed by
// <returncode>/<output>. Version 2 (`"mini-swe-agent-1.1"`): the model's native messages plus `extra` — parsed
// `extra.actions`, tool calls answered by role "tool" messages (or Responses items), observations carrying
// `extra.returncode`, format errors as user messages with `extra.interrupt_type`, and a final role "exit" message.
import { UsageError } from "../../errors.ts";
import type { Recording } from "../recording.ts";
import { type ChatMessage, readChatLog } from "./chat.ts";
import { observationOf } from "./mini-swe-agent-observation.ts";
import { firstString, isRecord } from "./source.ts";
import { type ImportedStep, reasonOf, recordingFromSteps } from "./step.ts";
import { commandOf, shellCommandOf } from "./tool-call.ts";
import { convertUsage } from "./usage.ts";

export const MINI_SWE_AGENT_EXPECTED = "a mini-swe-agent trajectory (messages[] with role/content)";

/** Version 1's action format, and version 2's text-based one. */
const V1_ACTION_REGEX = /```bash\s*\n(.*?)\n```/gs;
const V2_ACTION_REGEX = /```mswea_bash_command\s*\n(.*?)\n```/gs;
const SUBMIT_MARKERS = ["COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT"];
const SUBMITTED = "Submitted";
const BASH = ["bash", "-c"];

type Info = {
  exit_status?: string;
  submission?: string;
  action_regex?: string;
  model_name?: string;
  timeout?: number;
  v2: boolean;
};

type Action = { command: string; callId?: string; argv?: string[]; prefix?: string[] };

export function importMiniSweAgent(json: unknown, { name }: { name: string }): Recording {
  const root = Array.isArray(json) ? { messages: json } : json;
  const log = readChatLog(root, { name, expected: MINI_SWE_AGENT_EXPECTED });
  const messages = log.messages;
  const info = infoOf(root, messages);
  const first = messages.findIndex((m) => m.role === "user");
  const task = messages[first];
  if (task === undefined) {
    throw new UsageError(`${name}: expected ${MINI_SWE_AGENT_EXPECTED}: no user message (the task)`);
  }
  const system = messages.slice(0, first).find((m) => m.role === "system");
  const actionRegex = compileActionRegex(info.action_regex, info.v2 ? V2_ACTION_REGEX : V1_ACTION_REGEX);
  const steps: ImportedStep[] = [];
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  for (let i = first + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m === undefined) continue; // i < length: it is there
    if (m.role === "assistant") {
      let end = i + 1;
      while (end < messages.length && messages[end]?.role !== "assistant") end++;
      steps.push(...turnOf(m, messages.slice(i + 1, end), { actionRegex, info, last: i === lastAssistant }));
    } else if (isFormatError(m) && messages[i - 1]?.role !== "assistant") {
      // Version 2 drops the model's unparsable answer and keeps only the agent's reply: the turn still happened.
      steps.push(formatErrorOf(m, actionRegex));
    }
  }
  const ended = endOf(steps, info);
  if (ended) steps.push(ended);
  return recordingFromSteps(
    {
      format: "mini-swe-agent",
      name,
      intent: task.text,
      instructions: system ? system.text : "",
      model: info.model_name ?? log.model ?? "unknown",
      ...(info.timeout !== undefined && info.timeout > 0
        ? { command_timeout_ms: Math.round(info.timeout * 1000) }
        : {}),
    },
    steps,
  );
}

/** One assistant message and the messages answering it, as one step per action (a format error is one step). */
function turnOf(
  m: ChatMessage,
  replies: ChatMessage[],
  { actionRegex, info, last }: { actionRegex: RegExp; info: Info; last: boolean },
): ImportedStep[] {
  const usage = convertUsage(m.usage);
  const blocks = [...m.text.matchAll(actionRegex)];
  const actions = actionsOf(m);
  // The thought is the text around the command blocks, the command their content: each byte appears once. With tool
  // calls the command is not in the text, which is all thought.
  const reason = reasonOf(m.calls.length > 0 ? m.text : textOutside(m.text, blocks));
  const reply = replies[0]?.role === "user" ? replies[0] : undefined;
  if (!actions) {
    // Text only, as version 1 writes it: exactly one block is an action, anything else a format error.
    const command = blocks.map(blockText).join("\n");
    if (blocks.length !== 1) {
      return [{
        kind: "refusal",
        reason,
        usage,
        argv: [...BASH, command],
        prefix: BASH,
        code: "format_error",
        message: reply?.text ?? "",
      }];
    }
    const observed = reply !== undefined && observationOf(reply).framed;
    const submitted = SUBMIT_MARKERS.some((marker) => command.includes(marker)) ||
      (last && info.exit_status === SUBMITTED);
    if (submitted && !observed) return [finishOf(info, { reason, usage, answer: reply?.text })];
    return [{ kind: "command", reason, usage, argv: [...BASH, command], prefix: BASH, ...observed_(reply) }];
  }
  if (actions.length === 0) {
    const refusal = replies.find((r) => r.role === "user");
    return [{
      kind: "refusal",
      reason,
      usage,
      argv: [...BASH, ""],
      prefix: BASH,
      code: "format_error",
      message: refusal?.text ?? "",
    }];
  }
  const answers = replies.filter((r) => r.role === "tool" || (r.role === "user" && !isFormatError(r)));
  const used = new Set<ChatMessage>();
  return actions.map((action, j): ImportedStep => {
    const decision = j === 0 ? { reason, usage } : {};
    const result = resultOf(answers, action, j, used);
    const submit = SUBMIT_MARKERS.some((marker) => action.command.includes(marker)) ||
      (last && j === actions.length - 1 && info.exit_status === SUBMITTED);
    if (submit && result === undefined) return finishOf(info, { ...decision });
    const argv = action.argv ?? [...BASH, action.command];
    return { ...decision, kind: "command", argv, prefix: action.prefix ?? BASH, ...observed_(result) };
  });
}

/** The parsed actions of a version 2 message (`extra.actions`), else its tool calls; undefined for plain text. */
function actionsOf(m: ChatMessage): Action[] | undefined {
  const parsed = m.extra?.actions;
  if (Array.isArray(parsed)) {
    return parsed.flatMap((a): Action[] => {
      if (!isRecord(a) || typeof a.command !== "string") return [];
      const callId = firstString(a.tool_call_id);
      return [{ command: a.command, ...(callId ? { callId } : {}) }];
    });
  }
  if (m.calls.length === 0) return undefined;
  return m.calls.map((call) => {
    const command = shellCommandOf(call);
    if (command !== undefined) return { command, ...(call.id ? { callId: call.id } : {}) };
    const { argv, prefix } = commandOf(call);
    return { command: "", argv, prefix, ...(call.id ? { callId: call.id } : {}) };
  });
}

/**
 * The reply to an action: the tool message naming its call, else the reply without an id in the same position (for a
 * call with an id, only a tool message: a user message there is a person's input, not this call's output).
 */
function resultOf(
  answers: ChatMessage[],
  action: Action,
  position: number,
  used: Set<ChatMessage>,
): ChatMessage | undefined {
  const byId = action.callId !== undefined
    ? answers.find((r) => r.callId === action.callId && !used.has(r))
    : undefined;
  const candidate = answers.filter((r) => r.callId === undefined)[position];
  const positional = candidate && !used.has(candidate) && (action.callId === undefined || candidate.role === "tool")
    ? candidate
    : undefined;
  const found = byId ?? positional;
  if (found) used.add(found);
  return found;
}

function observed_(reply: ChatMessage | undefined): { exit_code: number | null; timed_out: boolean; output: string } {
  if (reply === undefined) return { exit_code: null, timed_out: false, output: "" };
  const { exit_code, timed_out, output } = observationOf(reply);
  return { exit_code, timed_out, output };
}

function isFormatError(m: ChatMessage): boolean {
  return m.role === "user" && m.extra?.interrupt_type === "FormatError";
}

/** A format error without the model's message: its reply, and the model's text where the agent kept it. */
function formatErrorOf(m: ChatMessage, actionRegex: RegExp): ImportedStep {
  const response = typeof m.extra?.model_response === "string" ? m.extra.model_response : "";
  const blocks = [...response.matchAll(actionRegex)];
  const command = blocks.map(blockText).join("\n");
  return {
    kind: "refusal",
    reason: reasonOf(textOutside(response, blocks)),
    argv: [...BASH, command],
    prefix: BASH,
    code: "format_error",
    message: m.text,
  };
}

function finishOf(info: Info, step: { reason?: string; usage?: ImportedStep["usage"]; answer?: string }): ImportedStep {
  const status = info.exit_status;
  return {
    kind: "finish",
    ...(step.reason !== undefined ? { reason: step.reason } : {}),
    ...(step.usage !== undefined ? { usage: step.usage } : {}),
    status: status === undefined || status === SUBMITTED ? "success" : "failure",
    summary: info.submission ?? step.answer ?? "",
  };
}

/** What a block captured: its group, as Python's findall returns it (the whole match when there is no group). */
function blockText(block: RegExpMatchArray): string {
  return (block.length > 1 ? (block[1] ?? "") : block[0]).trim();
}

function textOutside(text: string, blocks: RegExpMatchArray[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const block of blocks) {
    parts.push(text.slice(at, block.index));
    at = (block.index ?? 0) + block[0].length;
  }
  parts.push(text.slice(at));
  return parts.map((part) => part.trim()).filter((part) => part !== "").join("\n\n");
}

/** A run that stopped on a limit or an error, without submitting, still ends in a (failed) finish. */
function endOf(steps: ImportedStep[], info: Info): ImportedStep | undefined {
  const status = info.exit_status;
  if (typeof status !== "string" || status === "" || steps.some((s) => s.kind === "finish")) return undefined;
  return {
    kind: "finish",
    status: status === SUBMITTED ? "success" : "failure",
    summary: info.submission ? info.submission : status,
  };
}

/** The run's outcome and configuration: `info` (both versions), else version 2's closing "exit" message. */
function infoOf(root: unknown, messages: ChatMessage[]): Info {
  const record = (value: unknown) => (isRecord(value) ? value : {});
  const json = record(root);
  const info = record(json.info);
  const config = record(info.config);
  const agent = record(config.agent);
  const model = record(config.model);
  const environment = record(config.environment);
  const exit = record(messages.findLast((m) => m.role === "exit")?.extra);
  const format = typeof json.trajectory_format === "string" ? json.trajectory_format : "";
  const version = typeof info.mini_version === "string" ? Number.parseInt(info.mini_version, 10) : NaN;
  const out: Info = { v2: format === "mini-swe-agent-1.1" || version >= 2 || messages.some((m) => m.role === "exit") };
  const exitStatus = firstString(info.exit_status, exit.exit_status);
  if (exitStatus) out.exit_status = exitStatus;
  const submission = typeof info.submission === "string"
    ? info.submission
    : typeof exit.submission === "string"
    ? exit.submission
    : undefined;
  if (submission !== undefined) out.submission = submission;
  const regex = firstString(model.action_regex, agent.action_regex);
  if (regex) out.action_regex = regex;
  const modelName = firstString(model.model_name);
  if (modelName) out.model_name = modelName;
  if (typeof environment.timeout === "number") out.timeout = environment.timeout;
  return out;
}

/**
 * A configured action_regex is Python syntax: named groups `(?P<name>…)` and leading inline flags are translated; a
 * pattern JavaScript still cannot compile falls back to the version's default.
 */
function compileActionRegex(source: string | undefined, fallback: RegExp): RegExp {
  if (source === undefined) return fallback;
  let pattern = source.replace(/\(\?P</g, "(?<").replace(/\(\?P=(\w+)\)/g, "\\k<$1>");
  let flags = "gs";
  const inline = /^\(\?([aimsux]+)\)/.exec(pattern);
  if (inline) {
    pattern = pattern.slice(inline[0].length);
    const [, letters = ""] = inline; // the pattern always captures its letters
    if (letters.includes("i")) flags += "i";
    if (letters.includes("m")) flags += "m";
  }
  try {
    return new RegExp(pattern, flags);
  } catch {
    return fallback;
  }
}
