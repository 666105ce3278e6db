// A request's body as the session model's cache hashes it, in blocks (as lib/providers/cache-layout.ts lays them
// out), for the session comparison's cache estimate. Two ways to the same blocks: cacheBlocks renders the whole body,
// as the adapter would send it; CacheBlockRenderer renders each event once for a whole replay. A replay sends the same
// event objects request after request (a context never changes an event once appended), and legacy sends every event
// on every request: rendered afresh, a 1,000-message session's legacy requests are gigabytes of text; rendered once,
// they are its events. tests/session-comparison-fast-path.test.ts holds the two to the same blocks.
import { convertToAnthropicRequest } from "../providers/anthropic/convert-to-anthropic-request.ts";
import { convertToOpenAIRequest } from "../providers/openai/convert-to-openai-request.ts";
import { renderEventPiece, renderSectionBlocks, splitPrefix } from "../providers/render-sections.ts";
import type { Section, TurnRequest } from "../vocabulary/turn.ts";
import type { EstimateBlock } from "./cache-estimate.ts";

/** What the blocks depend on of the session's model: its id, how its cache is keyed, its minimum cacheable prompt. */
export type CacheModel = { id: string; layout: "breakpoints" | "automatic"; minTokens: number };

type Piece = { section: Section["section"]; text: string };

/**
 * A request's body as the model's adapter builds it, in the blocks its cache hashes: Anthropic's tools, system
 * blocks, tool_choice and message blocks with their breakpoints; OpenAI's response format, system message and the
 * user message piece by piece.
 */
export function cacheBlocks(request: TurnRequest, model: CacheModel): EstimateBlock[] {
  if (model.layout === "breakpoints") {
    const { body } = convertToAnthropicRequest(request, {
      model: model.id,
      maxTokens: 4096,
      cache: { minTokens: model.minTokens },
    });
    return [
      { text: JSON.stringify(body.tools ?? body.output_config ?? null), breakpoint: false },
      ...(body.system ?? []).map((b) => ({ text: b.text, breakpoint: b.cache_control !== undefined })),
      // tool_choice is hashed before the messages and has no tokens.
      ...(body.tool_choice ? [{ text: JSON.stringify(body.tool_choice), breakpoint: false, bytes: 0 }] : []),
      ...body.messages[0].content.map((b) => ({ text: b.text, breakpoint: b.cache_control !== undefined })),
    ];
  }
  const { body } = convertToOpenAIRequest(request, { model: model.id });
  const blocks: EstimateBlock[] = [{ text: JSON.stringify(body.response_format ?? null), breakpoint: false }];
  const system = body.messages.find((m) => m.role === "system");
  if (system) blocks.push({ text: system.content, breakpoint: false });
  const rest = splitPrefix(request.sections).rest.flatMap((section) =>
    renderSectionBlocks(section).map((text) => ({ section: section.section, text }))
  );
  rest.forEach((r, i) => {
    const before = rest[i - 1];
    blocks.push({
      text: (before !== undefined && before.section !== r.section ? "\n\n" : "") + r.text,
      breakpoint: false,
    });
  });
  return blocks;
}

/** cacheBlocks's blocks, each event's piece rendered once and kept for the later requests that send it again. */
export class CacheBlockRenderer {
  readonly #model: CacheModel;
  /** An event's piece as the first event (with the label and "[") and as a later one (after ","). */
  readonly #pieces = new WeakMap<object, { first?: string; later?: string }>();

  /** The tools block's text by phase and response schema (as JSON: the loop builds an equal schema each step). */
  readonly #tools = new Map<string, string>();

  constructor(model: CacheModel) {
    this.#model = model;
  }

