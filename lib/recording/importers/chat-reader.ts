// One chat-log entry at a time into ChatMessages: messages with a role (content as a string, text parts or content
// blocks), transcript lines wrapping a message, Responses items and response objects, Chat Completions responses.
import type { ChatMessage, ChatRole, Fail } from "./chat-message.ts";
import { describeJson, firstString, isRecord } from "./source.ts";
import type { ToolCall } from "./tool-call.ts";

const ROLES: Record<string, ChatRole> = {
  system: "system",
  developer: "system",
  user: "user",
  human: "user",
  assistant: "assistant",
  ai: "assistant",
  model: "assistant",
  tool: "tool",
  function: "tool",
  ipython: "tool",
  exit: "exit",
};
const ROLE_NAMES = "system, developer, user, assistant, tool or function";
const TEXT_PARTS = new Set(["text", "input_text", "output_text"]);
// Reasoning and server-side items are not decisions of the agent loop; they carry no action.
const SKIPPED_PARTS = new Set([
  "thinking",
  "redacted_thinking",
  "reasoning",
  "server_tool_use",
  "web_search_tool_result",
]);
const CALL_ITEMS = new Set(["function_call", "custom_tool_call", "local_shell_call"]);
const OUTPUT_ITEMS = new Set(["function_call_output", "custom_tool_call_output", "local_shell_call_output"]);

export class Reader {
  readonly out: ChatMessage[] = [];
  /** The assistant turn that loose Responses items (calls after a message) still belong to. */
  #open: ChatMessage | undefined;
  readonly #fail: Fail;

  constructor(fail: Fail) {
    this.#fail = fail;
  }

  item(item: unknown, where: string): void {
    if (!isRecord(item)) return this.#fail(`${where}: expected a message object, found ${describeJson(item)}`);
    if (typeof item.role === "string") return this.message(item, item.role, where);
    if (isRecord(item.message)) {
      // A transcript line wrapping one message; side chains and meta lines are not the agent's own turns.
      if (item.isSidechain === true || item.isMeta === true) return;
      const message = item.message;
      const role = typeof message.role === "string"
        ? message.role
        : typeof item.type === "string"
        ? item.type
        : undefined;
      if (role === undefined) {
        return this.#fail(`${where}.message.role: expected a role, found ${describeJson(message)}`);
      }
      return this.message(message, role, where);
    }
    if (item.type === "response_item" && isRecord(item.payload)) return this.item(item.payload, where);
    if (item.object === "response" && Array.isArray(item.output)) return this.response(item, where);
    if (Array.isArray(item.choices)) return this.completion(item, where);
    const type = item.type;
    if (typeof type === "string") {
      if (CALL_ITEMS.has(type)) return this.call(item, where);
      if (OUTPUT_ITEMS.has(type)) return this.output(item, where);
      if (type in ROLES && type !== "model") return this.message(item, type, where);
      return; // metadata lines (session headers, reasoning items, events) carry no turn
    }
    if (Array.isArray(item.parts)) return this.#fail(`${where}.role: expected a role, found none`);
    return this.#fail(`${where}: expected a message with a role, found ${describeJson(item)}`);
  }

  message(m: Record<string, unknown>, rawRole: string, where: string): void {
    const role = ROLES[rawRole.toLowerCase()];
    if (!role) return this.#fail(`${where}.role: expected ${ROLE_NAMES}, found ${JSON.stringify(rawRole)}`);
    const blocks = this.blocks(m.content ?? m.parts, where);
    const base = { where, ...metaOf(m) };
    if (role === "tool") {
      const callId = firstString(m.tool_call_id, m.tool_use_id, m.call_id);
      const text = isRecord(m.content) ? JSON.stringify(m.content) : blocks.text;
      this.push({ ...base, role, text, calls: [], ...(callId ? { callId } : {}) });
      return;
    }
    // Results inside a user message (Anthropic tool_result blocks, Gemini function responses) come first.
    for (const result of blocks.results) this.push({ ...result, where });
    const calls = role === "assistant" ? [...blocks.calls, ...this.toolCalls(m, where)] : [];
    if (role === "user" && blocks.results.length > 0 && blocks.text === "") return;
    const refusal = typeof m.refusal === "string" && m.refusal !== "" ? { refusal: m.refusal } : {};
    const message: ChatMessage = { ...base, role, text: blocks.text, calls, ...refusal };
    this.push(message);
    if (role === "assistant" && m.type === "message") this.#open = message;
  }

