// Token usage as another agent logged it, mapped to Loom's four counters by the same converters live providers use,
// so imported and live runs count alike (null where the log says nothing, never 0).
import { convertAnthropicUsage } from "../providers/convert-anthropic-usage.ts";
import { convertOpenAIUsage } from "../providers/convert-openai-usage.ts";
import { NULL_USAGE, type Usage } from "../turn.ts";
import { isRecord } from "./source.ts";

/**
 * Anthropic usage (it has cache_read_input_tokens / cache_creation_input_tokens) or OpenAI usage (Chat Completions
 * `prompt_tokens` or Responses `input_tokens`, with `cached_tokens` in the details); anything else is all null.
 */
export function convertUsage(raw: unknown): Usage {
  if (!isRecord(raw)) return NULL_USAGE;
  if ("cache_read_input_tokens" in raw || "cache_creation_input_tokens" in raw) return convertAnthropicUsage(raw);
  return convertOpenAIUsage(raw);
}
