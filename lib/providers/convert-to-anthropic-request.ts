// TurnRequest -> Anthropic Messages API body, laid out for prompt caching. The API caches prefixes in the order
// tools -> system -> messages; changing the tools invalidates everything, changing `tool_choice` only the cached
// message blocks. So:
// - tools: one tool per answer shape (`answer` for selection and arguments, which share the run's one schema;
//   `classify`), and `tool_choice` forces it: the same on every call of a run. A caller that passes the previous
//   body's `tools` gets them kept, in first-seen order; the HTTP adapter passes none.
// - system: one block per prefix section (instructions, intent, tasks, checkpoint); breakpoints on the last one
//   (stable until the next checkpoint) and, when there is a checkpoint, on the block before it (stable for the run).
// - messages: one user message, the events one block per event and a closing "]", then the newest event's larger
//   view, working state, candidates, lookups. Retained events keep their bytes until retired, so a breakpoint on the
//   last event lets the next call read every one of them; one on the block before the candidates lets the step's
//   arguments call read the newest view and the working state too.
import type { JsonSchema, Section, TurnRequest } from "../vocabulary/turn.ts";
import { encodePropertyKeys, type KeyAliases } from "./encode-property-keys.ts";
import { renderAnswerFormat, renderSection, renderSectionBlocks, splitPrefix } from "./render-sections.ts";
import { wrapResponseSchema } from "./wrap-response-schema.ts";
import { convertToAnthropicOutputSchema } from "./convert-to-anthropic-output-schema.ts";
import type { ThinkingType } from "../models/models.ts";

/** The API accepts at most this many cache_control markers per request. */
export const MAX_CACHE_BREAKPOINTS = 4;

type TextBlock = { type: "text"; text: string; cache_control?: { type: "ephemeral"; ttl?: "1h" } };

/** The API (and the SDK's Tool type) wants an object schema: the wrapped schema always is one. */
export type AnthropicTool = { name: string; description: string; input_schema: JsonSchema & { type: "object" } };

export type AnthropicRequestBody = {
  model: string;
  max_tokens: number;
  system?: TextBlock[];
  messages: [{ role: "user"; content: TextBlock[] }];
  /** forced_tool only: the 5.5 models reject a forced tool ("What's new in Claude Sonnet 5.5", 2026-09-28). */
  tools?: AnthropicTool[];
  tool_choice?: { type: "tool"; name: string };
  /** output_config.format (JSON schema) where the model table says the model takes it; effort where set. */
  output_config?: {
    format?: { type: "json_schema"; schema: JsonSchema };
    effort?: "low" | "medium" | "high" | "xhigh" | "max";
  };
  thinking?: { type: ThinkingType };
};

/** How the answer is constrained: Anthropic's two ways, or the schema in the prompt (Loom validates either way). */
export type AnthropicAnswerMode = "forced_tool" | "output_config_format" | "prompt";

/**
 * The tool that carries this request's answer: `answer` for selection and arguments (the loop sends one response
 * schema for both, so the tools and tool_choice are the same on every call and the cache is one chain), `classify`
 * for routing.
 */
function anthropicToolName(request: TurnRequest): string {
  return request.phase === "classification" ? "classify" : "answer";
}

function toolDescription(request: TurnRequest): string {
  return `The answer to this ${
    request.phase === "classification" ? "classification" : "request"
  }. The \`answer\` field must conform to its schema.`;
}

/** `sent` with `tool` added, or put in place of an older tool of its name whose definition differs. */
function withTool(sent: readonly AnthropicTool[], tool: AnthropicTool): AnthropicTool[] {
  const tools = sent.slice();
  const at = tools.findIndex((t) => t.name === tool.name);
  if (at === -1) tools.push(tool);
  else if (JSON.stringify(tools[at]) !== JSON.stringify(tool)) tools[at] = tool;
  return tools;
}

/** The blocks of the prefix, and which of them end a cacheable prefix. */
function systemBlocks(prefix: readonly Section[]): { blocks: TextBlock[]; breakpoints: number[] } {
  const blocks: TextBlock[] = prefix.map((section) => ({ type: "text", text: renderSection(section) }));
  const breakpoints: number[] = [];
  prefix.forEach((section, i) => {
    if (section.section === "checkpoint" && i > 0) breakpoints.push(i - 1);
  });
  if (blocks.length > 0) breakpoints.push(blocks.length - 1);
  return { blocks, breakpoints };
}

