// How each API is asked for a structured answer, from the model table's `structured_output` (lib/models/models.ts):
// decided here and nowhere else. The table is total over every API and every value the model table can name, so a
// value added to StructuredOutput or an API added to ModelApi without its modes is a type error; the adapters send
// what their row says (lib/run/create-provider.ts for Chat Completions, anthropic-provider.ts for Messages; the
// Responses converter always sends text.format json_schema). Ollama's native API is none of these: its `format`
// always holds the answer to the schema.
import type { StructuredOutput } from "../models/models.ts";
import type { ModelApi } from "../models/provider-kinds.ts";
import type { ResponseFormatMode } from "./call-options.ts";

/**
 * How the Messages API is asked to constrain the answer: Anthropic's two ways, or the schema in the prompt (Loom
 * validates either way). Declared here, where the modes are decided; the Messages converter takes it from here.
 */
export type MessagesAnswerMode = "forced_tool" | "output_config_format" | "prompt";

/** The modes each API's converter takes. */
type AnswerModes = { messages: MessagesAnswerMode; "chat-completions": ResponseFormatMode; responses: "json_schema" };

/**
 * Messages: output_config.format or a forced tool where the table says so, else the schema in the prompt. Chat
 * Completions: the strict JSON-schema response_format unless the table says JSON mode (json_object) or nothing
 * (none: the schema in the prompt); a configured response_format (openai-compatible) wins over this row. Responses:
 * always text.format json_schema.
 */
export const ANSWER_MODES: { [A in ModelApi]: Record<StructuredOutput, AnswerModes[A]> } = {
  messages: {
    output_config_format: "output_config_format",
    forced_tool: "forced_tool",
    strict_tool: "prompt",
    json_schema: "prompt",
    json_object: "prompt",
    prompt: "prompt",
  },
  "chat-completions": {
    output_config_format: "json_schema",
    forced_tool: "json_schema",
    strict_tool: "json_schema",
    json_schema: "json_schema",
    json_object: "json_object",
    prompt: "none",
  },
  responses: {
    output_config_format: "json_schema",
    forced_tool: "json_schema",
    strict_tool: "json_schema",
    json_schema: "json_schema",
    json_object: "json_schema",
    prompt: "json_schema",
  },
};

/**
 * Whether the API holds the answer to the schema in this mode (a provider's `schema_enforcement`): JSON mode and the
 * schema in the prompt do not.
 */
export function enforcesSchema(mode: AnswerModes[ModelApi]): boolean {
  return mode !== "prompt" && mode !== "none" && mode !== "json_object";
}
