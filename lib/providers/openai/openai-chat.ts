// What the OpenAI API adds to the Chat Completions adapter: its name in errors, max_completion_tokens (its reasoning
// models reject max_tokens), and its automatic prefix cache, routed by a prompt_cache_key per run and laid out for the
// run report.
import type { ChatCompletionsKind } from "../chat-completions.ts";
import { openaiCacheLayout } from "./openai-cache-layout.ts";

export const OPENAI_CHAT: ChatCompletionsKind = {
  serverName: () => "OpenAI API",
  maxTokensField: "max_completion_tokens",
  automaticCache: (request, body) => openaiCacheLayout(request, body),
  markCache: null,
};
