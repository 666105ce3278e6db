// Stand-ins for the providers' prompt caches: given the body Loom built, the usage counters the API would report, by
// the documented rules (read 2026-12-01). Anthropic (platform.claude.com/docs/en/build-with-claude/prompt-caching):
// tools -> system -> messages hashed in order; an entry is written at each cache_control breakpoint whose prefix
// reaches the model's minimum; a breakpoint reads the longest entry ending at it or within the 20 blocks before it;
// entries live 5 minutes (1 hour) from their last use; usage is input_tokens (after the cache),
// cache_creation_input_tokens and cache_read_input_tokens. OpenAI (developers.openai.com/docs/guides/prompt-caching):
// the longest prefix shared with a recent request, from 1,024 tokens in 128-token steps, reported as
// prompt_tokens_details.cached_tokens inside prompt_tokens. Tokens here are UTF-8 bytes / 4.
import type { AnthropicRequestBody } from "../../lib/providers/anthropic/convert-to-anthropic-request.ts";
import type { ChatCompletionsBody } from "../../lib/providers/chat-completions.ts";
import { convertToAnthropicRequest } from "../../lib/providers/anthropic/convert-to-anthropic-request.ts";
import { convertToOpenAIRequest } from "../../lib/providers/openai/convert-to-openai-request.ts";
import { anthropicCacheLayout } from "../../lib/providers/anthropic/anthropic-cache-layout.ts";
import { openaiCacheLayout } from "../../lib/providers/openai/openai-cache-layout.ts";
import { convertAnthropicUsage } from "../../lib/providers/anthropic/convert-anthropic-usage.ts";
import { convertOpenAIUsage } from "../../lib/providers/openai/convert-openai-usage.ts";
import { utf8Length } from "../../lib/text/digest.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../../lib/vocabulary/turn.ts";

const tokens = (bytes: number) => Math.round(bytes / 4);
const LOOKBACK = 20;

export type AnthropicStandIn = {
  usage(body: AnthropicRequestBody, now: number): Record<string, number>;
};

/**
 * An Anthropic prompt cache. `ignore(call, breakpoint)` makes it skip a breakpoint (the n-th marker of the call, from
 * 0), as a provider that does not honour it would.
 */
export function anthropicCache(
  { minTokens = 1024, ignore = () => false }: {
    minTokens?: number;
    ignore?: (call: number, breakpoint: number) => boolean;
  } = {},
): AnthropicStandIn {
  const entries = new Map<string, number>();
  let call = 0;
  return {
    usage(body, now) {
      const texts = [
        JSON.stringify(body.tools),
        ...(body.system ?? []).map((b) => b.text),
        `\u0000${JSON.stringify(body.tool_choice)}`,
        ...body.messages[0].content.map((b) => b.text),
      ];
      const marks = [
        false,
        ...(body.system ?? []).map((b) => b.cache_control),
        false,
        ...body.messages[0].content.map((b) => b.cache_control),
      ];
      const ttlMs = (marks.find((m) => m && typeof m === "object" && m.ttl === "1h") ? 60 : 5) * 60_000;
      const keys: string[] = [];
      const ends: number[] = [];
      let key = "";
      let end = 0;
      texts.forEach((text, i) => {
        key += `${text.length}:${text}`;
        // tool_choice is hashed but has no tokens
        end += i === (body.system ?? []).length + 1 ? 0 : utf8Length(text);
        keys.push(key);
        ends.push(end);
      });
      let readEnd = 0;
      let writeEnd = 0;
      let n = -1;
      // A request reads what earlier requests wrote, never its own breakpoints: writes land after every read.
      const writes: string[] = [];
      marks.forEach((mark, i) => {
        if (!mark) return;
        n += 1;
        if (ignore(call, n)) return;
        for (let j = i; j >= Math.max(0, i - LOOKBACK); j--) {
          const at = entries.get(keys[j]);
          if (at !== undefined && now - at <= ttlMs) {
            readEnd = Math.max(readEnd, ends[j]);
            entries.set(keys[j], now);
            break;
          }
        }
        if (tokens(ends[i]) >= minTokens) {
          writes.push(keys[i]);
          writeEnd = Math.max(writeEnd, ends[i]);
        }
      });
      for (const k of writes) entries.set(k, now);
      call += 1;
      const read = tokens(readEnd);
      const written = Math.max(0, tokens(writeEnd) - read);
      return {
        input_tokens: tokens(end) - read - written,
        cache_creation_input_tokens: written,
        cache_read_input_tokens: read,
        output_tokens: 50,
      };
    },
  };
}

export type OpenAIStandIn = { usage(body: ChatCompletionsBody): Record<string, unknown> };

/** OpenAI's automatic cache over the last 16 requests of one prompt_cache_key. */
export function openaiCache({ recent = 16 }: { recent?: number } = {}): OpenAIStandIn {
  const seen = new Map<string, string[]>();
  return {
    usage(body) {
      const text = `${JSON.stringify(body.response_format ?? null)}\u0000${
        body.messages.map((m) => m.content).join("\u0000")
      }`;
      const list = seen.get(body.prompt_cache_key ?? "") ?? [];
      let shared = 0;
      for (const earlier of list) {
        let i = 0;
        while (i < text.length && i < earlier.length && text.charCodeAt(i) === earlier.charCodeAt(i)) i++;
        shared = Math.max(shared, utf8Length(text.slice(0, i)));
      }
      list.push(text);
      if (list.length > recent) list.shift();
      seen.set(body.prompt_cache_key ?? "", list);
      const sharedTokens = tokens(shared);
      const cached = sharedTokens < 1024 ? 0 : 1024 + Math.floor((sharedTokens - 1024) / 128) * 128;
      return {
        prompt_tokens: tokens(utf8Length(text)),
        completion_tokens: 50,
        prompt_tokens_details: { cached_tokens: cached },
      };
    },
  };
}

/**
 * A provider whose answers come from `inner` (a recording's scripted provider) and whose usage and cache layout come
 * from the body the Anthropic or OpenAI adapter would send, priced by a stand-in cache: what the HTTP adapters return,
 * without the HTTP.
 */
export function cachingProvider(
  inner: Provider,
  { kind, cache, now, minTokens = 1024, ttl = "5m" }:
    | {
      kind: "anthropic";
      cache: AnthropicStandIn;
      now: () => number;
      minTokens?: number;
      ttl?: "5m" | "1h";
    }
    | { kind: "openai"; cache: OpenAIStandIn; now: () => number; minTokens?: number; ttl?: "5m" | "1h" },
): Provider {
  return {
    name: kind,
    capabilities: { prompt_caching: true, schema_enforcement: true },
    async complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
      const answer = await inner.complete(request, options);
      if (kind === "anthropic") {
        const { body } = convertToAnthropicRequest(request, {
          model: "m",
          maxTokens: 1024,
          cache: { minTokens, ttl },
        });
        const usage = convertAnthropicUsage((cache as AnthropicStandIn).usage(body, now()));
        return { ...answer, usage, cache: anthropicCacheLayout(request, body, { minTokens, ttl }) };
      }
      const { body } = convertToOpenAIRequest(request, { model: "m", cacheKey: "run" });
      const usage = convertOpenAIUsage((cache as OpenAIStandIn).usage(body));
      return { ...answer, usage, cache: openaiCacheLayout(request, body) };
    },
  };
}
