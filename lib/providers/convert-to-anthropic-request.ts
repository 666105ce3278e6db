// TurnRequest -> Anthropic Messages API body, laid out for prompt caching. The API caches prefixes in the order
// tools -> system -> messages; changing the tools invalidates everything, changing `tool_choice` only the cached
// message blocks. So:
// - tools: one tool per answer shape (`select`, `args_<action>`, `classify`), and `tool_choice` forces this request's.
//   A caller that passes the previous body's `tools` gets them kept, in first-seen order, so the array stays
//   byte-identical once each phase has occurred; the HTTP adapter passes none, so its bodies carry this request's
//   tool only.
// - system: one block per prefix section (instructions, intent, checkpoint); breakpoints on the last one (stable
//   until the next checkpoint) and, when there is a checkpoint, on the block before it (stable for the whole run).
// - messages: one user message, the events one block per event, then working state, candidates, lookups. A
//   breakpoint on the second-to-last event: the newest event is shown larger than it will be once it is older, the
//   others keep their bytes, so the next call reads the prefix and every older retained event from the cache.
import type { JsonSchema, Section, TurnRequest } from "../turn.ts";
import { encodePropertyKeys, type KeyAliases } from "./encode-property-keys.ts";
import { renderSection, renderSectionBlocks, splitPrefix } from "./render-sections.ts";
import { wrapResponseSchema } from "./wrap-response-schema.ts";

/** The API accepts at most this many cache_control markers per request. */
export const MAX_CACHE_BREAKPOINTS = 4;

type TextBlock = { type: "text"; text: string; cache_control?: { type: "ephemeral" } };

export type AnthropicTool = { name: string; description: string; input_schema: JsonSchema };

export type AnthropicRequestBody = {
  model: string;
  max_tokens: number;
  system?: TextBlock[];
  messages: [{ role: "user"; content: TextBlock[] }];
  tools: AnthropicTool[];
  tool_choice: { type: "tool"; name: string };
};

function chosenAction(request: TurnRequest): string | null {
  const candidates = request.sections.find((s): s is Extract<Section, { section: "candidates" }> =>
    s.section === "candidates"
  );
  return typeof candidates?.action === "string" && candidates.action !== "" ? candidates.action : null;
}

/** The tool that carries this request's answer: one stable name per answer shape. */
export function anthropicToolName(request: TurnRequest): string {
  if (request.phase === "selection") return "select";
  if (request.phase === "classification") return "classify";
  const action = chosenAction(request);
  // Tool names must match ^[a-zA-Z0-9_-]{1,64}$.
  return action === null ? "arguments" : `args_${action}`.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
}

function toolDescription(request: TurnRequest): string {
  const action = chosenAction(request);
  const what = request.phase === "arguments" && action !== null
    ? `an arguments request for ${action}`
    : `a ${request.phase} request`;
  return `The answer to ${what}. The \`answer\` field must conform to its schema.`;
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

/** The blocks of the user message, and the block of the second-to-last event when there are two or more. */
function messageBlocks(rest: readonly Section[]): { blocks: TextBlock[]; breakpoints: number[] } {
  const blocks: TextBlock[] = [];
  const breakpoints: number[] = [];
  for (const section of rest) {
    const texts = renderSectionBlocks(section);
    if (section.section === "events" && texts.length >= 2) breakpoints.push(blocks.length + texts.length - 2);
    for (const text of texts) blocks.push({ type: "text", text });
  }
  // The API rejects an empty user turn; a TurnRequest always has candidates, so this is only a guard.
  if (blocks.length === 0) blocks.push({ type: "text", text: "Answer now." });
  return { blocks, breakpoints };
}

export function convertToAnthropicRequest(
  request: TurnRequest,
  { model, maxTokens, tools: sent = [] }: {
    model: string;
    maxTokens: number;
    /** The `tools` of the previous body this adapter sent; the new body keeps them, in order, and adds its own. */
    tools?: readonly AnthropicTool[];
  },
): { body: AnthropicRequestBody; aliases: KeyAliases } {
  const { prefix, rest } = splitPrefix(request.sections);
  const system = systemBlocks(prefix);
  const content = messageBlocks(rest);
  // The latest markers are the ones worth keeping should a request ever have more than the API allows.
  const marked = [
    ...system.breakpoints.map((i) => system.blocks[i]),
    ...content.breakpoints.map((i) => content.blocks[i]),
  ].slice(-MAX_CACHE_BREAKPOINTS);
  for (const block of marked) block.cache_control = { type: "ephemeral" };

  const { schema, aliases } = encodePropertyKeys(wrapResponseSchema(request.response_schema));
  const tool: AnthropicTool = {
    name: anthropicToolName(request),
    description: toolDescription(request),
    input_schema: schema,
  };
  const body: AnthropicRequestBody = {
    model,
    max_tokens: maxTokens,
    ...(system.blocks.length > 0 ? { system: system.blocks } : {}),
    messages: [{ role: "user", content: content.blocks }],
    tools: withTool(sent, tool),
    tool_choice: { type: "tool", name: tool.name },
  };
  return { body, aliases };
}
