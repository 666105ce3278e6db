// TurnRequest -> OpenAI Chat Completions body (also what OpenAI-compatible servers take). The prefix is the system
// message and everything else one user message, in a stable order so automatic prefix caching can hit. The answer is
// constrained with response_format json_schema (strict where the schema allows), or json_object / nothing for
// servers without schema support, in which case the schema is shown to the model instead.
import type { TurnRequest } from "../../vocabulary/turn.ts";
import { convertToStrictJsonSchema } from "./convert-to-strict-json-schema.ts";
import type { ResponseFormatMode } from "../call-options.ts";
import type { ChatCompletionsBody } from "../chat-completions.ts";
import { renderAnswerFormat, renderSection, splitPrefix } from "../render-sections.ts";
import { wrapResponseSchema } from "../wrap-response-schema.ts";

const OPENAI_SCHEMA_NAME = "answer";

export function convertToOpenAIRequest(
  request: TurnRequest,
  {
    model,
    responseFormat = "json_schema",
    maxTokens,
    maxTokensField = "max_completion_tokens",
    effort,
    cacheKey,
  }: {
    model: string;
    responseFormat?: ResponseFormatMode;
    maxTokens?: number;
    /** OpenAI's reasoning models reject max_tokens; local servers know only max_tokens. */
    maxTokensField?: "max_tokens" | "max_completion_tokens";
    effort?: string;
    cacheKey?: string;
  },
): { body: ChatCompletionsBody; wrapped: boolean } {
  const { prefix, rest } = splitPrefix(request.sections);
  const user = rest.map(renderSection);
  if (responseFormat !== "json_schema") user.push(renderAnswerFormat(request.response_schema));
  const messages: ChatCompletionsBody["messages"] = [];
  if (prefix.length > 0) messages.push({ role: "system", content: prefix.map(renderSection).join("\n\n") });
  messages.push({ role: "user", content: user.length > 0 ? user.join("\n\n") : "Answer now." });
  const body: ChatCompletionsBody = { model, messages };
  if (responseFormat === "json_schema") {
    const { schema, strict } = convertToStrictJsonSchema(wrapResponseSchema(request.response_schema));
    body.response_format = { type: "json_schema", json_schema: { name: OPENAI_SCHEMA_NAME, schema, strict } };
  } else if (responseFormat === "json_object") {
    body.response_format = { type: "json_object" };
  }
  if (maxTokens !== undefined) body[maxTokensField] = maxTokens;
  if (cacheKey) body.prompt_cache_key = cacheKey;
  if (effort) body.reasoning_effort = effort as NonNullable<ChatCompletionsBody["reasoning_effort"]>;
  return { body, wrapped: responseFormat === "json_schema" };
}
