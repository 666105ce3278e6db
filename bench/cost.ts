// Effective input cost of a run's requests under the providers' prompt-caching rules, computed on the bodies the
// adapters actually build (convertToAnthropicRequest, convertToOpenAIRequest), and where that cost goes by section.
// Tokens are estimated as UTF-8 bytes / 4 throughout; only ratios between policies are reported.
//
// - Anthropic: the cache covers tools -> system -> messages. A request writes the prefix up to each of its
//   cache_control breakpoints (when that prefix is at least the model's minimum cacheable prompt: 512 tokens for the
//   Claude 5.5 family, the table's cache.min_tokens); a breakpoint hits when an earlier request of the run wrote the
//   identical prefix ending at that block or at one of the ~20 blocks before it. Changing tool_choice invalidates the
//   message blocks (it is hashed in before them). Write 1.25, read 0.10, uncached 1.0 (Claude Sonnet 5.5's prices).
// - OpenAI: automatic caching of the longest prefix shared with an earlier request of the run (the last 16), from 1,024
//   tokens in 128-token steps; the response format is part of the prefix (it keys the cache). Cached input costs
//   0.25 (GPT-4.1) or 0.10 (GPT-5 class) of uncached input; what a request caches beyond what it read is counted as
//   written (GPT-5.6 and later bill those writes at 1.25x: bench/prices.ts).
// Every rate and minimum comes from the model table (lib/models/built-in.ts), as relative prices.
// - No cache: every input token at 1.0.
import { convertToAnthropicRequest } from "../lib/providers/anthropic/convert-to-anthropic-request.ts";
import { convertToOpenAIRequest } from "../lib/providers/openai/convert-to-openai-request.ts";
import { renderSection, renderSectionBlocks, splitPrefix } from "../lib/providers/render-sections.ts";
import { utf8Length } from "../lib/text/digest.ts";
import { ANTHROPIC_LOOKBACK_BLOCKS } from "../lib/providers/anthropic/anthropic-cache-layout.ts";
import { OPENAI_STEP_TOKENS } from "../lib/cache-explanation.ts";
import type { Section, TurnRequest } from "../lib/vocabulary/turn.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { cacheRulesOf } from "../lib/models/models.ts";

export const BYTES_PER_TOKEN = 4;
/** The model whose prices and minimum stand for Anthropic's, and the OpenAI models priced, from the model table. */
export const ANTHROPIC_MODEL = "anthropic/claude-sonnet-5-5";
const OPENAI_MODELS = { "gpt-4.1": "openai/gpt-4.1", "gpt-5": "openai/gpt-5" } as const;

/** A model's prices relative to its uncached input, from the table. */
export function relativePrices(model: string): { write: number; read: number; writeBilled: number; uncached: 1 } {
  const prices = BUILT_IN_MODELS.models[model]?.prices;
  if (!prices) throw new Error(`The model table has no prices for ${model}`);
  return {
    write: (prices.cache_write_5m ?? prices.cache_write ?? prices.input) / prices.input,
    read: prices.cache_read / prices.input,
    writeBilled: (prices.cache_write ?? prices.input) / prices.input,
    uncached: 1,
  };
}
/** The shortest cacheable prefix of a model, in tokens (the table's cache.min_tokens). */
export function minCacheTokens(model: string): number {
  const rules = cacheRulesOf(BUILT_IN_MODELS, model);
  if (!rules) throw new Error(`The model table says ${model} has no prompt cache`);
  return rules.min_tokens;
}
/** OpenAI's minimum, the same for every model the benchmark prices. */
export const MIN_CACHE_TOKENS = minCacheTokens(OPENAI_MODELS["gpt-5"]);
export { ANTHROPIC_LOOKBACK_BLOCKS };
/** The minimum of Haiku 4.5 and Opus 4.5 / 4.6 (the model table's), for the second Anthropic cache simulation. */
const MIN_TOKENS_4096 = minCacheTokens("anthropic/claude-haiku-4-5");
const { write, read } = relativePrices(ANTHROPIC_MODEL);
export const ANTHROPIC = { write, read, uncached: 1 } as const;
export const OPENAI_CACHED = {
  "gpt-4.1": relativePrices(OPENAI_MODELS["gpt-4.1"]).read,
  "gpt-5": relativePrices(OPENAI_MODELS["gpt-5"]).read,
} as const;