  blocks(request: TurnRequest): EstimateBlock[] {
    return blocksOf(request, this.#model, (event, first) => this.#piece(event, first), (r) => this.#toolsText(r));
  }

  #toolsText(request: TurnRequest): string {
    const key = `${request.phase} ${JSON.stringify(request.response_schema)}`;
    let text = this.#tools.get(key);
    if (text === undefined) {
      text = toolsText({ phase: request.phase, response_schema: request.response_schema, sections: [] }, this.#model);
      this.#tools.set(key, text);
    }
    return text;
  }

  #piece(event: unknown, first: boolean): string {
    if (typeof event !== "object" || event === null) return renderEventPiece(event, first);
    let kept = this.#pieces.get(event);
    if (!kept) {
      kept = {};
      this.#pieces.set(event, kept);
    }
    return first ? (kept.first ??= renderEventPiece(event, true)) : (kept.later ??= renderEventPiece(event, false));
  }
}

function blocksOf(
  request: TurnRequest,
  model: CacheModel,
  piece: (event: unknown, first: boolean) => string,
  tools: (request: TurnRequest) => string,
): EstimateBlock[] {
  const { prefix, rest } = splitPrefix(request.sections);
  if (model.layout === "breakpoints") {
    // The adapter's body for the request with at most one event, standing in as 0: breakpoints depend on where the
    // events are, never on what they say, and only the last event can carry one (the tail the next step reads). Every
    // section before the events is one block. The tools (the schema's) come from `tools`.
    const at = rest.findIndex((s) => s.section === "events");
    const events = rest[at]?.section === "events" ? (rest[at] as Extract<Section, { section: "events" }>).events : [];
    const { body } = convertToAnthropicRequest({
      ...request,
      response_schema: {},
      sections: request.sections.map((s) =>
        s.section === "events" ? { section: "events", events: s.events.length > 0 ? [0] : [] } : s
      ),
    }, { model: model.id, maxTokens: 4096, cache: { minTokens: model.minTokens } });
    const blocks = body.messages[0].content.map((b) => ({ text: b.text, breakpoint: b.cache_control !== undefined }));
    const standIn = blocks[at];
    if (standIn && events.length > 0) {
      blocks.splice(
        at,
        1,
        ...events.map((event, i) => ({
          text: piece(event, i === 0),
          breakpoint: i === events.length - 1 && standIn.breakpoint,
        })),
      );
    }
    return [
      { text: tools(request), breakpoint: false },
      ...(body.system ?? []).map((b) => ({ text: b.text, breakpoint: b.cache_control !== undefined })),
      // tool_choice is hashed before the messages and has no tokens.
      ...(body.tool_choice ? [{ text: JSON.stringify(body.tool_choice), breakpoint: false, bytes: 0 }] : []),
      ...blocks,
    ];
  }
  // The response format and the system message depend only on the schema and the prefix.
  const { body } = convertToOpenAIRequest({ ...request, sections: prefix }, { model: model.id });
  const blocks: EstimateBlock[] = [{ text: JSON.stringify(body.response_format ?? null), breakpoint: false }];
  const system = body.messages.find((m) => m.role === "system");
  if (system) blocks.push({ text: system.content, breakpoint: false });
  const pieces: Piece[] = rest.flatMap((section): Piece[] =>
    section.section === "events" && section.events.length > 0
      ? [
        ...section.events.map((event, i) => ({ section: section.section, text: piece(event, i === 0) })),
        { section: section.section, text: "]" },
      ]
      : renderSectionBlocks(section).map((text) => ({ section: section.section, text }))
  );
  pieces.forEach((p, i) => {
    const before = pieces[i - 1];
    blocks.push({
      text: (before !== undefined && before.section !== p.section ? "\n\n" : "") + p.text,
      breakpoint: false,
    });
  });
  return blocks;
}

/** The first block of an Anthropic body: its tools, or the output format a model takes instead of a forced tool. */
function toolsText(request: TurnRequest, model: CacheModel): string {
  const { body } = convertToAnthropicRequest(request, {
    model: model.id,
    maxTokens: 4096,
    cache: { minTokens: model.minTokens },
  });
  return JSON.stringify(body.tools ?? body.output_config ?? null);
}
