// The price floor (issue 42): what a models file, an installed update or an eval price file may not do to a model's
// prices without the user's flag — make any request cheaper. --max-cost and the reported cost rest on them, so every
// price-shaped field counts: each rate, each cache-write lifetime, and the long-prompt tier (its threshold and both
// multiples), not only the base rates.

/** The price fields of a model, as lib/models/models.ts and lib/prices.ts both write them (USD per million tokens). */
export type Rates = {
  input: number;
  output: number;
  cache_read: number;
  cache_write_5m?: number | undefined;
  cache_write_1h?: number | undefined;
  cache_write?: number | undefined;
  long_prompt?: { above_tokens: number; input: number; output: number } | undefined;
};

/** Every price field the floor holds; a field added to the prices schemas must be added here (a test checks). */
export const PRICE_FIELDS = [
  "input",
  "output",
  "cache_read",
  "cache_write_5m",
  "cache_write_1h",
  "cache_write",
  "long_prompt",
] as const satisfies readonly (keyof Rates)[];

const RATES = ["input", "output", "cache_read", "cache_write_5m", "cache_write_1h", "cache_write"] as const;

/** One way a price file undercuts the floor. */
export type PriceCut = {
  /** "input 0.2 → 0.15": what the listing of accepted lower prices shows. */
  change: string;
  /** "input 0.15 is below Loom's list price 0.2": the refusal, after the field path of the prices. */
  refusal: string;
};

/**
 * How `given` undercuts `floor`; [] when no request costs less at `given`. Field by field: no rate lower or left out,
 * the tier never removed, its threshold no higher, its multiples no lower. Then what a request pays, counter by
 * counter at every prompt length: a field `floor` lacks falls back to another (writes bill at input, 1-hour writes at
 * the 5-minute rate), and a `given` one below that fallback, or a new tier with multiples under 1, is a cut too.
 */
export function priceCuts(floor: Rates, given: Rates): PriceCut[] {
  const cuts: PriceCut[] = [];
  const cut = (field: string, was: number | string, now: number | string, refusal: string) =>
    cuts.push({ change: `${field} ${was} → ${now}`, refusal: `${field} ${now} ${refusal} ${was}` });
  for (const rate of RATES) {
    const value = floor[rate];
    const mine = given[rate];
    if (value !== undefined && !(mine !== undefined && mine >= value)) {
      cut(rate, value, mine ?? "(absent)", "is below Loom's list price");
    }
  }
  const tier = floor.long_prompt;
  const mine = given.long_prompt;
  if (tier !== undefined && mine === undefined) {
    cut("long_prompt", describeTier(tier), "(absent)", "drops Loom's long-prompt tier");
  } else if (tier !== undefined && mine !== undefined) {
    if (mine.above_tokens > tier.above_tokens) {
      cut("long_prompt.above_tokens", tier.above_tokens, mine.above_tokens, "is above Loom's threshold");
    }
    if (mine.input < tier.input) cut("long_prompt.input", tier.input, mine.input, "is below Loom's multiple");
    if (mine.output < tier.output) cut("long_prompt.output", tier.output, mine.output, "is below Loom's multiple");
  }
  if (cuts.length > 0) return cuts;
  // The rates change only past a tier's threshold: the start of each stretch is every length there is.
  const lengths = [0, ...[tier, mine].flatMap((t) => (t === undefined ? [] : [t.above_tokens + 1]))];
  for (const prompt of lengths.sort((a, b) => a - b)) {
    const [low, high] = [billed(floor, prompt), billed(given, prompt)];
    for (const counter of COUNTERS) {
      if (high[counter] < low[counter]) {
        cut(`${counter} at a ${prompt}-token prompt`, low[counter], high[counter], "are billed below Loom's");
      }
    }
  }
  return cuts;
}

function describeTier(tier: NonNullable<Rates["long_prompt"]>): string {
  return `(${tier.input}x input, ${tier.output}x output over ${tier.above_tokens} tokens)`;
}

/** What a request's counters are billed at; `cache writes` are the 5-minute (or only) lifetime's. */
const COUNTERS = ["input", "output", "cache reads", "cache writes", "1-hour cache writes"] as const;

/** The rate each counter is billed at for a call whose prompt is `prompt` tokens (as lib/prices.ts costOf bills). */
function billed(price: Rates, prompt: number): Record<(typeof COUNTERS)[number], number> {
  const tier = price.long_prompt;
  const [inTimes, outTimes] = tier !== undefined && prompt > tier.above_tokens ? [tier.input, tier.output] : [1, 1];
  const write = price.cache_write_5m ?? price.cache_write ?? price.input;
  return {
    input: price.input * inTimes,
    output: price.output * outTimes,
    "cache reads": price.cache_read * inTimes,
    "cache writes": write * inTimes,
    "1-hour cache writes": (price.cache_write_1h ?? write) * inTimes,
  };
}
