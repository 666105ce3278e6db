// Ollama's non-streamed /api/chat answer -> ModelAnswer (ollama docs/api.md "Chat request (Structured outputs)", read
// 2026-12-01): message.content holds the JSON text, prompt_eval_count the prompt tokens, eval_count the output tokens,
// done_reason "stop" or "length". Ollama reports no cache counters: cache_read and cache_write are null.
import { z } from "zod";
import type { ModelAnswer, StopReason } from "../../vocabulary/turn.ts";
import { formatZodError } from "../../text/zod-error.ts";
import { malformedResponse } from "../malformed-response.ts";
import { parseAnswerText, unwrapAnswer } from "../parse-answer.ts";
import { tokenCount } from "../token-count.ts";

const OllamaResponse = z.looseObject({
  message: z.looseObject({ content: z.string() }),
  done_reason: z.string().nullable().optional(),
  prompt_eval_count: z.unknown().optional(),
  eval_count: z.unknown().optional(),
});

const STOP: Record<string, StopReason> = { stop: "end", length: "max_tokens" };

export function convertOllamaResponse(
  raw: unknown,
  { provider }: { provider: string },
): ModelAnswer {
  const parsed = OllamaResponse.safeParse(raw);
  if (!parsed.success) throw malformedResponse(provider, formatZodError(parsed.error));
  const { message, done_reason, prompt_eval_count, eval_count } = parsed.data;
  return {
    value: unwrapAnswer(parseAnswerText(message.content)),
    usage: {
      input: tokenCount(prompt_eval_count),
      cache_read: null,
      cache_write: null,
      output: tokenCount(eval_count),
    },
    stop_reason: STOP[done_reason ?? ""] ?? "other",
    raw,
  };
}
