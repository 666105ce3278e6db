// The Anthropic Messages API adapter: pure converters around one POST /v1/messages, retried.
import { convertAnthropicResponse } from "../../providers/convert-anthropic-response.ts";
import { convertToAnthropicRequest } from "../../providers/convert-to-anthropic-request.ts";
import type { CacheTtl } from "../../providers/provider-config.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../../vocabulary/turn.ts";
import { DEFAULT_DEADLINE_MS, type HttpOptions, postJson } from "./post-json.ts";
import { withRetry } from "./retry.ts";

const ANTHROPIC_VERSION = "2023-06-01";
const PROVIDER = "Anthropic API";

export function createAnthropicProvider(
  { apiKey, keyEnv, baseUrl, model, maxTokens, cacheTtl }: {
    apiKey: string;
    keyEnv: string;
    baseUrl: string;
    model: string;
    maxTokens: number;
    /** The prompt cache's lifetime: 5m (default) or 1h. */
    cacheTtl?: CacheTtl;
  },
  { fetch, sleep, random, timeoutMs, deadlineMs = DEFAULT_DEADLINE_MS, maxResponseBytes, maxAttempts, now = Date.now }:
    HttpOptions = {},
): Provider {
  const url = `${baseUrl.replace(/\/+$/, "")}/v1/messages`;
  return {
    name: "anthropic",
    capabilities: { prompt_caching: true, schema_enforcement: true },
    complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
      const { body, aliases } = convertToAnthropicRequest(request, {
        model: model || options.model,
        maxTokens,
        cacheTtl,
      });
      const headers = { "x-api-key": apiKey, "anthropic-version": ANTHROPIC_VERSION };
      const deadlineAt = now() + deadlineMs;
      return withRetry(
        async () => {
          const raw = await postJson(url, {
            provider: PROVIDER,
            headers,
            body,
            keyEnv,
            secret: apiKey,
            fetch,
            signal: options.signal,
            timeoutMs,
            deadlineAt,
            deadlineMs,
            maxResponseBytes,
            now,
          });
          return convertAnthropicResponse(raw, { aliases, provider: PROVIDER });
        },
        { maxAttempts, sleep, random, signal: options.signal, deadlineAt, now },
      );
    },
  };
}
