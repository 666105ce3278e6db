// Anthropic Messages API response -> ModelAnswer. The forced tool's input carries the answer; otherwise the text
// (output_config.format's JSON, the prompt-format answer, or a refusal) is parsed as JSON when it is JSON and kept as
// text otherwise. Thinking blocks are not the answer.
import { z } from "zod";
import type { ModelAnswer } from "../../vocabulary/turn.ts";
import { formatZodError } from "../../text/zod-error.ts";
import { convertAnthropicUsage } from "./convert-anthropic-usage.ts";
import { decodePropertyKeys, type KeyAliases } from "./encode-property-keys.ts";
import { malformedResponse } from "../malformed-response.ts";
import { mapAnthropicStopReason } from "./map-anthropic-stop-reason.ts";
import { parseAnswerText, unwrapAnswer } from "../parse-answer.ts";

const AnthropicResponse = z.looseObject({
  type: z.literal("message").optional(),
  content: z.array(
    z.looseObject({
      type: z.string(),
      text: z.string().optional(),
      name: z.string().optional(),
      input: z.unknown().optional(),
    }),
  ),
  stop_reason: z.string().nullable().optional(),
  usage: z.unknown().optional(),
});

export function convertAnthropicResponse(
  raw: unknown,
  { aliases = {}, provider = "Anthropic API" }: { aliases?: KeyAliases; provider?: string } = {},
): ModelAnswer {
  const parsed = AnthropicResponse.safeParse(raw);
  if (!parsed.success) throw malformedResponse(provider, formatZodError(parsed.error));
  const { content, stop_reason, usage } = parsed.data;
  const tool = content.find((block) => block.type === "tool_use");
  let value: unknown;
  if (tool) value = unwrapAnswer(decodePropertyKeys(tool.input, aliases));
  else {
    const text = content
      .filter((block) => block.type === "text" && typeof block.text === "string")
      .map((block) => block.text)
      .join("");
    // output_config.format answers in text, as the JSON of the wrapped schema ({"answer": …}).
    value = unwrapAnswer(decodePropertyKeys(parseAnswerText(text), aliases));
  }
  return { value, usage: convertAnthropicUsage(usage), stop_reason: mapAnthropicStopReason(stop_reason), raw };
}
