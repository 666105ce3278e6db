// What the OpenAI API adds to the Chat Completions adapter in code: its automatic prefix cache, routed by a
// prompt_cache_key per run and laid out for the run report (its name and output cap's field are its PROVIDER_KINDS
// facts).
import type { ChatCompletionsHooks } from "../chat-completions.ts";
import { openaiCacheLayout } from "./openai-cache-layout.ts";

export const OPENAI_CHAT_HOOKS: ChatCompletionsHooks = {
  automaticCache: (request, body) => openaiCacheLayout(request, body),
};