export const COST_MODELS = ["anthropic", "gpt-4.1", "gpt-5", "no cache"] as const;
export type CostModel = (typeof COST_MODELS)[number];

export const COST_SECTIONS = [
  "tools / response format",
  "prefix",
  "older events",
  "previous newest",
  "newest",
  "working state",
  "candidates",
  "lookups",
] as const;
export type CostSection = (typeof COST_SECTIONS)[number];

export type SectionCosts = Record<CostSection, number>;
export const emptySectionCosts = (): SectionCosts =>
  Object.fromEntries(COST_SECTIONS.map((s) => [s, 0])) as SectionCosts;

/** Cost in token units (bytes / 4 at each model's prices); `sections` splits it; `tokens` is the plain input. */
export type Costs = {
  requests: number;
  tokens: number;
  cost: Record<CostModel, number>;
  /** Share of input tokens read from the cache, per caching model. */
  cachedTokens: { anthropic: number; openai: number };
  anthropicWriteTokens: number;
  /** Of those, what a 1-hour layout writes at the 5-minute price (the step's own marker). */
  anthropicShortWriteTokens: number;
  /** The same Anthropic cache on a model whose minimum cacheable prompt is 4,096 tokens (Haiku 4.5, Opus 4.5 / 4.6). */
  anthropicMin4096: { cached: number; write: number };
  /** OpenAI input tokens a request cached beyond what it read (billed at 1.25x from GPT-5.6 on). */
  openaiWriteTokens: number;
  /** Input tokens of the OpenAI bodies (`tokens` counts the Anthropic ones). */
  openaiTokens: number;
  sections: { anthropic: SectionCosts; "gpt-5": SectionCosts };
};

export function emptyCosts(): Costs {
  return {
    requests: 0,
    tokens: 0,
    cost: { anthropic: 0, "gpt-4.1": 0, "gpt-5": 0, "no cache": 0 },
    cachedTokens: { anthropic: 0, openai: 0 },
    anthropicWriteTokens: 0,
    anthropicShortWriteTokens: 0,
    anthropicMin4096: { cached: 0, write: 0 },
    openaiWriteTokens: 0,
    openaiTokens: 0,
    sections: { anthropic: emptySectionCosts(), "gpt-5": emptySectionCosts() },
  };
}

export function addCosts(into: Costs, from: Costs): void {
  into.requests += from.requests;
  into.tokens += from.tokens;
  for (const m of COST_MODELS) into.cost[m] += from.cost[m];
  into.cachedTokens.anthropic += from.cachedTokens.anthropic;
  into.cachedTokens.openai += from.cachedTokens.openai;
  into.anthropicWriteTokens += from.anthropicWriteTokens;
  into.anthropicShortWriteTokens += from.anthropicShortWriteTokens;
  into.anthropicMin4096.cached += from.anthropicMin4096.cached;
  into.anthropicMin4096.write += from.anthropicMin4096.write;
  into.openaiWriteTokens += from.openaiWriteTokens;
  into.openaiTokens += from.openaiTokens;
  for (const model of ["anthropic", "gpt-5"] as const) {
    for (const s of COST_SECTIONS) into.sections[model][s] += from.sections[model][s];
  }
}

/** `short`: a 5-minute breakpoint in a body laid out for a 1-hour cache (the step's own marker). */
type Segment = { label: CostSection | null; text: string; breakpoint?: boolean; short?: boolean };

function labelEvents(count: number, i: number): CostSection {
  if (i === count - 1) return "newest";
  if (i === count - 2) return "previous newest";
  return "older events";
}

