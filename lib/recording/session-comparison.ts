// `loom replay FOLDER --compare`: each agent session replayed under legacy and bounded, side by side — events, legacy's
// requests over 64 KiB, each policy's bytes and modeled input cost under the session's own model and prices, and what
// the session really spent by its recorded usage (priced by the same table), with its compactions. Only counts and
// money: no prompt or file content.
import { z } from "zod";
import { BUILT_IN_MODELS } from "../models/built-in.ts";
import { type ModelTable, resolveModel } from "../models/models.ts";
import type { ModelProvider } from "../models/provider-kinds.ts";
import { BUILT_IN_PRICES, costOf, type ModelPrice, priceOf, type PriceTable } from "../prices.ts";
import { ANTHROPIC_LOOKBACK_BLOCKS } from "../providers/anthropic/anthropic-cache-layout.ts";
import { CacheEstimate, type EstimateBlock } from "./cache-estimate.ts";
import { CacheBlockRenderer, cacheBlocks } from "./cache-blocks.ts";
import type { SessionFacts } from "./importers/session-facts.ts";
import type { TurnRequest, Usage } from "../vocabulary/turn.ts";

/** Requests above this many bytes are the ones the issue counts under legacy (64 KiB). */
const LARGE_REQUEST_BYTES = 64 * 1024;
/** Loom's estimate wherever a byte count stands for tokens. */
const BYTES_PER_TOKEN = 4;

const count = z.number().int().nonnegative();
const money = z.number().nonnegative().nullable();

export const PolicyFigures = z.strictObject({
  requests: count.describe("Model calls the replay made"),
  bytes: count.describe("UTF-8 bytes of every request, summed"),
  max_request_bytes: count,
  over_64k: count.describe("Requests above 64 KiB"),
  modeled_cost: money.describe(
    "USD of the requests' input at the session model's prices: the prefix Loom expects the provider's cache to hold " +
      "at the cache-read price, the rest at the cache-write price (explicit breakpoints) or the input price " +
      "(automatic caching), tokens as bytes / 4; output left out (the same answers under both policies); null when " +
      "the model has no price",
  ),
});
export type PolicyFigures = z.infer<typeof PolicyFigures>;

const RecordedSpend = z.strictObject({
  calls: count.describe("Model calls with usage in the file"),
  usage: z.strictObject({ input: count, cache_write: count, cache_read: count, output: count }).describe(
    "The file's counters summed (Codex: input without the cached part)",
  ),
  cost: money.describe("USD of that usage at each call's own model's prices; null when one has no price"),
});

export const SessionRow = z.strictObject({
  file: z.string().describe("The session file, relative to the folder given"),
  format: z.string(),
  model: z.string().describe("The session's model as the file names it"),
  subagent: z.boolean(),
  events: count.describe("Imported steps (tool calls and answers)"),
  compactions: count.describe("Times the agent compacted its own context"),
  compaction_lines: z.array(count).describe("The file's lines where it did"),
  skipped_sidechain_lines: count.describe(
    "Side-chain (subagent) lines inside a main session file, left out: they are the subagent's turns",
  ),
  legacy: PolicyFigures.nullable(),
  bounded: PolicyFigures.nullable(),
  bytes_ratio: z.number().nullable().describe("bounded bytes / legacy bytes"),
  cost_ratio: z.number().nullable().describe("bounded modeled cost / legacy modeled cost"),
  recorded: RecordedSpend.nullable().describe(
    "What the session spent by its own usage counters; null for formats without",
  ),
  error: z.string().nullable().describe("Why the file was not compared (one line), or null"),
});
export type SessionRow = z.infer<typeof SessionRow>;