  /** A whole Responses API response object: its output items are one assistant turn. */
  response(r: Record<string, unknown>, where: string): void {
    const turn: ChatMessage = { where, role: "assistant", text: "", calls: [], ...metaOf(r) };
    this.push(turn);
    this.#open = turn;
    (r.output as unknown[]).forEach((item, j) => {
      if (!isRecord(item)) return;
      if (item.type === "message") {
        const text = this.blocks(item.content, `${where}.output[${j}]`).text;
        turn.text = turn.text === "" ? text : `${turn.text}\n${text}`;
      } else if (typeof item.type === "string" && CALL_ITEMS.has(item.type)) {
        turn.calls.push(this.callOf(item, `${where}.output[${j}]`));
      }
    });
  }

  /** A Chat Completions response object: its first choice's message is the assistant turn. */
  completion(r: Record<string, unknown>, where: string): void {
    const choice = (r.choices as unknown[])[0];
    const message = isRecord(choice) && isRecord(choice.message) ? choice.message : undefined;
    if (!message) return;
    const usage = r.usage ?? message.usage;
    const model = message.model ?? r.model;
    this.message(
      { ...message, ...(usage !== undefined ? { usage } : {}), ...(model !== undefined ? { model } : {}) },
      "assistant",
      where,
    );
  }

  call(item: Record<string, unknown>, where: string): void {
    let turn = this.#open;
    if (!turn) {
      turn = { where, role: "assistant", text: "", calls: [] };
      this.push(turn);
      this.#open = turn;
    }
    turn.calls.push(this.callOf(item, where));
  }

  callOf(item: Record<string, unknown>, where: string): ToolCall {
    const id = firstString(item.call_id, item.id);
    if (item.type === "local_shell_call") {
      const action = isRecord(item.action) ? item.action : {};
      return { id, name: "local_shell", args: JSON.stringify({ command: action.command }), where };
    }
    const name = firstString(item.name);
    if (!name) return this.#fail(`${where}.name: expected a non-empty string`);
    return { id, name, args: argsText(item.type === "custom_tool_call" ? item.input : item.arguments), where };
  }

  output(item: Record<string, unknown>, where: string): void {
    const callId = firstString(item.call_id, item.id);
    const { text, exitCode } = outputText(item.output);
    this.push({
      where,
      role: "tool",
      text,
      calls: [],
      ...(callId ? { callId } : {}),
      ...(exitCode !== undefined ? { exitCode } : {}),
      ...(isRecord(item.extra) ? { extra: item.extra } : {}),
    });
  }

