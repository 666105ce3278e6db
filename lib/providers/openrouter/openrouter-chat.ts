// What OpenRouter adds to the Chat Completions adapter: its name in errors, max_tokens, and Anthropic's cache markers
// for a routed model whose entry has explicit breakpoints (mark-openrouter-cache.ts).
import type { ChatCompletionsKind } from "../chat-completions.ts";
import { markOpenRouterCache } from "./mark-openrouter-cache.ts";

export const OPENROUTER_CHAT: ChatCompletionsKind = {
  serverName: () => "OpenRouter API",
  maxTokensField: "max_tokens",
  automaticCache: null,
  markCache: markOpenRouterCache,
};
