// What a local OpenAI-compatible server (llama.cpp, vLLM, Ollama's /v1, …) adds to the Chat Completions adapter: it is
// named by its base URL, takes max_tokens, and its prompt cache, where it has one, is read from its own counters (the
// model table's `local`).
import type { ChatCompletionsKind } from "../chat-completions.ts";

export const OPENAI_COMPATIBLE_CHAT: ChatCompletionsKind = {
  serverName: (base) => `OpenAI-compatible server at ${base}`,
  maxTokensField: "max_tokens",
  automaticCache: null,
  markCache: null,
};
