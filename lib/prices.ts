// Money (SPEC §6, §12): a dated price table, and the cost the provider-reported counters imply at it. A counter the
// provider did not report makes the cost null (counted apart), never an estimate from bytes.
import { z } from "zod";
import { UsageError } from "./errors.ts";
import { describeJsonFailure, parseJsonc } from "./text/json-text.ts";
import type { Usage } from "./vocabulary/turn.ts";
import { describeIssues, MISSING_FIELDS } from "./text/zod-error.ts";

const Rate = z.number().nonnegative();

const ModelPrice = z.strictObject({
  input: Rate.describe("USD per million uncached input tokens"),
  output: Rate.describe("USD per million output tokens"),
  cache_read: Rate.describe("USD per million input tokens read from the prompt cache (OpenAI: cached input)"),
  cache_write_5m: Rate.optional().describe(
    "USD per million tokens written to a 5-minute cache (Anthropic; Loom's cache breakpoints use it)",
  ),
  cache_write_1h: Rate.optional().describe("USD per million tokens written to a 1-hour cache (Anthropic)"),
  source: z.string().min(1).describe("Where the prices were read (a URL)"),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "expected YYYY-MM-DD").describe("When they were read"),
});
export type ModelPrice = z.infer<typeof ModelPrice>;

export const PriceTable = z.strictObject({
  $schema: z.string().optional().describe("JSON Schema of this file (loom schema prices); ignored by Loom"),
  currency: z.literal("USD").describe("Every rate is in US dollars"),
  models: z.record(
    z.string().regex(/^[a-z0-9-]+\/.+$/, "expected PROVIDER/MODEL"),
    ModelPrice,
  ).describe('Prices by "PROVIDER/MODEL" as loom run --model names it'),
}).describe("A Loom price table (loom eval --prices FILE): overrides or adds to the built-in one");
export type PriceTable = z.infer<typeof PriceTable>;

const ANTHROPIC_SOURCE = "https://docs.anthropic.com/en/docs/about-claude/pricing";
const OPENAI_SOURCE = "https://openai.com/api/pricing/";
const READ = "2025-10-01";

const anthropic = (input: number, output: number): ModelPrice => ({
  input,
  output,
  cache_write_5m: input * 1.25,
  cache_write_1h: input * 2,
  cache_read: input / 10,
  source: ANTHROPIC_SOURCE,
  date: READ,
});
const openai = (input: number, cached: number, output: number): ModelPrice => ({
  input,
  output,
  cache_read: cached,
  source: OPENAI_SOURCE,
  date: READ,
});

/** The built-in table: the models Loom's docs name, at list prices on the date given. */
export const BUILT_IN_PRICES: PriceTable = {
  currency: "USD",
  models: {
    "anthropic/claude-sonnet-4-5": anthropic(3, 15),
    "anthropic/claude-haiku-4-5": anthropic(1, 5),
    "anthropic/claude-opus-4-1": anthropic(15, 75),
    "openai/gpt-4o-2024-08-06": openai(2.5, 1.25, 10),
    "openai/gpt-4o": openai(2.5, 1.25, 10),
    "openai/gpt-4.1": openai(2, 0.5, 8),
    "openai/gpt-4.1-mini": openai(0.4, 0.1, 1.6),
    "openai/gpt-5": openai(1.25, 0.125, 10),
  },
};

export const Cost = z.strictObject({
  currency: z.literal("USD"),
  input: z.number().nonnegative().describe("Uncached input"),
  output: z.number().nonnegative(),
  cache_read: z.number().nonnegative(),
  cache_write: z.number().nonnegative().describe("Cache writes at the 5-minute rate (the cache Loom marks)"),
  total: z.number().nonnegative(),
  prices: z.strictObject({ source: z.string(), date: z.string() }).describe("The price entry used"),
}).describe("Money the provider-reported counters imply at a dated price table");
export type Cost = z.infer<typeof Cost>;

/** The table with `override`'s entries replacing or adding to the built-in ones. */
export function mergePrices(base: PriceTable, override: PriceTable | null): PriceTable {
  return override ? { currency: "USD", models: { ...base.models, ...override.models } } : base;
}

/** The entry of "PROVIDER/MODEL"; a bare model id (a catalog model's) matches when exactly one provider lists it. */
export function priceOf(table: PriceTable, model: string): ModelPrice | null {
  if (Object.hasOwn(table.models, model)) return table.models[model];
  const matches = Object.keys(table.models).filter((key) => key.slice(key.indexOf("/") + 1) === model);
  return matches.length === 1 ? table.models[matches[0]] : null;
}

/**
 * The cost of `usage` at `price`, or null when the model has no price or the provider reported no input or output
 * counter. A cache counter the provider does not have (null) costs nothing: there was no such traffic to bill.
 */
export function costOf(usage: Usage, price: ModelPrice | null): Cost | null {
  if (price === null || usage.input === null || usage.output === null) return null;
  const money = (tokens: number | null, rate: number | undefined) => ((tokens ?? 0) * (rate ?? 0)) / 1e6;
  const parts = {
    input: money(usage.input, price.input),
    output: money(usage.output, price.output),
    cache_read: money(usage.cache_read, price.cache_read),
    cache_write: money(usage.cache_write, price.cache_write_5m ?? price.input),
  };
  return {
    currency: "USD",
    ...parts,
    total: parts.input + parts.output + parts.cache_read + parts.cache_write,
    prices: { source: price.source, date: price.date },
  };
}

export function parsePrices(text: string, { file }: { file: string }): PriceTable {
  const where = `Invalid price table ${JSON.stringify(file)}`;
  const json = parseJsonc(text);
  if (!json.ok) throw new UsageError(`${where}: ${describeJsonFailure(json)}`, "prices_invalid");
  const parsed = PriceTable.safeParse(json.value, { error: MISSING_FIELDS });
  if (parsed.success) return parsed.data;
  throw new UsageError(`${where}: ${describeIssues(parsed.error, { schema: PriceTable }).slice(0, 3).join("; ")}`);
}
