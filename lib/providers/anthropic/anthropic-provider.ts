// The Anthropic Messages API adapter: pure converters around one POST /v1/messages, retried.
import { convertAnthropicResponse } from "./convert-anthropic-response.ts";
import { convertToAnthropicRequest, DEFAULT_CACHE_PLAN } from "./convert-to-anthropic-request.ts";
import { anthropicCacheLayout } from "./anthropic-cache-layout.ts";
import { ANSWER_MODES, enforcesSchema } from "../answer-mode.ts";
import { CacheTtlChooser } from "./choose-cache-ttl.ts";
import type { CacheTtl } from "../call-options.ts";
import type { StructuredOutput, ThinkingType } from "../../models/models.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../../vocabulary/turn.ts";
import type { HttpOptions } from "../http/post-json.ts";
import { sendJson } from "../http/send-json.ts";

// API version 2026-10-21 (the first since 2023-06-01; the SDKs of that day send it) rejects temperature, top_p and
// top_k, document blocks in assistant messages and citations on user text blocks — none of which Loom sends
// (platform.claude.com/docs/en/api/versioning, read 2026-12-01; @anthropic-ai/sdk 1.15.0 sends the same header).
const ANTHROPIC_VERSION = "2026-10-21";
const PROVIDER = "Anthropic API";

export function createAnthropicProvider(
  {
    apiKey,
    keyEnv,
    baseUrl,
    model,
    maxTokens,
    cacheTtl = "5m",
    minCacheTokens = DEFAULT_CACHE_PLAN.minTokens,
    structuredOutput,
    effort,
    thinking,
  }: {
    apiKey: string;
    keyEnv: string;
    baseUrl: string;
    model: string;
    maxTokens: number;
    /** The prompt cache's lifetime: 5m (default), 1h, or auto (from the run's pace: CacheTtlChooser). */
    cacheTtl?: CacheTtl | "auto";
    /** The model's minimum cacheable prompt in tokens (the model table's cache rules; default 1,024). */
    minCacheTokens?: number;
    /** How the model table says a structured answer is obtained. */
    structuredOutput?: StructuredOutput;
    effort?: string;
    thinking?: ThinkingType;
  },
  http: HttpOptions = {},
): Provider {
  const url = `${baseUrl.replace(/\/+$/, "")}/v1/messages`;
  const now = http.now ?? Date.now;
  const answerMode = ANSWER_MODES.messages[structuredOutput ?? "prompt"];
  // One provider per run, so the chooser sees the run's own calls.
  const chooser = cacheTtl === "auto" ? new CacheTtlChooser() : null;
  return {
    name: "anthropic",
    capabilities: { prompt_caching: true, schema_enforcement: enforcesSchema(answerMode) },
    async complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
      const ttl = chooser ? chooser.ttl() : cacheTtl as CacheTtl;
      const sentAt = now();
      const { body, aliases } = convertToAnthropicRequest(request, {
        model: model || options.model,
        maxTokens,
        cache: { minTokens: minCacheTokens, ttl },
        answerMode,
        effort,
        thinking,
      });
      const cache = anthropicCacheLayout(request, body, { minTokens: minCacheTokens, ttl });
      const headers = { "x-api-key": apiKey, "anthropic-version": ANTHROPIC_VERSION };
      const answer = await sendJson(url, {
        provider: PROVIDER,
        headers,
        body,
        keyEnv,
        secret: apiKey,
        signal: options.signal,
        convert: (raw) => ({ ...convertAnthropicResponse(raw, { aliases, provider: PROVIDER }), cache }),
      }, http);
      chooser?.observe({ at: sentAt, usage: answer.usage });
      return answer;
    },
  };
}
