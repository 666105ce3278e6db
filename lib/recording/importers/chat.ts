// Chat logs as agents really write them, read into one shape: OpenAI Chat Completions messages (content null, a string
// or text parts; tool_calls with arguments as JSON text or, malformed, an object; legacy function_call; role "tool" or
// "function" results), Anthropic Messages (content blocks text / tool_use / tool_result, `system` at the top), OpenAI
// Responses items (message / function_call / function_call_output, whole response objects), LangChain and Gemini
// message dumps, and per-line wrappers ({type, message} transcripts, {type: "response_item", payload} rollouts).
import { UsageError } from "../../errors.ts";
import { contentText, Reader } from "./chat-reader.ts";
import { describeJson, firstString, isRecord } from "./source.ts";
import type { ChatMessage, Fail } from "./chat-message.ts";

export type { ChatMessage, ChatRole, Fail } from "./chat-message.ts";

export type ChatLog = { messages: ChatMessage[]; model?: string; system?: string };

/**
 * Reads a chat log: `{messages: [...]}` (with optional top-level `model`, `system`, a `usage` list with one entry per
 * assistant message, and a final `response`), `{input: [...]}`, `{history: [...]}`, or a bare array of messages or
 * items.
 */
export function readChatLog(json: unknown, { name, expected }: { name: string; expected: string }): ChatLog {
  const fail: Fail = (detail) => {
    throw new UsageError(`${name}: expected ${expected}: ${detail}`);
  };
  const root = rootOf(json, fail);
  const reader = new Reader(fail);
  root.items.forEach((item, i) => reader.item(item, `messages[${i}]`));
  if (root.response !== undefined) reader.item(root.response, "response");
  const messages = mergeSplitAnswers(reader.out);
  if (root.usages) assignUsages(messages, root.usages);
  const model = firstString(root.model, ...messages.map((m) => (m.role === "assistant" ? m.model : undefined)));
  const system = root.system === undefined ? undefined : contentText(root.system);
  return { messages, ...(model ? { model } : {}), ...(system ? { system } : {}) };
}

type Root = { items: unknown[]; model?: unknown; system?: unknown; usages?: unknown[]; response?: unknown };

function rootOf(json: unknown, fail: Fail): Root {
  if (Array.isArray(json)) return { items: json };
  if (!isRecord(json)) return fail(`found ${describeJson(json)}`);
  // A completion log of a model without native tool calls keeps the tool-call view of the same exchange apart.
  const fncall = Array.isArray(json.fncall_messages);
  const items = fncall ? json.fncall_messages : [json.messages, json.input, json.history].find(Array.isArray);
  if (!Array.isArray(items)) return fail(`messages: expected an array of messages, found ${describeJson(json)}`);
  const extraOutput = !Array.isArray(json.messages) && Array.isArray(json.output) ? json.output : [];
  const response = fncall && json.fncall_response !== undefined ? json.fncall_response : json.response;
  const usages = Array.isArray(json.usage) ? json.usage : Array.isArray(json.usages) ? json.usages : undefined;
  return {
    items: extraOutput.length > 0 ? [...items, ...extraOutput] : items,
    model: json.model ?? (isRecord(response) ? response.model : undefined),
    system: json.system ?? json.instructions,
    ...(usages ? { usages } : {}),
    ...(isRecord(response) ? { response } : {}),
  };
}

/** Transcripts that log each content block of one answer on its own line repeat the answer's id: join them again. */
function mergeSplitAnswers(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const last = out.at(-1);
    if (last && last.role === "assistant" && m.role === "assistant" && m.id !== undefined && m.id === last.id) {
      last.text = last.text === "" ? m.text : m.text === "" ? last.text : `${last.text}\n${m.text}`;
      last.calls.push(...m.calls);
      if (m.usage !== undefined) last.usage = m.usage;
      continue;
    }
    out.push(m);
  }
  return out;
}

/** A top-level usage list answers the assistant messages in order, when it has exactly one entry for each. */
function assignUsages(messages: ChatMessage[], usages: unknown[]): void {
  const assistants = messages.filter((m) => m.role === "assistant");
  if (assistants.length !== usages.length) return;
  assistants.forEach((m, i) => {
    if (m.usage === undefined && isRecord(usages[i])) m.usage = usages[i];
  });
}
