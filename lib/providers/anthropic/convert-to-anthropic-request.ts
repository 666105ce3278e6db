// TurnRequest -> Anthropic Messages API body, laid out for prompt caching. The API caches prefixes in the order
// tools -> system -> messages; changing the tools invalidates everything, changing `tool_choice` only the cached
// message blocks. So:
// - tools: one tool per answer shape (`answer` for selection and arguments, which share the run's one schema;
//   `classify`), and `tool_choice` forces it: the same on every call of a run. A caller that passes the previous
//   body's `tools` gets them kept, in first-seen order; the HTTP adapter passes none.
// - system: one block per prefix section (instructions, intent, tasks, checkpoint).
// - messages: one user message, the events one block per event and a closing "]", then the newest event's larger
//   view, working state, candidates, lookups.
// Breakpoints go only where a later call of the run reads them (placeBreakpoints): a write no call reads costs 1.25x
// (5m) or 2x (1h) for nothing. Caching facts (platform.claude.com/docs/en/build-with-claude/prompt-caching, read
// 2026-12-01): at most 4 cache_control markers; a prefix shorter than the model's minimum cacheable prompt (1,024
// tokens for Sonnet 4.5 / Opus 4.1, 4,096 for Haiku 4.5 / Opus 4.5 / 4.6; the model table's cache rules) is not cached,
// silently; a breakpoint reads an entry ending at it or at one of the 20 blocks before it.
import type { JsonSchema, Section, TurnRequest } from "../../vocabulary/turn.ts";
import { encodePropertyKeys, type KeyAliases } from "./encode-property-keys.ts";
import { renderAnswerFormat, renderSection, renderSectionBlocks, splitPrefix } from "../render-sections.ts";
import { wrapResponseSchema } from "../wrap-response-schema.ts";
import { convertToAnthropicOutputSchema } from "./convert-to-anthropic-output-schema.ts";
import type { ThinkingType } from "../../models/models.ts";
import type { CacheTtl } from "../call-options.ts";
import type { MessagesAnswerMode } from "../answer-mode.ts";

/** The API accepts at most this many cache_control markers per request. */
export const MAX_CACHE_BREAKPOINTS = 4;

type TextBlock = { type: "text"; text: string; cache_control?: { type: "ephemeral"; ttl?: "1h" } };

/** The API (and the SDK's Tool type) wants an object schema: the wrapped schema always is one. */
export type AnthropicTool = { name: string; description: string; input_schema: JsonSchema & { type: "object" } };

export type AnthropicRequestBody = {
  model: string;
  max_tokens: number;
  system?: TextBlock[];
  messages: [{ role: "user"; content: TextBlock[] }];
  /** forced_tool only: the 5.5 models reject a forced tool ("What's new in Claude Sonnet 5.5", 2026-09-28). */
  tools?: AnthropicTool[];
  tool_choice?: { type: "tool"; name: string };
  /** output_config.format (JSON schema) where the model table says the model takes it; effort where set. */
  output_config?: {
    format?: { type: "json_schema"; schema: JsonSchema };
    effort?: "low" | "medium" | "high" | "xhigh" | "max";
  };
  thinking?: { type: ThinkingType };
};

/**
 * The tool that carries this request's answer: `answer` for selection and arguments (the loop sends one response
 * schema for both, so the tools and tool_choice are the same on every call and the cache is one chain), `classify`
 * for routing.
 */
function anthropicToolName(request: TurnRequest): string {
  return request.phase === "classification" ? "classify" : "answer";
}

function toolDescription(request: TurnRequest): string {
  return `The answer to this ${
    request.phase === "classification" ? "classification" : "request"
  }. The \`answer\` field must conform to its schema.`;
}

/** `sent` with `tool` added, or put in place of an older tool of its name whose definition differs. */
function withTool(sent: readonly AnthropicTool[], tool: AnthropicTool): AnthropicTool[] {
  const tools = sent.slice();
  const at = tools.findIndex((t) => t.name === tool.name);
  if (at === -1) tools.push(tool);
  else if (JSON.stringify(tools[at]) !== JSON.stringify(tool)) tools[at] = tool;
  return tools;
}

/** The blocks of the prefix, and where a breakpoint may go: the block before the checkpoint (stable for the run) and
 * the last one (stable until the next checkpoint). */
function systemBlocks(prefix: readonly Section[]): { blocks: TextBlock[]; breakpoints: Breakpoint[] } {
  const blocks: TextBlock[] = prefix.map((section) => ({ type: "text", text: renderSection(section) }));
  const breakpoints: Breakpoint[] = [];
  prefix.forEach((section, i) => {
    if (section.section === "checkpoint" && i > 0) breakpoints.push({ at: i - 1, kind: "run" });
  });
  if (blocks.length > 0) breakpoints.push({ at: blocks.length - 1, kind: "prefix" });
  return { blocks, breakpoints };
}

/**
 * The blocks of the user message, and where a breakpoint may go: the last event (retained events are append-only,
 * so the next step's calls read all of them) and the last block before the candidates when that is not the events
 * (the newest event's larger view and the working state, which only the step's arguments call reads again).
 */
function messageBlocks(rest: readonly Section[]): { blocks: TextBlock[]; breakpoints: Breakpoint[] } {
  const blocks: TextBlock[] = [];
  const breakpoints: Breakpoint[] = [];
  for (const section of rest) {
    const texts = renderSectionBlocks(section);
    // The events' last piece is their closing "]": the breakpoint goes on the last event, before it.
    if (section.section === "events" && section.events.length >= 1) {
      breakpoints.push({ at: blocks.length + texts.length - 2, kind: "events" });
    }
    if (section.section === "candidates") {
      const before = rest[rest.indexOf(section) - 1];
      if (before && before.section !== "events") breakpoints.push({ at: blocks.length - 1, kind: "step" });
    }
    for (const text of texts) blocks.push({ type: "text", text });
  }
  // The API rejects an empty user turn; a TurnRequest always has candidates, so this is only a guard.
  if (blocks.length === 0) blocks.push({ type: "text", text: "Answer now." });
  return { blocks, breakpoints };
}

