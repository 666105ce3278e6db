// The OpenAI Responses API adapter: pure converters around one POST {base}/responses, retried. Chosen by the model
// table (api "responses"): the GPT-5.6 family, and models served only by this API (gpt-5-codex, the -pro models).
import { openaiResponsesCacheLayout } from "./openai-cache-layout.ts";
import { convertOpenAIResponsesResponse } from "./convert-openai-responses-response.ts";
import { convertToOpenAIResponsesRequest } from "./convert-to-openai-responses-request.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../../vocabulary/turn.ts";
import type { HttpOptions } from "../http/post-json.ts";
import { sendJson } from "../http/send-json.ts";

const PROVIDER = "OpenAI API";

export function createOpenAIResponsesProvider(
  { apiKey, keyEnv, baseUrl, model, maxTokens, effort, explicitCache, cacheKey = `loom-${crypto.randomUUID()}` }: {
    apiKey: string | null;
    keyEnv: string | null;
    baseUrl: string;
    model: string;
    maxTokens?: number;
    effort?: string;
    /** The model takes prompt_cache_breakpoint marks. */
    explicitCache?: boolean;
    /** prompt_cache_key: one per provider, so one per run (a run makes its own provider). */
    cacheKey?: string;
  },
  http: HttpOptions = {},
): Provider {
  const url = `${baseUrl.replace(/\/+$/, "")}/responses`;
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  return {
    name: "openai",
    capabilities: { prompt_caching: true, schema_enforcement: true },
    complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
      const body = convertToOpenAIResponsesRequest(request, {
        model: model || options.model,
        cacheKey,
        effort,
        maxTokens,
        explicitCache,
      });
      // What the prompt cache sees of this body, without its text: the run report's cache explanation.
      const cache = openaiResponsesCacheLayout(request, body);
      return sendJson(url, {
        provider: PROVIDER,
        headers,
        body,
        keyEnv,
        secret: apiKey,
        signal: options.signal,
        convert: (raw) => ({
          ...convertOpenAIResponsesResponse(raw, { schema: request.response_schema, provider: PROVIDER }),
          cache,
        }),
      }, http);
    },
  };
}
