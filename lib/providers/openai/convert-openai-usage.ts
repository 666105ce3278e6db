// OpenAI usage -> our four counters. prompt_tokens INCLUDES the cached tokens, so `input` is prompt_tokens minus
// cached_tokens: like Anthropic's, it counts the input read without the cache, and the four counters never overlap
// (the raw body keeps prompt_tokens). Cache writes are read where reported (GPT-5.6+), else null. Chat Completions names
// (prompt_tokens, completion_tokens) and Responses names (input_tokens, output_tokens) are both read, so servers
// speaking either dialect map. Missing means null, never 0.
import type { ServerTimings, Usage } from "../../vocabulary/turn.ts";
import { tokenCount } from "../token-count.ts";

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
}

export function convertOpenAIUsage(usage: unknown, { timings }: { timings?: unknown } = {}): Usage {
  const u = record(usage);
  const details = record(u.prompt_tokens_details ?? u.input_tokens_details);
  // llama.cpp's server reports prompt-cache reuse only in its timings (cache_n) on older builds.
  const cacheN = tokenCount(record(timings).cache_n);
  const prompt = tokenCount(u.prompt_tokens ?? u.input_tokens);
  const cacheRead = tokenCount(details.cached_tokens) ?? cacheN;
  // GPT-5.6 and later report the tokens written to the cache (cache_write_tokens, in both APIs) and bill them at
  // 1.25x input (developers.openai.com/api/docs/guides/prompt-caching, read 2026-12-01): they leave `input`, so each
  // token is counted once, at its own price.
  const cacheWrite = tokenCount(details.cache_write_tokens);
  return {
    input: prompt === null ? null : Math.max(0, prompt - (cacheRead ?? 0) - (cacheWrite ?? 0)),
    cache_read: cacheRead,
    cache_write: cacheWrite,
    output: tokenCount(u.completion_tokens ?? u.output_tokens),
  };
}

/**
 * llama.cpp's timings block (prompt_n evaluated, cache_n reused, prompt_ms, predicted_n, predicted_ms) as the report
 * keeps it; null when the server sent none or a field is missing (a partial block would mislead more than none).
 */
export function convertServerTimings(timings: unknown): ServerTimings | null {
  const t = record(timings);
  const counts = [t.prompt_n, t.cache_n, t.predicted_n].map(tokenCount);
  const times = [t.prompt_ms, t.predicted_ms].map((
    v,
  ) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null));
  const [prompt_n, cache_n, predicted_n] = counts;
  const [prompt_ms, predicted_ms] = times;
  if (prompt_n == null || cache_n == null || predicted_n == null || prompt_ms == null || predicted_ms == null) {
    return null;
  }
  // Milliseconds to the microsecond: the server sends doubles such as 12.345678901.
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return { prompt_n, cache_n, prompt_ms: round(prompt_ms), predicted_n, predicted_ms: round(predicted_ms) };
}
