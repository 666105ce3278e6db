// A review of issues 42 and 43's model-table fixes: the price floor holds every price-shaped field (the long-prompt
// tier, each cache-write lifetime), not only the base rates; retired dated ids of both providers stop before a call;
// Sonnet 5.5's unsettled cache read keeps the conservative (higher) value.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { main } from "../main.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import {
  ModelEntry,
  type ModelTable,
  overrideProblem,
  resolveModel,
  retirementOf,
  retirementWarningOf,
} from "../lib/models/models.ts";
import { parseModelRef } from "../lib/models/provider-kinds.ts";
import { PRICE_FIELDS, type Rates } from "../lib/models/price-floor.ts";
import { costOf, lowerPrices, type ModelPrice, pricesOf, PriceTable } from "../lib/prices.ts";
import type { Usage } from "../lib/vocabulary/turn.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const TODAY = "2026-12-25";
const SOL = "openai/gpt-6.1-sol";

function sol(): ModelEntry {
  const entry = BUILT_IN_MODELS.models[SOL];
  assert.ok(entry?.prices?.long_prompt, "gpt-6.1-sol has a long-prompt tier");
  return entry;
}

type Out = { code: number; stdout: string; stderr: string };

async function withHome(run: (home: string, loom: (...argv: string[]) => Promise<Out>) => Promise<void>) {
  const home = mkdtempSync(join(tmpdir(), "loom-model-table-review-"));
  const loom = async (...argv: string[]) => {
    const { io, out } = fakeIo({ cwd: home, env: { XDG_CONFIG_HOME: join(home, "config") } });
    io.now = () => Date.parse(TODAY);
    const code = await main(argv, io);
    return { code, stdout: out.stdout, stderr: out.stderr };
  };
  try {
    await run(home, loom);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** One call of 400,000 uncached prompt tokens and 100,000 output tokens: past every 272K tier. */
const LONG_CALL: Usage = { input: 400_000, output: 100_000, cache_read: 0, cache_write: 0 };

const TIER_ATTACKS: Record<string, Rates["long_prompt"] | "remove"> = {
  "multiples of 0.001": { above_tokens: 272_000, input: 0.001, output: 0.001 },
  "the tier removed": "remove",
  "the threshold at 1e9": { above_tokens: 1_000_000_000, input: 2, output: 1.5 },
};

function withTier(entry: ModelEntry, tier: Rates["long_prompt"] | "remove"): ModelEntry {
  assert.ok(entry.prices);
  const { long_prompt: _, ...rates } = entry.prices;
  return { ...entry, prices: tier === "remove" ? rates : { ...rates, long_prompt: tier } };
}

test("a --models file, an installed update or eval --prices cannot cut gpt-6.1-sol's long-prompt tier without --allow-lower-prices", async () => {
  const price = pricesOf(BUILT_IN_MODELS).models[SOL] ?? null;
  const full = costOf(LONG_CALL, price)?.total ?? 0;
  assert.ok(full > 3, `the call costs $${full} at Loom's prices`);
  await withHome(async (home, loom) => {
    let files = 0;
    const file = (value: unknown) => {
      const path = join(home, `file-${files++}.json`);
      writeFileSync(path, JSON.stringify(value));
      return path;
    };
    for (const [name, tier] of Object.entries(TIER_ATTACKS)) {
      const entry = withTier(sol(), tier);
      const cut = costOf(LONG_CALL, { ...entry.prices!, source: "x", date: "2026-12-01" })?.total ?? 0;
      assert.ok(cut < full, `${name}: the call would cost $${cut}, not $${full}`);
      const table = file({ format: 1, currency: "USD", updated: "2026-12-20", models: { [SOL]: entry } });
      const models = await loom("models", "--models", table);
      assert.equal(models.code, 2, `${name}: --models ${models.stderr}`);
      assert.match(models.stderr, /gpt-6\.1-sol.*\.prices\.long_prompt/, name);
      const update = await loom("models", "update", "--from", table);
      assert.equal(update.code, 2, `${name}: update ${update.stderr}`);
      assert.match(update.stderr, /long_prompt.*--allow-lower-prices accepts a lower price/, name);
      const prices = file({
        currency: "USD",
        models: { [SOL]: { ...entry.prices, source: "https://example.com", date: "2026-12-01" } },
      });
      const args = ["eval", join(home, "no-suite"), "--model", SOL, "--sandbox", "off", "--out", join(home, "out")];
      const evaluated = await loom(...args, "--prices", prices);
      assert.equal(evaluated.code, 2, `${name}: eval ${evaluated.stderr}`);
      assert.match(evaluated.stderr, /gpt-6\.1-sol: long_prompt.* is below the model table's price/, name);
      // With the flag: accepted, and listed like any lowered price.
      const allowed = await loom(...args, "--prices", prices, "--allow-lower-prices");
      assert.match(allowed.stderr, /lower price accepted \(--allow-lower-prices\): openai\/gpt-6\.1-sol: long_prompt/);
      const installed = await loom("models", "update", "--from", table, "--allow-lower-prices");
      assert.equal(installed.code, 0, `${name}: ${installed.stderr}`);
      assert.match(
        installed.stdout,
        /lower price accepted \(--allow-lower-prices\): openai\/gpt-6\.1-sol: long_prompt/,
      );
      rmSync(join(home, "config"), { recursive: true, force: true });
    }
  });
});

test("the price floor holds exactly the fields of both prices schemas", () => {
  const models = Object.keys(ModelEntry.shape.prices.unwrap().shape).sort();
  const prices = Object.keys(PriceTable.shape.models.valueType.shape).filter((k) => k !== "source" && k !== "date");
  assert.deepEqual(models, [...PRICE_FIELDS].sort(), "models schema");
  assert.deepEqual(prices.sort(), [...PRICE_FIELDS].sort(), "prices schema");
});

// ---- property: any change that makes some request cheaper is refused without the flag ----

const rate = fc.constantFrom(0.01, 0.1, 0.25, 1, 2, 2.5, 10);
const tier = fc.record({
  above_tokens: fc.constantFrom(100_000, 200_000, 272_000, 1_000_000),
  input: fc.constantFrom(0.5, 1, 2, 5),
  output: fc.constantFrom(0.5, 1, 1.5, 5),
});
/** A prices object with every field of the schema present or not, as the schema allows. */
const prices: fc.Arbitrary<Rates> = fc.record({
  input: rate,
  output: rate,
  cache_read: rate,
  cache_write_5m: fc.option(rate, { nil: undefined }),
  cache_write_1h: fc.option(rate, { nil: undefined }),
  cache_write: fc.option(rate, { nil: undefined }),
  long_prompt: fc.option(tier, { nil: undefined }),
});
/** `floor` changed a little: each field kept, scaled, removed or added, so that most changes touch one or two. */
const edited = (floor: Rates): fc.Arbitrary<Rates> =>
  fc.record({
    input: fc.oneof(fc.constant(floor.input), rate),
    output: fc.oneof(fc.constant(floor.output), rate),
    cache_read: fc.oneof(fc.constant(floor.cache_read), rate),
    cache_write_5m: fc.oneof(fc.constant(floor.cache_write_5m), fc.option(rate, { nil: undefined })),
    cache_write_1h: fc.oneof(fc.constant(floor.cache_write_1h), fc.option(rate, { nil: undefined })),
    cache_write: fc.oneof(fc.constant(floor.cache_write), fc.option(rate, { nil: undefined })),
    long_prompt: fc.oneof(
      fc.constant(floor.long_prompt),
      fc.option(tier, { nil: undefined }),
      floor.long_prompt === undefined ? tier : fc.record({
        above_tokens: fc.constantFrom(floor.long_prompt.above_tokens, floor.long_prompt.above_tokens * 2),
        input: fc.constantFrom(floor.long_prompt.input, floor.long_prompt.input / 2),
        output: fc.constantFrom(floor.long_prompt.output, floor.long_prompt.output / 2),
      }),
    ),
  });
const usage: fc.Arbitrary<Usage> = fc.record({
  input: fc.constantFrom(0, 1_000, 150_000, 300_000, 900_000),
  output: fc.constantFrom(0, 1_000, 50_000),
  cache_read: fc.constantFrom(0, 10_000, 250_000),
  cache_write: fc.constantFrom(0, 5_000, 150_000),
}).chain((u) => fc.constantFrom(0, u.cache_write ?? 0).map((hour) => (hour > 0 ? { ...u, cache_write_1h: hour } : u)));

/** `rates` without the fields it leaves undefined (the schemas take an absent field, not an undefined one). */
const defined = (rates: Rates) => Object.fromEntries(Object.entries(rates).filter(([, v]) => v !== undefined)) as Rates;
const priced = (rates: Rates): ModelPrice => ({ ...defined(rates), source: "https://example.com", date: "2026-12-01" });

test("property: a models file, an update or a price file that makes any request cheaper is refused without the flag", () => {
  const key = "openai/gpt-floor";
  const base = sol();
  fc.assert(
    fc.property(prices.chain((floor) => fc.tuple(fc.constant(floor), edited(floor), usage)), ([floor, given, call]) => {
      const before = costOf(call, priced(floor))?.total ?? 0;
      const after = costOf(call, priced(given))?.total ?? 0;
      const table = (rates: Rates): ModelTable => ({
        format: 1,
        currency: "USD",
        models: { [key]: { ...base, aliases: [], prices: defined(rates) } },
      });
      const review = overrideProblem(table(floor), table(given), { today: TODAY });
      const listed = lowerPrices({ currency: "USD", models: { [key]: priced(floor) } }, {
        currency: "USD",
        models: { [key]: priced(given) },
      });
      if (after < before) {
        assert.ok(review.problem !== null, `refused: $${before} → $${after}`);
        assert.ok(listed.length > 0, `eval --prices lists it: $${before} → $${after}`);
      }
      // With the flag the same change is accepted and listed, never silently.
      const allowed = overrideProblem(table(floor), table(given), { today: TODAY, acceptLowerPrices: true });
      assert.equal(allowed.problem, null);
      if (review.problem !== null) assert.ok(allowed.lowered.length > 0);
      if (review.problem === null) assert.equal(listed.length, 0, "the two entry points agree");
    }),
    { numRuns: 2_000 },
  );
});

// ---- retired ids of both providers, and Sonnet 5.5's cache read ----

test("retired dated ids of both deprecations pages stop before any call, naming a replacement in service", () => {
  const retired: Record<string, [string, string]> = {
    "anthropic/claude-3-7-sonnet-20250219": ["2026-02-19", "claude-sonnet-5-5"],
    "anthropic/claude-3-7-sonnet-latest": ["2026-02-19", "claude-sonnet-5-5"],
    "anthropic/claude-3-5-sonnet-20241022": ["2025-10-28", "claude-sonnet-5-5"],
    "anthropic/claude-3-5-sonnet-20240620": ["2025-10-28", "claude-sonnet-5-5"],
    "anthropic/claude-3-opus-20240229": ["2026-01-05", "claude-opus-5-5"],
    "anthropic/claude-3-sonnet-20240229": ["2025-07-21", "claude-sonnet-5-5"],
    "anthropic/claude-2.1": ["2025-07-21", "claude-sonnet-5-5"],
    "openai/o1": ["2026-10-23", "gpt-5.6-sol"],
    "openai/o1-2024-12-17": ["2026-10-23", "gpt-5.6-sol"],
    "openai/o1-mini": ["2025-10-27", "gpt-5.6-terra"],
    "openai/o1-preview": ["2025-07-28", "gpt-6.1-sol"],
    "openai/gpt-4.5-preview": ["2025-07-14", "gpt-6-luna"],
    "openai/gpt-4o-2024-05-13": ["2026-10-23", "gpt-5.6-sol"],
    "openai/gpt-4": ["2026-10-23", "gpt-5.6-sol"],
    "openai/gpt-4-turbo": ["2026-10-23", "gpt-5.6-sol"],
    "openai/gpt-3.5-turbo": ["2026-10-23", "gpt-5.6-terra"],
    "openai/o3-mini": ["2026-10-23", "gpt-5.6-sol"],
    "openai/o4-mini": ["2026-10-23", "gpt-5.6-terra"],
    "openai/gpt-4.1-nano": ["2026-10-23", "gpt-5.6-luna"],
  };
  for (const [key, [date, replacement]] of Object.entries(retired)) {
    const ref = parseModelRef(key);
    assert.ok(ref, key);
    const model = resolveModel(BUILT_IN_MODELS, ref.provider, ref.id);
    assert.equal(model.known, true, `${key} is in the table`);
    assert.match(
      retirementOf(model, { today: "2026-12-06" }) ?? "",
      new RegExp(`retired on ${date}; use ${replacement}$`),
    );
    // The replacement is itself in service.
    const next = resolveModel(BUILT_IN_MODELS, ref.provider, replacement);
    assert.ok(next.known && (next.entry.retired === null || next.entry.retired.date > "2026-12-06"), replacement);
  }
  // o3-pro shuts down with o3 and warns.
  const pro = resolveModel(BUILT_IN_MODELS, "openai", "o3-pro-2025-06-10");
  assert.match(retirementWarningOf(pro, { today: "2026-12-06" }) ?? "", /shuts down on 2026-12-11/);
});

test("claude-3-7-sonnet-20250219 is refused before any request is sent", async () => {
  await withHome(async (home, loom) => {
    const out = await loom("run", "fix it", "-w", home, "--model", "anthropic/claude-3-7-sonnet-20250219");
    assert.equal(out.code, 3, out.stderr);
    assert.match(out.stderr, /claude-3-7-sonnet-20250219 was retired on 2026-02-19; use claude-sonnet-5-5/);
  });
});

test("Sonnet 5.5's cache read is the conservative $0.20 its stored official page shows, and the note says why", () => {
  const sonnet = BUILT_IN_MODELS.models["anthropic/claude-sonnet-5-5"];
  assert.equal(sonnet?.prices?.cache_read, 0.2);
  assert.match(sonnet?.notes ?? "", /conservative value, the official page's \$0\.20/);
});

test("claude-sonnet-5 with thinking disabled at effort xhigh: no page says the API refuses it, and the entry says what was read", () => {
  const sonnet = BUILT_IN_MODELS.models["anthropic/claude-sonnet-5"];
  assert.ok(sonnet);
  assert.deepEqual(sonnet.rules?.map((rule) => rule.action), ["send_thinking_disabled"], "no refusal rule");
  assert.match(sonnet.notes ?? "", /xhigh or max: no rule, since no page read says the API refuses it/);
  assert.match(sonnet.notes ?? "", /Read on 2026-12-06: the overview/);
  assert.equal(sonnet.date, "2026-12-06");
});
