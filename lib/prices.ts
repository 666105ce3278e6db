// Money (SPEC §6, §12): a dated price table, and the cost the provider-reported counters imply at it. A counter the
// provider did not report makes the cost null (counted apart), never an estimate from bytes.
import { z } from "zod";
import { UsageError } from "./errors.ts";
import { describeJsonFailure, parseJsonc } from "./text/json-text.ts";
import type { Usage } from "./vocabulary/turn.ts";
import { describeIssues, MISSING_FIELDS } from "./text/zod-error.ts";
import { BUILT_IN_MODELS } from "./models/built-in.ts";
import type { ModelTable } from "./models/models.ts";
import { formatModelRef, modelRefText, parseModelRef } from "./models/provider-kinds.ts";
import { priceCuts } from "./models/price-floor.ts";

/** A list price is above zero: a zero rate makes a run's cost zero, and --max-cost would never stop it. */
const Rate = z.number().positive();

const ModelPrice = z.strictObject({
  input: Rate.describe("USD per million uncached input tokens"),
  output: Rate.describe("USD per million output tokens"),
  cache_read: Rate.describe("USD per million input tokens read from the prompt cache (OpenAI: cached input)"),
  cache_write_5m: Rate.optional().describe(
    "USD per million tokens written to a 5-minute cache (Anthropic; Loom's cache breakpoints use it)",
  ),
  cache_write_1h: Rate.optional().describe("USD per million tokens written to a 1-hour cache (Anthropic)"),
  cache_write: Rate.optional().describe(
    "USD per million tokens written to a cache the provider manages and bills (OpenAI GPT-5.6 and later)",
  ),
  long_prompt: z.strictObject({
    above_tokens: z.number().int().positive().describe("Prompt tokens (input, cache reads and writes) above which"),
    input: z.number().positive().describe("Multiplier of every input rate"),
    output: z.number().positive().describe("Multiplier of the output rate"),
  }).optional().describe("A long-prompt tier: the whole call billed at multiples of the rates (docs/providers.md)"),
  source: z.string().min(1).describe("Where the prices were read (a URL)"),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "expected YYYY-MM-DD").describe("When they were read"),
});
export type ModelPrice = z.infer<typeof ModelPrice>;

export const PriceTable = z.strictObject({
  $schema: z.string().optional().describe("JSON Schema of this file (loom schema prices); ignored by Loom"),
  currency: z.literal("USD").describe("Every rate is in US dollars"),
  models: z.record(
    modelRefText(),
    ModelPrice,
  ).describe('Prices by "PROVIDER/MODEL" as loom run --model names it'),
}).describe("A Loom price table (loom eval --prices FILE): overrides or adds to the built-in one");
export type PriceTable = z.infer<typeof PriceTable>;

/** The price entries of a model table (the built-in one, or merged with a models file). */
export function pricesOf(models: ModelTable): PriceTable {
  // An alias costs what its model costs: "openai/gpt-5.6" is priced as "openai/gpt-5.6-sol".
  const entries = Object.entries(models.models).flatMap(([key, entry]) => {
    if (!entry.prices) return [];
    const [source = ""] = entry.source.split(" "); // split always yields a first part
    const price = { ...entry.prices, source, date: entry.date };
    const ref = parseModelRef(key);
    const aliases = ref === null ? [] : (entry.aliases ?? []).map((id) => formatModelRef({ ...ref, id }));
    return [key, ...aliases].map((k) => [k, price] as const);
  });
  return { currency: "USD", models: Object.fromEntries(entries) };
}

/** The built-in prices: those of the built-in model table (lib/models/built-in.ts), each with its source and date. */
export const BUILT_IN_PRICES: PriceTable = pricesOf(BUILT_IN_MODELS);

export const Cost = z.strictObject({
  currency: z.literal("USD"),
  input: z.number().nonnegative().describe("Uncached input"),
  output: z.number().nonnegative(),
  cache_read: z.number().nonnegative(),
  cache_write: z.number().nonnegative().describe(
    "Cache writes: 1-hour writes at the 1-hour rate, the others at the 5-minute rate (Anthropic) or the billed " +
      "write rate (OpenAI)",
  ),
  total: z.number().nonnegative(),
  prices: z.strictObject({ source: z.string(), date: z.string() }).describe("The price entry used"),
  recorded: z.literal(true).optional().describe(
    "A replay's cost: the recorded run's counters at this price table, not money the replay spent; absent on a " +
      "run's own cost (since loom 0.6.0)",
  ),
}).describe("Money the provider-reported counters imply at a dated price table");
export type Cost = z.infer<typeof Cost>;

/** The table with `override`'s entries replacing or adding to the built-in ones. */
export function mergePrices(base: PriceTable, override: PriceTable | null): PriceTable {
  return override ? { currency: "USD", models: { ...base.models, ...override.models } } : base;
}

