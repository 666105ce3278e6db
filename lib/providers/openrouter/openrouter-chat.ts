// What OpenRouter adds to the Chat Completions adapter in code: Anthropic's cache markers for a routed model whose
// entry has explicit breakpoints (mark-openrouter-cache.ts); its name and output cap's field are its PROVIDER_KINDS
// facts.
import type { ChatCompletionsHooks } from "../chat-completions.ts";
import { markOpenRouterCache } from "./mark-openrouter-cache.ts";

export const OPENROUTER_CHAT_HOOKS: ChatCompletionsHooks = { markCache: markOpenRouterCache };
