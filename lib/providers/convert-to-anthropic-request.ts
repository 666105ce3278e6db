// TurnRequest -> Anthropic Messages API body. The prefix sections (instructions, intent, checkpoint) are the system
// blocks, with the cache breakpoint on the last one; the other sections are the blocks of one user message. The
// answer is forced through a single tool whose input wraps the response schema.
import type { TurnRequest } from "../turn.ts";
import { encodePropertyKeys, type KeyAliases } from "./encode-property-keys.ts";
import { renderSection, splitPrefix } from "./render-sections.ts";
import { wrapResponseSchema } from "./wrap-response-schema.ts";

export const ANTHROPIC_TOOL_NAME = "answer";
const TOOL_DESCRIPTION = "Give your answer. The `answer` field must conform to its schema.";

type TextBlock = { type: "text"; text: string; cache_control?: { type: "ephemeral" } };

export type AnthropicRequestBody = {
  model: string;
  max_tokens: number;
  system?: TextBlock[];
  messages: [{ role: "user"; content: TextBlock[] }];
  tools: [{ name: string; description: string; input_schema: Record<string, unknown> }];
  tool_choice: { type: "tool"; name: string };
};

export function convertToAnthropicRequest(
  request: TurnRequest,
  { model, maxTokens }: { model: string; maxTokens: number },
): { body: AnthropicRequestBody; aliases: KeyAliases } {
  const { prefix, rest } = splitPrefix(request.sections);
  const system: TextBlock[] = prefix.map((section) => ({ type: "text", text: renderSection(section) }));
  if (system.length > 0) system[system.length - 1].cache_control = { type: "ephemeral" };
  const content: TextBlock[] = rest.map((section) => ({ type: "text", text: renderSection(section) }));
  // The API rejects an empty user turn; a TurnRequest always has candidates, so this is only a guard.
  if (content.length === 0) content.push({ type: "text", text: "Answer now." });
  const { schema, aliases } = encodePropertyKeys(wrapResponseSchema(request.response_schema));
  const body: AnthropicRequestBody = {
    model,
    max_tokens: maxTokens,
    ...(system.length > 0 ? { system } : {}),
    messages: [{ role: "user", content }],
    tools: [{ name: ANTHROPIC_TOOL_NAME, description: TOOL_DESCRIPTION, input_schema: schema }],
    tool_choice: { type: "tool", name: ANTHROPIC_TOOL_NAME },
  };
  return { body, aliases };
}
