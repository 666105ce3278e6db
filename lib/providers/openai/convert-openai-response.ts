// OpenAI Chat Completions response (also from OpenAI-compatible servers) -> ModelAnswer.
import { z } from "zod";
import type { JsonSchema, ModelAnswer } from "../../vocabulary/turn.ts";
import { formatZodError } from "../../text/zod-error.ts";
import { convertOpenAIUsage, convertServerTimings } from "./convert-openai-usage.ts";
import { malformedResponse } from "../malformed-response.ts";
import { mapOpenAIStopReason } from "./map-openai-stop-reason.ts";
import { dropNullOptionals, parseAnswerText, unwrapAnswer } from "../parse-answer.ts";

const OpenAIResponse = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: z.string().nullable().optional(),
          refusal: z.string().nullable().optional(),
        }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z.unknown().optional(),
  timings: z.unknown().optional(),
});

export function convertOpenAIResponse(
  raw: unknown,
  { wrapped, schema, provider = "OpenAI API" }: { wrapped: boolean; schema: JsonSchema; provider?: string },
): ModelAnswer {
  const parsed = OpenAIResponse.safeParse(raw);
  if (!parsed.success) throw malformedResponse(provider, formatZodError(parsed.error));
  const { choices, usage, timings } = parsed.data;
  // "!": the schema asks for at least one choice
  const { message, finish_reason } = choices[0]!;
  const refusal = typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : null;
  let value: unknown;
  if (refusal !== null && !message.content) value = refusal;
  else {
    const parsedText = parseAnswerText(message.content ?? "");
    value = wrapped ? dropNullOptionals(unwrapAnswer(parsedText), schema) : parsedText;
  }
  const serverTimings = convertServerTimings(timings);
  return {
    value,
    usage: convertOpenAIUsage(usage, { timings }),
    stop_reason: mapOpenAIStopReason(finish_reason, { refused: refusal !== null }),
    raw,
    ...(serverTimings ? { timings: serverTimings } : {}),
  };
}
