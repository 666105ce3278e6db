// Token usage as another agent logged it, mapped to Loom's four counters by the same converters live providers use,
// so imported and live runs count alike (null where the log says nothing, never 0).
import { convertAnthropicUsage } from "../../providers/anthropic/convert-anthropic-usage.ts";
import { convertOpenAIUsage } from "../../providers/openai/convert-openai-usage.ts";
import { tokenCount } from "../../providers/token-count.ts";
import { NULL_USAGE, type Usage } from "../../vocabulary/turn.ts";
import { isRecord } from "./source.ts";

/**
 * OpenAI usage (Chat Completions `prompt_tokens`, with `cached_tokens` in the details, and the cache counters litellm
 * adds for Anthropic models), Anthropic usage (input_tokens beside cache_read_input_tokens /
 * cache_creation_input_tokens), OpenAI Responses usage (`input_tokens`), LangChain's `usage_metadata`
 * (`input_token_details.cache_read` / `cache_creation`) or Gemini's `usageMetadata` counts; anything else is all null.
 * Like the live converters, `input` leaves out what was read from or written to the cache, wherever the log counts
 * those inside its prompt total.
 */
export function convertUsage(raw: unknown): Usage {
  if (!isRecord(raw)) return NULL_USAGE;
  if ("prompt_tokens" in raw || "completion_tokens" in raw) {
    // OpenAI-shaped; litellm adds Anthropic's cache counters beside prompt_tokens (which then includes them).
    const usage = convertOpenAIUsage(raw);
    const cacheWrite = tokenCount(raw.cache_creation_input_tokens);
    const litellmRead = usage.cache_read === null ? tokenCount(raw.cache_read_input_tokens) : null;
    return {
      ...usage,
      input: withoutCache(usage.input, litellmRead, cacheWrite),
      cache_read: usage.cache_read ?? litellmRead,
      cache_write: cacheWrite,
    };
  }
  if ("cache_read_input_tokens" in raw || "cache_creation_input_tokens" in raw) return convertAnthropicUsage(raw);
  if (isRecord(raw.input_token_details)) {
    // LangChain counts cached tokens inside input_tokens, as OpenAI does.
    const details = raw.input_token_details;
    const cacheRead = tokenCount(details.cache_read);
    const cacheWrite = tokenCount(details.cache_creation);
    return {
      input: withoutCache(tokenCount(raw.input_tokens), cacheRead, cacheWrite),
      cache_read: cacheRead,
      cache_write: cacheWrite,
      output: tokenCount(raw.output_tokens),
    };
  }
  if ("promptTokenCount" in raw || "candidatesTokenCount" in raw) {
    const cacheRead = tokenCount(raw.cachedContentTokenCount);
    return {
      input: withoutCache(tokenCount(raw.promptTokenCount), cacheRead, null),
      cache_read: cacheRead,
      cache_write: null,
      output: tokenCount(raw.candidatesTokenCount),
    };
  }
  return convertOpenAIUsage(raw);
}

/** A prompt total minus the cache counters it includes. */
function withoutCache(total: number | null, read: number | null, write: number | null): number | null {
  return total === null ? null : Math.max(0, total - (read ?? 0) - (write ?? 0));
}