/**
 * The blocks of the user message, and its breakpoints: the last event (retained events are append-only, so the next
 * call reads all of them) and the last block before the candidates when that is not the events (the newest event's
 * larger view and the working state: the step's next call reads them too).
 */
function messageBlocks(rest: readonly Section[]): { blocks: TextBlock[]; breakpoints: number[] } {
  const blocks: TextBlock[] = [];
  const breakpoints: number[] = [];
  for (const section of rest) {
    const texts = renderSectionBlocks(section);
    // The events' last piece is their closing "]": the breakpoint goes on the last event, before it.
    if (section.section === "events" && section.events.length >= 1) breakpoints.push(blocks.length + texts.length - 2);
    if (section.section === "candidates") {
      const before = rest[rest.indexOf(section) - 1];
      if (before && before.section !== "events") breakpoints.push(blocks.length - 1);
    }
    for (const text of texts) blocks.push({ type: "text", text });
  }
  // The API rejects an empty user turn; a TurnRequest always has candidates, so this is only a guard.
  if (blocks.length === 0) blocks.push({ type: "text", text: "Answer now." });
  return { blocks, breakpoints };
}

export function convertToAnthropicRequest(
  request: TurnRequest,
  { model, maxTokens, tools: sent = [], cacheTtl = "5m", answerMode = "forced_tool", effort, thinking }: {
    model: string;
    maxTokens: number;
    /** From the model table (structured_output): forced_tool, output_config_format or prompt. */
    answerMode?: AnthropicAnswerMode;
    effort?: string;
    thinking?: ThinkingType;
    /** The cache's lifetime: 5m (the API's default, left unsaid) or 1h (said on every marker: a request mixing
     * lifetimes must put the longer ones first, so all are one). */
    cacheTtl?: "5m" | "1h";
    /** The `tools` of the previous body this adapter sent; the new body keeps them, in order, and adds its own. */
    tools?: readonly AnthropicTool[];
  },
): { body: AnthropicRequestBody; aliases: KeyAliases } {
  const { prefix, rest } = splitPrefix(request.sections);
  const system = systemBlocks(prefix);
  const content = messageBlocks(rest);
  // The schema in the prompt goes last, after every breakpoint: the same text on every call of a run.
  if (answerMode === "prompt") content.blocks.push({ type: "text", text: renderAnswerFormat(request.response_schema) });
  // The latest markers are the ones worth keeping should a request ever have more than the API allows.
  const marked = [
    ...system.breakpoints.map((i) => system.blocks[i]),
    ...content.breakpoints.map((i) => content.blocks[i]),
  ].slice(-MAX_CACHE_BREAKPOINTS);
  for (const block of marked) {
    block.cache_control = cacheTtl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  }

  const { schema, aliases } = encodePropertyKeys(wrapResponseSchema(request.response_schema));
  const body: AnthropicRequestBody = {
    model,
    max_tokens: maxTokens,
    ...(system.blocks.length > 0 ? { system: system.blocks } : {}),
    messages: [{ role: "user", content: content.blocks }],
  };
  if (answerMode === "forced_tool") {
    const tool: AnthropicTool = {
      name: anthropicToolName(request),
      description: toolDescription(request),
      input_schema: { ...schema, type: "object" },
    };
    body.tools = withTool(sent, tool);
    body.tool_choice = { type: "tool", name: tool.name };
  }
  const format = answerMode === "output_config_format"
    ? { type: "json_schema" as const, schema: convertToAnthropicOutputSchema(schema) }
    : undefined;
  if (format || effort) {
    body.output_config = {
      ...(format ? { format } : {}),
      ...(effort ? { effort: effort as NonNullable<AnthropicRequestBody["output_config"]>["effort"] } : {}),
    };
  }
  if (thinking) body.thinking = { type: thinking };
  return { body, aliases: answerMode === "prompt" ? {} : aliases };
}