export const SessionComparison = z.strictObject({
  folder: z.string(),
  sessions: z.array(SessionRow),
  total: z.strictObject({
    sessions: count,
    refused: count,
    events: count,
    compactions: count,
    legacy: PolicyFigures,
    bounded: PolicyFigures,
    bytes_ratio: z.number().nullable(),
    cost_ratio: z.number().nullable(),
    recorded_cost: money.describe("Σ recorded spend; null when a session's is unknown"),
  }),
}).describe("Sessions replayed under legacy and bounded (loom replay FOLDER --compare --json)");
export type SessionComparison = z.infer<typeof SessionComparison>;

/** How a session's model caches and what it costs, from the model table; provider from the session's format. */
export type SessionModel = {
  provider: ModelProvider;
  id: string;
  price: ModelPrice | null;
  layout: "breakpoints" | "automatic";
  minTokens: number;
};

export function sessionModel(
  { format, model }: { format: string; model: string },
  { table = BUILT_IN_MODELS, prices = BUILT_IN_PRICES }: { table?: ModelTable; prices?: PriceTable } = {},
): SessionModel {
  const provider: ModelProvider = format === "claude-code" ? "anthropic" : "openai";
  const resolved = resolveModel(table, provider, model);
  const rules = resolved.entry.cache;
  return {
    provider,
    id: resolved.id,
    price: resolved.known ? priceOf(prices, resolved.key) : null,
    layout: rules?.breakpoints === "explicit" ? "breakpoints" : "automatic",
    minTokens: rules?.min_tokens ?? 1024,
  };
}

/**
 * How a meter renders each request into its cache blocks: each event once for the whole replay (the default, the
 * same blocks in time linear in the events), or every request whole, as the adapter sends it (the reference the
 * default is tested against).
 */
export type BlockRendering = "each-event-once" | "whole-request";

/** Measures each request a replay sent, as the session model's adapter would lay it out for its cache. */
export class RequestMeter {
  readonly #model: SessionModel;
  readonly #cache: CacheEstimate;
  readonly #blocks: (request: TurnRequest) => EstimateBlock[];
  requests = 0;
  bytes = 0;
  maxBytes = 0;
  over64k = 0;
  /** Tokens read from the expected cache, and the rest of the prompts. */
  #read = 0;
  #rest = 0;

  constructor(model: SessionModel, { rendering = "each-event-once" }: { rendering?: BlockRendering } = {}) {
    this.#model = model;
    const renderer = new CacheBlockRenderer(model);
    this.#blocks = rendering === "whole-request" ? (r) => cacheBlocks(r, model) : (r) => renderer.blocks(r);
    this.#cache = new CacheEstimate({
      mode: model.layout,
      minTokens: model.minTokens,
      lookback: ANTHROPIC_LOOKBACK_BLOCKS,
    });
  }

  /** One request's size, as the run report counts it (request_bytes). */
  size(requestBytes: number): void {
    this.requests += 1;
    this.bytes += requestBytes;
    this.maxBytes = Math.max(this.maxBytes, requestBytes);
    if (requestBytes > LARGE_REQUEST_BYTES) this.over64k += 1;
  }

  /** One request's body as the session model's cache sees it (measured as it is sent: no request is kept). */
  cache(request: TurnRequest): void {
    const { prompt_bytes, expected_bytes } = this.#cache.read(this.#blocks(request));
    this.#read += expected_bytes / BYTES_PER_TOKEN;
    this.#rest += (prompt_bytes - expected_bytes) / BYTES_PER_TOKEN;
  }

  figures(): PolicyFigures {
    const price = this.#model.price;
    const rest = price === null
      ? null
      : this.#model.layout === "breakpoints"
      ? price.cache_write_5m ?? price.input
      : price.input;
    return {
      requests: this.requests,
      bytes: this.bytes,
      max_request_bytes: this.maxBytes,
      over_64k: this.over64k,
      modeled_cost: price === null || rest === null ? null : (this.#read * price.cache_read + this.#rest * rest) / 1e6,
    };
  }
}

