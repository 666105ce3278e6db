// The OpenAI Chat Completions adapter, also used for OpenAI-compatible local servers (Ollama, vLLM, llama.cpp):
// pure converters around one POST {base}/chat/completions, retried.
import { convertOpenAIResponse } from "./convert-openai-response.ts";
import { convertToOpenAIRequest } from "./convert-to-openai-request.ts";
import { openaiCacheLayout } from "../cache-layout.ts";
import { enforcesSchema } from "../answer-mode.ts";
import { markOpenRouterCache } from "../openrouter/mark-openrouter-cache.ts";
import { OUTPUT_CAP_MAX, outputCapOf } from "./output-cap.ts";
import type { ResponseFormatMode } from "../call-options.ts";
import type { CompleteOptions, ModelAnswer, Provider, ServerContext, TurnRequest } from "../../vocabulary/turn.ts";
import type { HttpOptions } from "../http/post-json.ts";
import { readServerContext } from "./read-server-context.ts";
import { sendJson } from "../http/send-json.ts";

export function createOpenAIProvider(
  {
    kind,
    apiKey,
    keyEnv,
    baseUrl,
    model,
    maxTokens,
    responseFormat = "json_schema",
    effort,
    cacheKey = kind === "openai" ? `loom-${crypto.randomUUID()}` : undefined,
    cacheMarkers = false,
    local = false,
  }: {
    kind: "openai" | "openai-compatible" | "openrouter";
    /** null: the server takes no key and no authorization header is sent */
    apiKey: string | null;
    keyEnv: string | null;
    baseUrl: string;
    model: string;
    maxTokens?: number;
    responseFormat?: ResponseFormatMode;
    /** reasoning_effort, where set. */
    effort?: string;
    /** prompt_cache_key (OpenAI only): one per provider, so one per run. */
    cacheKey?: string;
    /** OpenRouter: mark the prefix with cache_control (a model whose table entry has explicit breakpoints). */
    cacheMarkers?: boolean;
    /**
     * A model on a local server (the model table's `local`): each call's output is capped to what its answer needs
     * (lib/providers/openai/output-cap.ts), the server's prompt cache is read from its counters, and its context can be
     * asked (serverContext).
     */
    local?: boolean;
  },
  http: HttpOptions = {},
): Provider {
  const base = baseUrl.replace(/\/+$/, "");
  const url = `${base}/chat/completions`;
  const provider = kind === "openai"
    ? "OpenAI API"
    : kind === "openrouter"
    ? "OpenRouter API"
    : `OpenAI-compatible server at ${base}`;
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  let context: Promise<ServerContext | null> | null = null;
  return {
    name: kind,
    capabilities: {
      // OpenAI caches a stable prefix automatically, and so does llama.cpp's server (cached_tokens, cache_n); other
      // local servers differ, and a server that reports nothing leaves the counters null.
      prompt_caching: kind === "openai" || cacheMarkers || local,
      schema_enforcement: enforcesSchema(responseFormat),
    },
    ...(local
      ? {
        serverContext: (
          { signal }: { signal?: AbortSignal } = {},
        ) => (context ??= readServerContext({ baseUrl, model, headers, fetch: http.fetch, signal }).then((read) =>
          read && { context_tokens: read.tokens, output_tokens: maxTokens ?? OUTPUT_CAP_MAX, source: read.source }
        )),
      }
      : {}),
    complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
      const id = model || options.model;
      const { body: plain, wrapped } = convertToOpenAIRequest(request, {
        model: id,
        responseFormat,
        maxTokens: local
          ? outputCapOf(request, {
            ...(options.maxOutputTokens === undefined ? {} : { needs: options.maxOutputTokens }),
            ...(maxTokens === undefined ? {} : { configured: maxTokens }),
          })
          : maxTokens,
        maxTokensField: kind === "openai" ? "max_completion_tokens" : "max_tokens",
        effort,
        cacheKey,
      });
      const body = cacheMarkers ? markOpenRouterCache(request, plain) : plain;
      const cache = kind === "openai" ? openaiCacheLayout(request, plain) : undefined;
      return sendJson(url, {
        provider,
        headers,
        body,
        keyEnv,
        secret: apiKey,
        signal: options.signal,
        convert: (raw) => {
          const answer = convertOpenAIResponse(raw, { wrapped, schema: request.response_schema, provider });
          return cache ? { ...answer, cache } : answer;
        },
      }, http);
    },
  };
}
