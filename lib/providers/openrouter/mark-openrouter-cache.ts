// Cache markers for Claude models reached through OpenRouter. OpenRouter passes Anthropic's explicit caching through
// Chat Completions: a content part of a message may carry `cache_control: {"type": "ephemeral"}`, and Anthropic models
// cache only where such a marker is ("some (see Alibaba and Anthropic below) require you to enable it on a
// per-message basis", https://openrouter.ai/docs/guides/best-practices/prompt-caching, read 2026-12-01). Without the
// markers every call pays full input price. Which models take them is the model table's: see routedEntry (lib/models/models.ts). Two of Anthropic's four breakpoints are used: the end of the stable
// prefix (the system message) and the end of the part before the candidates (the events and the working state), so
// a step's second call reads what its first wrote, as on the Anthropic API.
import type { TurnRequest } from "../../vocabulary/turn.ts";
import type { ChatCompletionsBody } from "../chat-completions.ts";
import { renderAnswerFormat, renderSection, splitPrefix } from "../render-sections.ts";

type TextPart = { type: "text"; text: string; cache_control?: { type: "ephemeral" } };
export type MarkedMessage = { role: "system" | "user"; content: TextPart[] };

/**
 * The body with its messages as content parts, the prefix and the part before the candidates each ending in a cache
 * marker. The text is the same as the plain body's (the parts joined by blank lines are its strings).
 */
export function markOpenRouterCache(
  request: TurnRequest,
  body: ChatCompletionsBody,
): Omit<ChatCompletionsBody, "messages"> & { messages: MarkedMessage[] } {
  const marker = { type: "ephemeral" } as const;
  const { prefix, rest } = splitPrefix(request.sections);
  const messages: MarkedMessage[] = [];
  if (prefix.length > 0) {
    messages.push({
      role: "system",
      content: [{ type: "text", text: prefix.map(renderSection).join("\n\n"), cache_control: marker }],
    });
  }
  const cut = rest.findIndex((section) => section.section === "candidates");
  const before = (cut === -1 ? rest : rest.slice(0, cut)).map(renderSection);
  const after = (cut === -1 ? [] : rest.slice(cut)).map(renderSection);
  if (body.response_format === undefined || body.response_format.type !== "json_schema") {
    after.push(renderAnswerFormat(request.response_schema));
  }
  const parts: TextPart[] = [];
  if (before.length > 0) parts.push({ type: "text", text: before.join("\n\n"), cache_control: marker });
  if (after.length > 0) parts.push({ type: "text", text: (before.length > 0 ? "\n\n" : "") + after.join("\n\n") });
  if (parts.length === 0) parts.push({ type: "text", text: "Answer now." });
  messages.push({ role: "user", content: parts });
  return { ...body, messages };
}