function labelOf(section: Section): CostSection {
  switch (section.section) {
    case "instructions":
    case "intent":
    case "tasks":
    case "checkpoint":
      return "prefix";
    case "working_state":
      return "working state";
    case "candidates":
      return "candidates";
    case "newest":
      return "newest";
    case "lookups":
      return "lookups";
    case "events":
      return "older events";
  }
}

/** Labelled pieces of a section's text, as the adapters lay it out (events one piece per event). */
function labelledBlocks(section: Section): { label: CostSection; text: string }[] {
  if (section.section !== "events") return [{ label: labelOf(section), text: renderSection(section) }];
  const texts = renderSectionBlocks(section);
  // One piece per event (a closing "]" piece, when there is one, goes with the newest).
  const n = section.events.length;
  return texts.map((text, i) => ({ label: labelEvents(n, Math.min(i, n - 1)), text }));
}

/** The Anthropic body as cache segments: tools, system blocks, tool_choice (hashed, no tokens), message blocks. */
export function anthropicSegments(request: TurnRequest): Segment[] {
  // Laid out for a 1-hour cache: the same breakpoints as for 5 minutes, the step's own one marked as a 5-minute one.
  const { body } = convertToAnthropicRequest(request, { model: "model", maxTokens: 4096, cache: { ttl: "1h" } });
  const segments: Segment[] = [{ label: "tools / response format", text: JSON.stringify(body.tools) }];
  for (const block of body.system ?? []) {
    segments.push({
      label: "prefix",
      text: block.text,
      breakpoint: block.cache_control !== undefined,
      short: block.cache_control !== undefined && block.cache_control.ttl === undefined,
    });
  }
  segments.push({ label: null, text: JSON.stringify(body.tool_choice) });
  const { rest } = splitPrefix(request.sections);
  const labels = rest.flatMap(labelledBlocks);
  const content = body.messages[0].content;
  content.forEach((block, i) => {
    // The adapter's blocks are these texts, in this order; a mismatch means the measurement is wrong.
    if (labels.length > 0 && labels[i]?.text !== block.text) throw new Error("Anthropic blocks differ from sections");
    segments.push({
      label: labels[i]?.label ?? "candidates",
      text: block.text,
      breakpoint: block.cache_control !== undefined,
      short: block.cache_control !== undefined && block.cache_control.ttl === undefined,
    });
  });
  return segments;
}

/** The OpenAI body as one byte stream in segments: response format, system message, user message by section. */
export function openaiSegments(request: TurnRequest): Segment[] {
  const { body } = convertToOpenAIRequest(request, { model: "model", responseFormat: "json_schema" });
  const segments: Segment[] = [{
    label: "tools / response format",
    text: JSON.stringify(body.response_format),
  }];
  const [first, second] = body.messages;
  const system = first.role === "system" ? first : null;
  const user = system ? second : first;
  if (system) segments.push({ label: "prefix", text: `\u0000${system.content}` });
  const { rest } = splitPrefix(request.sections);
  const pieces = rest.flatMap((section, i) =>
    labelledBlocks(section).map((b, j) => ({ ...b, text: (i > 0 && j === 0 ? "\n\n" : "") + b.text }))
  );
  const joined = pieces.map((p) => p.text).join("");
  if (pieces.length > 0 && joined !== user.content) throw new Error("OpenAI user message differs from sections");
  segments.push({ label: null, text: "\u0000" });
  if (pieces.length === 0) segments.push({ label: "candidates", text: user.content });
  for (const p of pieces) segments.push({ label: p.label, text: p.text });
  return segments;
}

