// OpenAI Responses API response -> ModelAnswer. The answer is the output_text of the assistant message (the JSON of
// the wrapped schema); a refusal part, or an incomplete response, says so in the stop reason. Reasoning items are not
// the answer (their tokens are in output_tokens, and in the raw body's output_tokens_details).
import { z } from "zod";
import type { JsonSchema, ModelAnswer, StopReason } from "../../vocabulary/turn.ts";
import { formatZodError } from "../../text/zod-error.ts";
import { convertOpenAIUsage } from "./convert-openai-usage.ts";
import { malformedResponse } from "../malformed-response.ts";
import { dropNullOptionals, parseAnswerText, unwrapAnswer } from "../parse-answer.ts";

const ResponsesResponse = z.looseObject({
  status: z.string().optional(),
  incomplete_details: z.looseObject({ reason: z.string().optional() }).nullable().optional(),
  output: z.array(
    z.looseObject({
      type: z.string(),
      content: z.array(
        z.looseObject({ type: z.string(), text: z.string().optional(), refusal: z.string().optional() }),
      ).optional(),
    }),
  ),
  usage: z.unknown().optional(),
});

export function convertOpenAIResponsesResponse(
  raw: unknown,
  { schema, provider = "OpenAI API" }: { schema: JsonSchema; provider?: string },
): ModelAnswer {
  const parsed = ResponsesResponse.safeParse(raw);
  if (!parsed.success) throw malformedResponse(provider, formatZodError(parsed.error));
  const { output, status, incomplete_details, usage } = parsed.data;
  const parts = output.filter((item) => item.type === "message").flatMap((item) => item.content ?? []);
  const refusal = parts.find((part) => part.type === "refusal" && part.refusal)?.refusal ?? null;
  const text = parts.filter((part) => part.type === "output_text").map((part) => part.text ?? "").join("");
  const reason = incomplete_details?.reason;
  const stop: StopReason = refusal !== null || reason === "content_filter"
    ? "refusal"
    : status === "incomplete" && reason === "max_output_tokens"
    ? "max_tokens"
    : status === "completed"
    ? "end"
    : "other";
  const value = refusal !== null && text === ""
    ? refusal
    : dropNullOptionals(unwrapAnswer(parseAnswerText(text)), schema);
  return { value, usage: convertOpenAIUsage(usage), stop_reason: stop, raw };
}
