// Anthropic usage -> our four counters. input_tokens counts only the input after the last cache breakpoint, so
// input, cache_read and cache_write are disjoint; their sum is the whole prompt. Missing means null, never 0.
import type { Usage } from "../../vocabulary/turn.ts";
import { tokenCount } from "../token-count.ts";

export function convertAnthropicUsage(usage: unknown): Usage {
  const u = (usage !== null && typeof usage === "object" ? usage : {}) as Record<string, unknown>;
  // cache_creation splits the writes by lifetime; the 1-hour ones cost 2x input, not 1.25x (pricing page).
  const creation = u.cache_creation !== null && typeof u.cache_creation === "object"
    ? (u.cache_creation as Record<string, unknown>)
    : {};
  const hour = tokenCount(creation.ephemeral_1h_input_tokens);
  return {
    input: tokenCount(u.input_tokens),
    cache_read: tokenCount(u.cache_read_input_tokens),
    cache_write: tokenCount(u.cache_creation_input_tokens),
    output: tokenCount(u.output_tokens),
    ...(hour ? { cache_write_1h: hour } : {}),
  };
}
