// TurnRequest -> OpenAI Responses API body (POST /v1/responses), for the models the table says take it (the GPT-5.6
// family; the Responses-only codex and -pro models). Stateless: store false, every call carries its whole input, so
// nothing of a run is kept on OpenAI's side. The prefix is a developer message and the rest one user message whose
// parts are the sections, in a stable order, so automatic prefix caching hits; prompt_cache_key (one per run) routes
// a run's calls to the same cache. Where the model takes explicit marks (GPT-5.6 and later:
// prompt_cache_breakpoint, openai 7.59.0 types; developers.openai.com/api/docs/guides/prompt-caching, read
// 2026-12-01), the end of the prefix and the last event are marked, as Loom marks them for Anthropic. The
// answer is constrained by text.format json_schema, strict where the schema allows.
import type { TurnRequest } from "../../vocabulary/turn.ts";
import { convertToStrictJsonSchema } from "./convert-to-strict-json-schema.ts";
import { renderSection, renderSectionBlocks, splitPrefix } from "../render-sections.ts";
import { wrapResponseSchema } from "../wrap-response-schema.ts";

type InputText = { type: "input_text"; text: string; prompt_cache_breakpoint?: { mode: "explicit" } };

export type OpenAIResponsesBody = {
  model: string;
  input: { role: "developer" | "user"; content: InputText[] }[];
  store: false;
  text: { format: { type: "json_schema"; name: string; schema: Record<string, unknown>; strict: boolean } };
  prompt_cache_key?: string;
  reasoning?: { effort: "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max" };
  max_output_tokens?: number;
};

export function convertToOpenAIResponsesRequest(
  request: TurnRequest,
  { model, cacheKey, effort, maxTokens, explicitCache = false }: {
    model: string;
    /** The run's prompt_cache_key: the same on every call of a run. */
    cacheKey?: string;
    effort?: string;
    maxTokens?: number;
    /** The model accepts prompt_cache_breakpoint marks (the table's cache.breakpoints explicit_or_automatic). */
    explicitCache?: boolean;
  },
): OpenAIResponsesBody {
  const { prefix, rest } = splitPrefix(request.sections);
  const mark = explicitCache ? { prompt_cache_breakpoint: { mode: "explicit" as const } } : {};
  const input: OpenAIResponsesBody["input"] = [];
  if (prefix.length > 0) {
    input.push({
      role: "developer",
      content: [{ type: "input_text", text: prefix.map(renderSection).join("\n\n"), ...mark }],
    });
  }
  // With marks, the events go one part per event (renderSectionBlocks) and the mark sits on the last event, before
  // the closing "]": the next step re-sends every retained event, so the marked prefix is the start of its request
  // (on the whole events part, "]" included, no later request ever began with it).
  const parts: InputText[] = rest.flatMap((section) => {
    if (!explicitCache || section.section !== "events" || section.events.length === 0) {
      return [{ type: "input_text" as const, text: renderSection(section) }];
    }
    const texts = renderSectionBlocks(section);
    return texts.map((text, i) => ({
      type: "input_text" as const,
      text,
      ...(i === texts.length - 2 && request.phase !== "classification" ? mark : {}),
    }));
  });
  input.push({ role: "user", content: parts.length > 0 ? parts : [{ type: "input_text", text: "Answer now." }] });
  const { schema, strict } = convertToStrictJsonSchema(wrapResponseSchema(request.response_schema));
  return {
    model,
    input,
    store: false,
    text: { format: { type: "json_schema", name: "answer", schema, strict } },
    ...(cacheKey ? { prompt_cache_key: cacheKey } : {}),
    ...(effort ? { reasoning: { effort: effort as NonNullable<OpenAIResponsesBody["reasoning"]>["effort"] } } : {}),
    ...(maxTokens !== undefined ? { max_output_tokens: maxTokens } : {}),
  };
}
