// Chat Completions, the API several kinds speak (OpenAI's own, a local OpenAI-compatible server, OpenRouter): the body
// its converter writes (lib/providers/openai/convert-to-openai-request.ts) and what each kind adds to the one adapter
// (lib/providers/openai/openai-provider.ts): its name and output cap's field from its PROVIDER_KINDS facts, and the
// code its folder hands over, if any (openai/openai-chat.ts, openrouter/openrouter-chat.ts), through
// lib/run/create-provider.ts. Nothing here names a kind.
import type { CacheLayout, TurnRequest } from "../vocabulary/turn.ts";

/** A Chat Completions request body as Loom sends it. */
export type ChatCompletionsBody = {
  model: string;
  messages: { role: "system" | "user"; content: string }[];
  response_format?:
    | { type: "json_schema"; json_schema: { name: string; schema: Record<string, unknown>; strict: boolean } }
    | { type: "json_object" };
  max_tokens?: number;
  max_completion_tokens?: number;
  /** OpenAI: routes a run's calls to the same prompt cache (developers.openai.com prompt-caching guide). */
  prompt_cache_key?: string;
  reasoning_effort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";
};

/**
 * What a kind that speaks Chat Completions adds to the one adapter: how it is named, asked and cached (its name and
 * field are its PROVIDER_KINDS facts; the cache's code, if any, its folder's ChatCompletionsHooks).
 */
export type ChatCompletionsKind = {
  /** The server as its errors name it ("OpenAI API"; a local server by its base URL, without trailing slashes). */
  serverName: (base: string) => string;
  /** The field of the output cap: OpenAI's reasoning models reject max_tokens; other servers know only max_tokens. */
  maxTokensField: "max_tokens" | "max_completion_tokens";
  /**
   * The server caches a stable prefix by itself (OpenAI): each run sends its own prompt_cache_key, so its calls reach
   * one cache, and each call's body is laid out for the run report's cache explanation. null: no such cache.
   */
  automaticCache: ((request: TurnRequest, body: ChatCompletionsBody) => CacheLayout) | null;
  /**
   * The body with the cache markers a model whose entry has explicit breakpoints is sent (OpenRouter's Claude
   * models); null: the kind sends none.
   */
  markCache: ((request: TurnRequest, body: ChatCompletionsBody) => unknown) | null;
};

/** The code a kind's folder adds to the Chat Completions adapter (OpenAI's cache layout, OpenRouter's markers). */
export type ChatCompletionsHooks = Partial<Pick<ChatCompletionsKind, "automaticCache" | "markCache">>;