/** Adds `tokens` from [from, to) of a segment range split at read/write ends into `sections` with prices. */
function attribute(
  sections: SectionCosts,
  segments: Segment[],
  zones: { end: number; price: number }[],
): void {
  let start = 0;
  let label: CostSection = "tools / response format";
  for (const segment of segments) {
    const end = start + utf8Length(segment.text);
    if (segment.label) label = segment.label;
    let zoneStart = 0;
    for (const zone of zones) {
      const lo = Math.max(start, zoneStart);
      const hi = Math.min(end, zone.end);
      if (hi > lo) sections[label] += ((hi - lo) / BYTES_PER_TOKEN) * zone.price;
      zoneStart = zone.end;
    }
    start = end;
  }
}

/** Segment texts interned as small ids, so prefixes compare as id lists (one hash pass per text). */
class Interner {
  readonly #ids = new Map<string, number>();
  id(text: string): number {
    let id = this.#ids.get(text);
    if (id === undefined) this.#ids.set(text, id = this.#ids.size);
    return id;
  }
}

/** How many UTF-8 bytes `a` and `b` share at their start. */
function commonPrefixBytes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  // Do not split a surrogate pair.
  if (i > 0 && i < n && (a.charCodeAt(i - 1) & 0xfc00) === 0xd800) i--;
  return utf8Length(a.slice(0, i));
}

/** OpenAI compares with this many of the run's most recent requests (the longest shared prefix is almost always among them). */
export const OPENAI_RECENT_REQUESTS = 16;

/** One run's cache state and totals; feed it the run's requests in order. */
export class RunCost {
  readonly totals = emptyCosts();
  /** The Anthropic model's minimum cacheable prompt, in bytes. */
  readonly #anthropicMinBytes: number;
  constructor({ anthropicModel = ANTHROPIC_MODEL }: { anthropicModel?: string } = {}) {
    this.#anthropicMinBytes = minCacheTokens(anthropicModel) * BYTES_PER_TOKEN;
  }
  readonly #interner = new Interner();
  readonly #anthropicCache = new Set<string>();
  readonly #anthropicCache4096 = new Set<string>();
  readonly #openaiRecent: { ids: number[]; segments: Segment[] }[] = [];

  /** Adds one request; returns the bytes of its Anthropic body by section (for the floor). */
  add(request: TurnRequest): Record<CostSection, number> {
    const one = emptyCosts();
    one.requests = 1;
    const segments = anthropicSegments(request);
    this.#anthropic(segments, one);
    this.#anthropic4096(segments, one);
    this.#openai(openaiSegments(request), one);
    addCosts(this.totals, one);
    const bytes = emptySectionCosts();
    let label: CostSection = "tools / response format";
    for (const s of segments) {
      if (s.label) label = s.label;
      bytes[label] += utf8Length(s.text);
    }
    return bytes;
  }

