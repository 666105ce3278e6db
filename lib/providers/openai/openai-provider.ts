// The Chat Completions adapter of every kind that speaks it (OpenAI's own API, OpenAI-compatible local servers such as
// Ollama, vLLM, llama.cpp, and OpenRouter): pure converters around one POST {base}/chat/completions, retried. What
// differs by kind (its name in errors, the output cap's field, its prompt cache) is the ChatCompletionsKind its folder
// hands over (lib/providers/chat-completions.ts); nothing here names a kind.
import { convertOpenAIResponse } from "./convert-openai-response.ts";
import { convertToOpenAIRequest } from "./convert-to-openai-request.ts";
import { enforcesSchema } from "../answer-mode.ts";
import type { ChatCompletionsKind } from "../chat-completions.ts";
import { OUTPUT_CAP_MAX, outputCapOf } from "./output-cap.ts";
import type { ResponseFormatMode } from "../call-options.ts";
import type { CompleteOptions, ModelAnswer, Provider, ServerContext, TurnRequest } from "../../vocabulary/turn.ts";
import type { HttpOptions } from "../http/post-json.ts";
import { readServerContext } from "./read-server-context.ts";
import { sendJson } from "../http/send-json.ts";

export function createOpenAIProvider(
  {
    name,
    chat,
    apiKey,
    keyEnv,
    baseUrl,
    model,
    maxTokens,
    responseFormat = "json_schema",
    effort,
    cacheKey = chat.automaticCache ? `loom-${crypto.randomUUID()}` : undefined,
    cacheMarkers = false,
    local = false,
  }: {
    /** The provider's name: its kind. */
    name: string;
    /** What the kind adds: its name in errors, the output cap's field, its prompt cache. */
    chat: ChatCompletionsKind;
    /** null: the server takes no key and no authorization header is sent */
    apiKey: string | null;
    keyEnv: string | null;
    baseUrl: string;
    model: string;
    maxTokens?: number;
    responseFormat?: ResponseFormatMode;
    /** reasoning_effort, where set. */
    effort?: string;
    /** prompt_cache_key (a kind with an automatic cache): one per provider, so one per run. */
    cacheKey?: string;
    /** Mark the prefix with the kind's cache markers (a model whose table entry has explicit breakpoints). */
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
  const provider = chat.serverName(base);
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  let context: Promise<ServerContext | null> | null = null;
  return {
    name,
    capabilities: {
      // OpenAI caches a stable prefix automatically, and so does llama.cpp's server (cached_tokens, cache_n); other
      // local servers differ, and a server that reports nothing leaves the counters null.
      prompt_caching: chat.automaticCache !== null || (cacheMarkers && chat.markCache !== null) || local,
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
        maxTokensField: chat.maxTokensField,
        effort,
        cacheKey,
      });
      const body = cacheMarkers && chat.markCache ? chat.markCache(request, plain) : plain;
      const cache = chat.automaticCache?.(request, plain);
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
