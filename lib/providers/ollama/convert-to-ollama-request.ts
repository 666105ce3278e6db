// TurnRequest -> Ollama's native chat body (POST /api/chat; ollama docs/api.md "Generate a chat completion", read
// 2026-12-01): the prefix as the system message and the rest as one user message, as for Chat Completions; `format`
// is the response schema ("Format can be `json` or a JSON schema"), wrapped as {answer: …} so the root is an object;
// `stream: false` returns one JSON object; options.num_ctx is sized by the caller from the request (ollama-context.ts).
import type { TurnRequest } from "../../vocabulary/turn.ts";
import { renderSection, splitPrefix } from "../render-sections.ts";
import { wrapResponseSchema } from "../wrap-response-schema.ts";

export type OllamaRequestBody = {
  model: string;
  messages: { role: "system" | "user"; content: string }[];
  stream: false;
  format: Record<string, unknown>;
  options: { num_ctx: number; num_predict?: number };
};

/** The body without its num_ctx, and the prompt bytes the window is sized from. */
export function convertToOllamaRequest(
  request: TurnRequest,
  { model, maxTokens }: { model: string; maxTokens?: number },
): { body: (numCtx: number) => OllamaRequestBody; promptBytes: number } {
  const { prefix, rest } = splitPrefix(request.sections);
  const messages: OllamaRequestBody["messages"] = [];
  if (prefix.length > 0) messages.push({ role: "system", content: prefix.map(renderSection).join("\n\n") });
  const user = rest.map(renderSection);
  messages.push({ role: "user", content: user.length > 0 ? user.join("\n\n") : "Answer now." });
  const format = wrapResponseSchema(request.response_schema);
  // The schema goes to the model as part of the prompt too (the server renders it into the sampler's grammar and,
  // for most templates, nothing else), so it counts toward the window.
  const promptBytes = new TextEncoder().encode(JSON.stringify(messages) + JSON.stringify(format)).length;
  return {
    promptBytes,
    body: (numCtx) => ({
      model,
      messages,
      stream: false,
      format,
      options: { num_ctx: numCtx, ...(maxTokens === undefined ? {} : { num_predict: maxTokens }) },
    }),
  };
}