  push(message: ChatMessage): void {
    if (message.role !== "assistant") this.#open = undefined;
    else if (message !== this.#open) this.#open = undefined;
    this.out.push(message);
  }

  toolCalls(m: Record<string, unknown>, where: string): ToolCall[] {
    const calls: ToolCall[] = [];
    if (Array.isArray(m.tool_calls)) {
      m.tool_calls.forEach((c, j) => {
        const at = `${where}.tool_calls[${j}]`;
        if (!isRecord(c)) return this.#fail(`${at}: expected a tool call object, found ${describeJson(c)}`);
        // Function tools nest under `function`, custom (free-form) tools under `custom`, LangChain keeps them flat.
        const nested = isRecord(c.function) ? "function" : isRecord(c.custom) ? "custom" : undefined;
        const fn = nested ? (c[nested] as Record<string, unknown>) : undefined;
        const name = firstString(fn ? fn.name : c.name);
        if (!name) return this.#fail(`${at}.${nested ? `${nested}.` : ""}name: expected a non-empty string`);
        const args = fn ? fn.arguments ?? fn.input : c.arguments ?? c.args ?? c.input;
        calls.push({ id: firstString(c.id, c.call_id), name, args: argsText(args), where: at });
      });
    }
    if (calls.length === 0 && isRecord(m.function_call)) {
      const name = firstString(m.function_call.name);
      if (!name) return this.#fail(`${where}.function_call.name: expected a non-empty string`);
      calls.push({ id: undefined, name, args: argsText(m.function_call.arguments), where: `${where}.function_call` });
    }
    return calls;
  }

  /** Content as text, tool calls (tool_use, functionCall) and tool results (tool_result, functionResponse). */
  blocks(content: unknown, where: string): { text: string; calls: ToolCall[]; results: Omit<ChatMessage, "where">[] } {
    if (typeof content === "string") return { text: content, calls: [], results: [] };
    if (!Array.isArray(content)) return { text: "", calls: [], results: [] };
    const texts: string[] = [];
    const calls: ToolCall[] = [];
    const results: Omit<ChatMessage, "where">[] = [];
    content.forEach((part, j) => {
      if (typeof part === "string") return void texts.push(part);
      if (!isRecord(part)) return;
      const type = typeof part.type === "string" ? part.type : undefined;
      if (type === "tool_use") {
        const name = firstString(part.name);
        if (!name) return this.#fail(`${where}.content[${j}].name: expected a non-empty string`);
        return void calls.push({
          id: firstString(part.id),
          name,
          args: JSON.stringify(part.input ?? {}),
          where: `${where}.content[${j}]`,
        });
      }
      if (type === "tool_result") {
        const callId = firstString(part.tool_use_id);
        return void results.push({
          role: "tool",
          text: contentText(part.content),
          calls: [],
          ...(callId ? { callId } : {}),
        });
      }
      if (isRecord(part.functionCall)) {
        const fc = part.functionCall;
        const name = firstString(fc.name);
        if (!name) return this.#fail(`${where}.parts[${j}].functionCall.name: expected a non-empty string`);
        return void calls.push({
          id: firstString(fc.id),
          name,
          args: JSON.stringify(fc.args ?? {}),
          where: `${where}.parts[${j}]`,
        });
      }
      if (isRecord(part.functionResponse)) {
        const fr = part.functionResponse;
        const callId = firstString(fr.id);
        const response = isRecord(fr.response) ? fr.response : {};
        const text = typeof response.output === "string"
          ? response.output
          : typeof response.content === "string"
          ? response.content
          : JSON.stringify(fr.response ?? null);
        return void results.push({ role: "tool", text, calls: [], ...(callId ? { callId } : {}) });
      }
      if (part.thought === true || (type !== undefined && SKIPPED_PARTS.has(type))) return;
      if (typeof part.text === "string" && (type === undefined || TEXT_PARTS.has(type) || type === "summary_text")) {
        return void texts.push(part.text);
      }
      if (typeof part.refusal === "string") return void texts.push(part.refusal);
      if (typeof part.text === "string") return void texts.push(part.text);
      texts.push(`[${type ?? "non-text"} part not imported]`);
    });
    return { text: texts.join("\n"), calls, results };
  }
}

/** Usage, model, id and agent metadata of a message, wherever the log keeps them. */
function metaOf(m: Record<string, unknown>): Pick<ChatMessage, "usage" | "model" | "id" | "extra"> {
  const extra = isRecord(m.extra) ? m.extra : undefined;
  const response = extra && isRecord(extra.response) ? extra.response : undefined;
  const metadata = isRecord(m.response_metadata) ? m.response_metadata : undefined;
  const usage = m.usage ?? m.usage_metadata ?? m.usageMetadata ?? metadata?.token_usage ?? metadata?.usage ??
    response?.usage;
  const model = firstString(m.model, metadata?.model_name, metadata?.model, response?.model);
  const id = firstString(m.id);
  return {
    ...(usage !== undefined && usage !== null ? { usage } : {}),
    ...(model ? { model } : {}),
    ...(id ? { id } : {}),
    ...(extra ? { extra } : {}),
  };
}

/** Arguments as the JSON text the model wrote; a log that kept the parsed object gets it serialised. */
function argsText(args: unknown): string {
  if (typeof args === "string") return args;
  return args === undefined || args === null ? "{}" : JSON.stringify(args);
}

/** Text of content that may be a string, text blocks, or (for results) any JSON value. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (content === undefined || content === null) return "";
  if (Array.isArray(content)) {
    return content
      .map((
        part,
      ) => (typeof part === "string"
        ? part
        : isRecord(part) && typeof part.text === "string"
        ? part.text
        : `[${isRecord(part) && typeof part.type === "string" ? part.type : "non-text"} part not imported]`)
      )
      .join("\n");
  }
  return JSON.stringify(content);
}

/**
 * A Responses tool output: text, text parts, or a shell result serialised as `{"output": …, "metadata": {"exit_code": N}}`
 * (its output and exit code are unwrapped).
 */
function outputText(output: unknown): { text: string; exitCode?: number } {
  if (typeof output !== "string") return { text: contentText(output) };
  if (!output.startsWith('{"output":')) return { text: output };
  try {
    const parsed: unknown = JSON.parse(output);
    if (isRecord(parsed) && typeof parsed.output === "string") {
      const code = isRecord(parsed.metadata) ? parsed.metadata.exit_code : undefined;
      return { text: parsed.output, ...(typeof code === "number" && Number.isInteger(code) ? { exitCode: code } : {}) };
    }
  } catch {
    // not the wrapped form: keep the text as the model saw it
  }
  return { text: output };
}