/**
 * Where a breakpoint may sit: `run` ends the prefix that stays for the whole run, `prefix` the one that stays until
 * the next checkpoint, `events` the retained tail (read by the next step), `step` the step's own view and working
 * state (read only by a later call of the same step).
 */
type Breakpoint = { at: number; kind: "run" | "prefix" | "events" | "step" };

/** The prompt cache a body is laid out for. */
export type CachePlan = {
  /** The model's minimum cacheable prompt in tokens (the model table's; 1,024 when unknown). */
  minTokens: number;
  ttl: CacheTtl;
};
export const DEFAULT_CACHE_PLAN: CachePlan = { minTokens: 1024, ttl: "5m" };

/**
 * The breakpoints a later call of the run can read: none on a classification request (its `classify` tool is the
 * run's only one, so no later call shares its prefix); no `step` breakpoint on a single-call step (no arguments call
 * follows to read the view and working state: written on every call, read on none) until the stage looks something
 * up or is re-asked (its next call then sends the same view and working state again). A prefix under the model's
 * minimum caches nothing, silently, and costs nothing either: its marker stays (there are never more than four).
 */
function placeBreakpoints(
  request: TurnRequest,
  candidates: Breakpoint[],
): Breakpoint[] {
  if (request.phase === "classification") return [];
  const tasks = request.sections.find((s) => s.section === "tasks");
  const singleCall = tasks?.section === "tasks" && tasks.arguments === undefined;
  // A stage that looked something up (or was re-asked) asks again with the same view and working state.
  const lookingUp = request.sections.some((s) => s.section === "lookups");
  return candidates
    .filter((b) => !(b.kind === "step" && singleCall && request.phase === "selection" && !lookingUp))
    // The latest markers are the ones worth keeping should a request ever have more than the API allows.
    .slice(-MAX_CACHE_BREAKPOINTS);
}

export function convertToAnthropicRequest(
  request: TurnRequest,
  {
    model,
    maxTokens,
    tools: sent = [],
    cacheTtl,
    cache = DEFAULT_CACHE_PLAN,
    answerMode = "forced_tool",
    effort,
    thinking,
  }: {
    model: string;
    maxTokens: number;
    /** From the model table (structured_output): forced_tool, output_config_format or prompt. */
    answerMode?: MessagesAnswerMode;
    effort?: string;
    thinking?: ThinkingType;
    /** The cache's lifetime: 5m (the API's default, left unsaid) or 1h (said on its markers: a request mixing
     * lifetimes must put the longer ones first). Overrides `cache.ttl`. */
    cacheTtl?: CacheTtl;
    /** The model's minimum cacheable prompt and the cache's lifetime (the model table's; default 1,024 tokens, 5m). */
    cache?: Partial<CachePlan>;
    /** The `tools` of the previous body this adapter sent; the new body keeps them, in order, and adds its own. */
    tools?: readonly AnthropicTool[];
  },
): { body: AnthropicRequestBody; aliases: KeyAliases } {
  const plan: CachePlan = { ...DEFAULT_CACHE_PLAN, ...cache, ...(cacheTtl ? { ttl: cacheTtl } : {}) };
  const { prefix, rest } = splitPrefix(request.sections);
  const system = systemBlocks(prefix);
  const content = messageBlocks(rest);
  // The schema in the prompt goes last, after every breakpoint: the same text on every call of a run.
  if (answerMode === "prompt") content.blocks.push({ type: "text", text: renderAnswerFormat(request.response_schema) });
  const inSystem = (b: Breakpoint) => b.kind === "run" || b.kind === "prefix";
  for (const b of placeBreakpoints(request, [...system.breakpoints, ...content.breakpoints])) {
    const blocks = inSystem(b) ? system.blocks : content.blocks;
    const block = blocks[b.at];
    if (block === undefined) throw new Error(`a ${b.kind} cache breakpoint at block ${b.at} of ${blocks.length}`);
    // The step's own breakpoint is read seconds later by its arguments call: a 5-minute write (1.25x) is enough,
    // where a 1-hour one (2x) would cost more than the read saves. It is the last marker, so the longer lifetimes
    // still come first, as the API requires.
    const ttl = b.kind === "step" ? "5m" : plan.ttl;
    block.cache_control = ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  }

  const { schema, aliases } = encodePropertyKeys(wrapResponseSchema(request.response_schema));
  const body: AnthropicRequestBody = {
    model,
    max_tokens: maxTokens,
    ...(system.blocks.length > 0 ? { system: system.blocks } : {}),
    messages: [{ role: "user", content: content.blocks }],
  };
  if (answerMode === "forced_tool") {
    const tool: AnthropicTool = {
      name: anthropicToolName(request),
      description: toolDescription(request),
      input_schema: { ...schema, type: "object" },
    };
    body.tools = withTool(sent, tool);
    body.tool_choice = { type: "tool", name: tool.name };
  }
  const format = answerMode === "output_config_format"
    ? { type: "json_schema" as const, schema: convertToAnthropicOutputSchema(schema) }
    : undefined;
  if (format || effort) {
    body.output_config = {
      ...(format ? { format } : {}),
      ...(effort ? { effort: effort as NonNullable<AnthropicRequestBody["output_config"]>["effort"] } : {}),
    };
  }
  if (thinking) body.thinking = { type: thinking };
  return { body, aliases: answerMode === "prompt" ? {} : aliases };
}