/** What the session's recorded usage cost at the table's prices, each call at its own model's. */
function recordedSpend(
  facts: SessionFacts,
  { prices = BUILT_IN_PRICES, table = BUILT_IN_MODELS }: { prices?: PriceTable; table?: ModelTable } = {},
): z.infer<typeof RecordedSpend> {
  const sum = { input: 0, cache_write: 0, cache_read: 0, output: 0 };
  let cost: number | null = 0;
  facts.usages.forEach((usage: Usage, i) => {
    sum.input += usage.input ?? 0;
    sum.cache_write += usage.cache_write ?? 0;
    sum.cache_read += usage.cache_read ?? 0;
    sum.output += usage.output ?? 0;
    const model = sessionModel({ format: facts.format, model: facts.call_models[i] ?? facts.model }, { table, prices });
    const priced = costOf(usage, model.price);
    cost = cost === null || priced === null ? null : cost + priced.total;
  });
  return { calls: facts.usages.length, usage: sum, cost };
}

const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);

/** One compared session's row. */
export function sessionRow(
  { file, format, facts, events, legacy, bounded }: {
    file: string;
    format: string;
    facts: SessionFacts | null;
    events: number;
    legacy: PolicyFigures;
    bounded: PolicyFigures;
  },
  { model }: { model: string },
): SessionRow {
  return {
    file,
    format,
    model,
    subagent: facts?.subagent ?? false,
    events,
    compactions: facts?.compactions.length ?? 0,
    compaction_lines: facts?.compactions ?? [],
    skipped_sidechain_lines: facts?.skipped_sidechain_lines ?? 0,
    legacy,
    bounded,
    bytes_ratio: ratio(bounded.bytes, legacy.bytes),
    cost_ratio: ratio(bounded.modeled_cost, legacy.modeled_cost),
    recorded: facts ? recordedSpend(facts) : null,
    error: null,
  };
}

/** A file that could not be compared: one line saying why. */
export function refusedRow(file: string, error: string): SessionRow {
  return {
    file,
    format: "?",
    model: "?",
    subagent: false,
    events: 0,
    compactions: 0,
    compaction_lines: [],
    skipped_sidechain_lines: 0,
    legacy: null,
    bounded: null,
    bytes_ratio: null,
    cost_ratio: null,
    recorded: null,
    error,
  };
}

function emptyFigures(): PolicyFigures {
  return { requests: 0, bytes: 0, max_request_bytes: 0, over_64k: 0, modeled_cost: 0 };
}

function addFigures(into: PolicyFigures, from: PolicyFigures): void {
  into.requests += from.requests;
  into.bytes += from.bytes;
  into.max_request_bytes = Math.max(into.max_request_bytes, from.max_request_bytes);
  into.over_64k += from.over_64k;
  into.modeled_cost = into.modeled_cost === null || from.modeled_cost === null
    ? null
    : into.modeled_cost + from.modeled_cost;
}

/** The rows and their total (a cost is null in the total when one session's is unknown). */
export function sessionComparison(folder: string, rows: SessionRow[]): SessionComparison {
  const legacy = emptyFigures();
  const bounded = emptyFigures();
  let recorded: number | null = 0;
  const compared = rows.filter((r) => r.error === null);
  for (const r of compared) {
    if (r.legacy) addFigures(legacy, r.legacy);
    if (r.bounded) addFigures(bounded, r.bounded);
    recorded = recorded === null || !r.recorded || r.recorded.cost === null ? null : recorded + r.recorded.cost;
  }
  return {
    folder,
    sessions: rows,
    total: {
      sessions: compared.length,
      refused: rows.length - compared.length,
      events: compared.reduce((n, r) => n + r.events, 0),
      compactions: compared.reduce((n, r) => n + r.compactions, 0),
      legacy,
      bounded,
      bytes_ratio: ratio(bounded.bytes, legacy.bytes),
      cost_ratio: ratio(bounded.modeled_cost, legacy.modeled_cost),
      recorded_cost: recorded,
    },
  };
}
