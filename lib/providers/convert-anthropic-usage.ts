// Anthropic usage -> our four counters. input_tokens counts only the input after the last cache breakpoint, so
// input, cache_read and cache_write are disjoint; their sum is the whole prompt. Missing means null, never 0.
import type { Usage } from "../vocabulary/turn.ts";
import { tokenCount } from "./token-count.ts";

export function convertAnthropicUsage(usage: unknown): Usage {
  const u = (usage !== null && typeof usage === "object" ? usage : {}) as Record<string, unknown>;
  return {
    input: tokenCount(u.input_tokens),
    cache_read: tokenCount(u.cache_read_input_tokens),
    cache_write: tokenCount(u.cache_creation_input_tokens),
    output: tokenCount(u.output_tokens),
  };
}