/**
 * How `override` undercuts `base` for the same model ("openai/gpt-5.6-luna: input 0.2 → 0.15"; a rate or tier `base`
 * has and `override` leaves out counts as "(absent)"), held to the floor of every price field, the long-prompt tier
 * included (models/price-floor.ts): what loom eval --prices accepts only when told to.
 */
export function lowerPrices(base: PriceTable, override: PriceTable): string[] {
  return Object.entries(override.models).flatMap(([key, price]) => {
    const floor = Object.hasOwn(base.models, key) ? base.models[key] : undefined;
    return floor === undefined ? [] : priceCuts(floor, price).map((cut) => `${key}: ${cut.change}`);
  });
}

/** The entry of "PROVIDER/MODEL"; a bare model id (a catalog model's) matches when exactly one provider lists it. */
export function priceOf(table: PriceTable, model: string): ModelPrice | null {
  const exact = Object.hasOwn(table.models, model) ? table.models[model] : undefined;
  if (exact !== undefined) return exact;
  const [only, ...others] = Object.keys(table.models).filter((key) => parseModelRef(key)?.id === model);
  return only !== undefined && others.length === 0 ? table.models[only] ?? null : null;
}

/**
 * The cost of `usage` at `price`, or null when the model has no price or the provider reported no input or output
 * counter. A cache counter the provider does not have (null) costs nothing: there was no such traffic to bill.
 */
export function costOf(usage: Usage, price: ModelPrice | null): Cost | null {
  if (price === null || usage.input === null || usage.output === null) return null;
  // A long prompt bills the whole call at the tier's multiples (per call: a usage is one call's counters).
  const tier = price.long_prompt;
  const prompt = usage.input + (usage.cache_read ?? 0) + (usage.cache_write ?? 0);
  if (tier && prompt > tier.above_tokens) price = scaled(price, tier.input, tier.output);
  const money = (tokens: number | null, rate: number | undefined) => ((tokens ?? 0) * (rate ?? 0)) / 1e6;
  const parts = {
    input: money(usage.input, price.input),
    output: money(usage.output, price.output),
    cache_read: money(usage.cache_read, price.cache_read),
    cache_write: cacheWriteCost(usage, price),
  };
  return {
    currency: "USD",
    ...parts,
    total: parts.input + parts.output + parts.cache_read + parts.cache_write,
    prices: { source: price.source, date: price.date },
  };
}

/**
 * The cost of several calls: each call's counters at its own tier when the price has a long-prompt tier, else the
 * summed counters at the one rate (the same money, one rounding).
 */
export function costOfCalls(
  usages: readonly Usage[],
  price: ModelPrice | null,
  { total }: { total: Usage },
): Cost | null {
  if (!price?.long_prompt) return costOf(total, price);
  const costs = usages.map((usage) => costOf(usage, price));
  const whole = costOf(total, price);
  if (whole === null || costs.some((cost) => cost === null)) return whole;
  const sum = (part: "input" | "output" | "cache_read" | "cache_write" | "total") =>
    costs.reduce((n, cost) => n + (cost?.[part] ?? 0), 0);
  return {
    ...whole,
    input: sum("input"),
    output: sum("output"),
    cache_read: sum("cache_read"),
    cache_write: sum("cache_write"),
    total: sum("total"),
  };
}

function scaled(price: ModelPrice, input: number, output: number): ModelPrice {
  const times = (rate: number | undefined) => (rate === undefined ? undefined : rate * input);
  const { long_prompt: _, ...rest } = price;
  return {
    ...rest,
    input: price.input * input,
    output: price.output * output,
    cache_read: price.cache_read * input,
    ...(price.cache_write_5m !== undefined ? { cache_write_5m: times(price.cache_write_5m) } : {}),
    ...(price.cache_write_1h !== undefined ? { cache_write_1h: times(price.cache_write_1h) } : {}),
    ...(price.cache_write !== undefined ? { cache_write: times(price.cache_write) } : {}),
  };
}

/**
 * Writes cost by lifetime: the 1-hour part at the 1-hour rate (2x input), the rest at the 5-minute rate (1.25x) or,
 * for a provider that bills its own cache writes (OpenAI GPT-5.6+: 1.25x), at that rate; else at the input rate.
 */
function cacheWriteCost(usage: Usage, price: ModelPrice): number {
  const all = usage.cache_write ?? 0;
  const hour = Math.min(all, usage.cache_write_1h ?? 0);
  const other = price.cache_write_5m ?? price.cache_write ?? price.input;
  return ((all - hour) * other + hour * (price.cache_write_1h ?? other)) / 1e6;
}

export function parsePrices(text: string, { file }: { file: string }): PriceTable {
  const where = `Invalid price table ${JSON.stringify(file)}`;
  const json = parseJsonc(text);
  if (!json.ok) throw new UsageError(`${where}: ${describeJsonFailure(json)}`, "prices_invalid");
  const parsed = PriceTable.safeParse(json.value, { error: MISSING_FIELDS });
  if (parsed.success) return parsed.data;
  throw new UsageError(`${where}: ${describeIssues(parsed.error, { schema: PriceTable }).slice(0, 3).join("; ")}`);
}
