// Chat logs with tool calls (OpenAI Chat Completions and Responses, Anthropic Messages and the dumps agents write of
// them, read into one shape by chat.ts): each tool call is a step, answered by the tool result that names its id.
import { UsageError } from "../../errors.ts";
import type { Recording } from "../recording.ts";
import { type ChatMessage, readChatLog } from "./chat.ts";
import { type ImportedStep, reasonOf, recordingFromSteps } from "./step.ts";
import { commandOf, finishOf, isFinishTool, type ToolCall } from "./tool-call.ts";
import { convertUsage } from "./usage.ts";

export const OPENAI_MESSAGES_EXPECTED = "an OpenAI-style chat log (messages[] with role/content and tool_calls)";

export function importOpenAiMessages(json: unknown, { name }: { name: string }): Recording {
  const log = readChatLog(json, { name, expected: OPENAI_MESSAGES_EXPECTED });
  const messages = log.messages;
  // A blank first user turn (a client's empty opener) carries no task; the first with text does.
  const first = messages.findIndex((m) => m.role === "user" && m.text.trim() !== "");
  const task = messages[first];
  if (task === undefined) {
    throw new UsageError(`${name}: expected ${OPENAI_MESSAGES_EXPECTED}: no user message (the task)`);
  }
  const instructions = [
    ...(log.system ? [log.system] : []),
    ...messages.slice(0, first).filter((m) => m.role === "system").map((m) => m.text),
  ].join("\n\n");
  const results = new Results(messages, name);
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  const steps: ImportedStep[] = [];
  let finished: string | undefined;
  for (let i = first + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m === undefined) continue; // i < length: it is there
    if (m.role !== "assistant") continue; // results are read with their call; later user/system turns have no counterpart
    if (finished) throw new UsageError(`${name}: ${m.where}: assistant message after the run finished (${finished})`);
    const usage = convertUsage(m.usage);
    if (m.calls.length === 0) {
      if (i === lastAssistant) {
        const refused = m.refusal !== undefined && m.text === "";
        steps.push({
          kind: "finish",
          usage,
          status: refused ? "failure" : "success",
          // "!": refused is m.refusal !== undefined (a few lines up); TS does not carry that through the flag
          summary: refused ? m.refusal! : m.text,
        });
      } else {
        steps.push({ kind: "print", usage, text: m.text });
      }
      continue;
    }
    m.calls.forEach((call, j) => {
      if (finished) throw new UsageError(`${name}: ${call.where}: tool call after the run finished (${finished})`);
      const decision = j === 0 ? { reason: reasonOf(m.text), usage } : {};
      if (isFinishTool(call.name)) {
        results.take(i, call, j); // a finish tool's acknowledgement is not an observation
        steps.push({ ...decision, ...finishOf(call) });
        finished = `${call.where} called ${call.name}`;
        return;
      }
      const result = results.take(i, call, j);
      if (result === undefined && i !== lastAssistant) {
        throw new UsageError(
          `${name}: ${call.where}: no tool result for tool call ${JSON.stringify(call.id ?? call.name)}`,
        );
      }
      const { argv, prefix } = commandOf(call);
      steps.push({
        ...decision,
        kind: "command",
        argv,
        prefix,
        exit_code: result?.exitCode ?? null,
        timed_out: false,
        output: result?.text ?? "",
      });
    });
  }
  return recordingFromSteps(
    { format: "openai-messages", name, intent: task.text, instructions, model: log.model ?? "unknown" },
    steps,
  );
}

/**
 * Tool results, matched to their calls: by id, first among the results that follow the call's message, then later in
 * the log (some agents answer a call after an interleaved turn); a result logged without an id answers the call in
 * the same position. Each result answers one call. Ids repeat in some logs (local servers number calls per answer),
 * so the nearest unused result wins.
 */
class Results {
  readonly #messages: ChatMessage[];
  readonly #used = new Set<number>();
  readonly #byId = new Map<string, number[]>();

  constructor(messages: ChatMessage[], name: string) {
    this.#messages = messages;
    const known = new Set<string>();
    let lastCalls: ToolCall[] = [];
    messages.forEach((m, i) => {
      if (m.role === "assistant") {
        for (const call of m.calls) if (call.id !== undefined) known.add(call.id);
        lastCalls = m.calls;
      }
      if (m.role !== "tool") return;
      if (m.callId !== undefined) {
        // A result must answer a call made before it.
        if (!known.has(m.callId)) {
          throw new UsageError(`${name}: ${m.where}: tool result for unknown tool_call_id ${JSON.stringify(m.callId)}`);
        }
        const list = this.#byId.get(m.callId);
        if (list) list.push(i);
        else this.#byId.set(m.callId, [i]);
      } else if (lastCalls.length === 0) {
        throw new UsageError(`${name}: ${m.where}: tool result for no tool call before it`);
      }
    });
  }

  take(index: number, call: ToolCall, position: number): ChatMessage | undefined {
    if (call.id !== undefined) {
      const list = this.#byId.get(call.id);
      if (list) {
        // Calls come in log order, so results before this call or already used are never wanted again.
        for (let head = list[0]; head !== undefined && (head <= index || this.#used.has(head)); head = list[0]) {
          list.shift();
        }
        const next = list.shift();
        if (next !== undefined) return this.#use(next);
      }
    }
    // Without a matching id: the position-th result without an id, before the next assistant message.
    let seen = 0;
    for (let k = index + 1;; k++) {
      const m = this.#messages[k];
      if (m === undefined || m.role === "assistant") break;
      if (m.role !== "tool" || m.callId !== undefined) continue;
      if (seen === position) return this.#used.has(k) ? undefined : this.#use(k);
      seen += 1;
    }
    return undefined;
  }

  #use(k: number): ChatMessage {
    this.#used.add(k);
    // "!": k is an index of #messages, from #byId or the scan in take
    return this.#messages[k]!;
  }
}