  /** What reads and writes the same bodies make on a model with a 4,096-token minimum (counters only). */
  #anthropic4096(segments: Segment[], into: Costs): void {
    const { readEnd, writeEnd } = this.#anthropicCacheOf(segments, this.#anthropicCache4096, MIN_TOKENS_4096);
    into.anthropicMin4096.cached += readEnd / BYTES_PER_TOKEN;
    into.anthropicMin4096.write += (writeEnd - readEnd) / BYTES_PER_TOKEN;
  }

  /** Where the cache reads and writes end in a body (bytes), updating `cache`. */
  #anthropicCacheOf(
    segments: Segment[],
    cache: Set<string>,
    minTokens: number,
  ): { readEnd: number; writeEnd: number; total: number; shortWrite: number } {
    const ends: number[] = [];
    const keys: string[] = [];
    let at = 0;
    let key = "";
    for (const s of segments) {
      at += utf8Length(s.text);
      key += `${this.#interner.id(s.text)},`;
      ends.push(at);
      keys.push(key);
    }
    const total = at;
    const minBytes = minTokens * BYTES_PER_TOKEN;
    let readEnd = 0;
    let writeEnd = 0;
    let longEnd = 0;
    const writes: string[] = [];
    segments.forEach((s, i) => {
      if (!s.breakpoint || ends[i] < minBytes) return;
      if (!s.short) longEnd = Math.max(longEnd, ends[i]);
      for (let j = i; j >= Math.max(0, i - ANTHROPIC_LOOKBACK_BLOCKS); j--) {
        if (cache.has(keys[j])) {
          readEnd = Math.max(readEnd, ends[j]);
          break;
        }
      }
      writeEnd = Math.max(writeEnd, ends[i]);
      writes.push(keys[i]);
    });
    for (const k of writes) cache.add(k);
    writeEnd = Math.max(writeEnd, readEnd);
    // Under a 1-hour cache, what the step's own 5-minute marker writes past the last 1-hour one.
    const shortWrite = Math.max(0, writeEnd - Math.max(longEnd, readEnd));
    return { readEnd, writeEnd, total, shortWrite };
  }

  #anthropic(segments: Segment[], into: Costs): void {
    const { readEnd, writeEnd, total, shortWrite } = this.#anthropicCacheOf(
      segments,
      this.#anthropicCache,
      this.#anthropicMinBytes / BYTES_PER_TOKEN,
    );
    const tokens = (b: number) => b / BYTES_PER_TOKEN;
    into.anthropicShortWriteTokens += tokens(shortWrite);
    into.tokens += tokens(total);
    into.cost["no cache"] += tokens(total);
    into.cachedTokens.anthropic += tokens(readEnd);
    into.anthropicWriteTokens += tokens(writeEnd - readEnd);
    into.cost.anthropic += tokens(readEnd) * ANTHROPIC.read + tokens(writeEnd - readEnd) * ANTHROPIC.write +
      tokens(total - writeEnd) * ANTHROPIC.uncached;
    attribute(into.sections.anthropic, segments, [
      { end: readEnd, price: ANTHROPIC.read },
      { end: writeEnd, price: ANTHROPIC.write },
      { end: total, price: ANTHROPIC.uncached },
    ]);
  }

  #openai(segments: Segment[], into: Costs): void {
    const ids = segments.map((s) => this.#interner.id(s.text));
    let shared = 0;
    for (const earlier of this.#openaiRecent) {
      // The response format keys the cache: another one shares nothing.
      if (earlier.ids[0] !== ids[0]) continue;
      let bytes = 0;
      let i = 0;
      while (i < ids.length && i < earlier.ids.length && ids[i] === earlier.ids[i]) {
        bytes += utf8Length(segments[i].text);
        i++;
      }
      if (i < ids.length && i < earlier.ids.length) {
        bytes += commonPrefixBytes(segments[i].text, earlier.segments[i].text);
      }
      shared = Math.max(shared, bytes);
    }
    this.#openaiRecent.push({ ids, segments });
    if (this.#openaiRecent.length > OPENAI_RECENT_REQUESTS) this.#openaiRecent.shift();
    // Cacheable prefix lengths: 1,024 tokens, then every 128 tokens.
    const first = MIN_CACHE_TOKENS * BYTES_PER_TOKEN;
    const step = OPENAI_STEP_TOKENS * BYTES_PER_TOKEN;
    const cacheable = (bytes: number) => (bytes < first ? 0 : first + Math.floor((bytes - first) / step) * step);
    const cached = cacheable(shared);
    let total = 0;
    for (const s of segments) total += utf8Length(s.text);
    into.openaiWriteTokens += (cacheable(total) - cached) / BYTES_PER_TOKEN;
    const tokens = (b: number) => b / BYTES_PER_TOKEN;
    into.cachedTokens.openai += tokens(cached);
    into.openaiTokens += tokens(total);
    for (const model of ["gpt-4.1", "gpt-5"] as const) {
      into.cost[model] += tokens(cached) * OPENAI_CACHED[model] + tokens(total - cached);
    }
    attribute(into.sections["gpt-5"], segments, [
      { end: cached, price: OPENAI_CACHED["gpt-5"] },
      { end: total, price: 1 },
    ]);
  }
}
