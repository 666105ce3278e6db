// The benchmark's measuring instruments: the caching cost models, the peers and the visibility proxy. They decide
// which design changes are kept, so they are tested like product code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ContenderRun, emptyContenderRun } from "../bench/compare.ts";
import { type ComparisonRow, summarizeFrontier } from "../bench/comparison.ts";
import { RunCost } from "../bench/cost.ts";
import { PRICE_SCENARIOS, scenarioCost } from "../bench/prices.ts";
import type { System } from "../bench/workloads.ts";
import { Clearing, maskObservations } from "../bench/peers.ts";
import { emptyVisibility, identifiers, learnedIdentifiers, scoreStep } from "../bench/visibility.ts";
import type { TurnRequest } from "../lib/vocabulary/turn.ts";
import { openhandsStyleRecording } from "./fixtures/openhands-style.ts";

const request = (events: unknown[], { instructions = "I".repeat(8000), task = "choose" } = {}): TurnRequest => ({
  phase: "selection",
  response_schema: { type: "object" },
  sections: [
    { section: "instructions", text: instructions },
    { section: "intent", text: "fix it" },
    { section: "events", events },
    { section: "candidates", task },
  ],
});
const events = (n: number, bytes = 3000) =>
  Array.from({ length: n }, (_, i) => ({ step: i + 1, output: `${"o".repeat(bytes)}${i}` }));

test("cost: a request whose prefix an earlier request wrote reads it from the Anthropic and OpenAI caches", () => {
  const run = new RunCost();
  run.add(request(events(1)));
  assert.equal(run.totals.cachedTokens.anthropic, 0, "the first request reads nothing");
  assert.equal(run.totals.cachedTokens.openai, 0);
  run.add(request(events(2)));
  // Anthropic: tools + system were written by the first request; OpenAI: 1,024 tokens then 128-token steps.
  assert.ok(run.totals.cachedTokens.anthropic >= 2000, `${run.totals.cachedTokens.anthropic}`);
  assert.equal((run.totals.cachedTokens.openai - 1024) % 128, 0);
  assert.ok(run.totals.cachedTokens.openai >= 2048);
  // Cheaper than without a cache, under every caching model.
  for (const m of ["anthropic", "gpt-4.1", "gpt-5"] as const) {
    assert.ok(run.totals.cost[m] < run.totals.cost["no cache"]);
  }
});

test("price scenarios come from the model table: Sonnet 5.5 reads at 0.1x, Opus 5.5 at 0.05x, Fable 5.1 at 0.025x, GPT-5.6 writes at 1.25x", () => {
  const rates = Object.fromEntries(PRICE_SCENARIOS.map((s) => [s.id, [s.model, s.write, s.read]]));
  assert.deepEqual(rates, {
    anthropic: ["anthropic/claude-sonnet-5-5", 1.25, 0.1],
    "anthropic-1h": ["anthropic/claude-sonnet-5-5", 2, 0.1],
    "anthropic-r0.05": ["anthropic/claude-opus-5-5", 1.25, 0.05],
    "anthropic-r0.025": ["anthropic/claude-fable-5-1", 1.25, 0.025],
    "anthropic-min4096": ["anthropic/claude-haiku-4-5", 1.25, 0.1],
    "gpt-4.1": ["openai/gpt-4.1", 1, 0.25],
    "gpt-5": ["openai/gpt-5", 1, 0.1],
    "gpt-5.6": ["openai/gpt-5.6-sol", 1.25, 0.1],
  });
  // OpenAI writes: what a request caches beyond what it read; billed only from GPT-5.6 on.
  const run = new RunCost();
  run.add(request(events(1)));
  run.add(request(events(2)));
  assert.ok(run.totals.openaiWriteTokens > 0);
  const gpt5 = PRICE_SCENARIOS.find((s) => s.id === "gpt-5")!;
  const gpt56 = PRICE_SCENARIOS.find((s) => s.id === "gpt-5.6")!;
  const premium = scenarioCost(run.totals, gpt56) - scenarioCost(run.totals, gpt5);
  assert.ok(Math.abs(premium - 0.25 * run.totals.openaiWriteTokens) < 1e-9, `${premium}`);
});

test("cost: the Anthropic minimum cacheable prompt is the model's: 512 tokens for Sonnet 5.5, 4,096 for Haiku 4.5", () => {
  const medium = request(events(1, 100), { instructions: "I".repeat(3000) });
  const sonnet = new RunCost();
  const haiku = new RunCost({ anthropicModel: "anthropic/claude-haiku-4-5" });
  for (const run of [sonnet, haiku]) {
    run.add(medium);
    run.add(medium);
  }
  assert.ok(sonnet.totals.cachedTokens.anthropic > 0, "~800 tokens: cached at a 512-token minimum");
  assert.equal(haiku.totals.cachedTokens.anthropic, 0, "not at 4,096");
});

test("cost: nothing is cached below the minimum (OpenAI 1,024 tokens, Anthropic 512 for Sonnet 5.5)", () => {
  const run = new RunCost();
  const small = request(events(1, 100), { instructions: "short" });
  run.add(small);
  run.add(small);
  assert.equal(run.totals.cachedTokens.anthropic, 0);
  assert.equal(run.totals.cachedTokens.openai, 0);
  assert.equal(run.totals.cost.anthropic, run.totals.cost["no cache"]);
});

test("cost: a changed response format starts a new OpenAI cache chain", () => {
  const run = new RunCost();
  run.add(request(events(2)));
  run.add({ ...request(events(2)), response_schema: { type: "object", properties: { x: { type: "string" } } } });
  assert.equal(run.totals.cachedTokens.openai, 0);
});

test("cost: the sections' costs add up to the whole", () => {
  const run = new RunCost();
  for (let n = 1; n <= 5; n++) run.add(request(events(n)));
  for (const model of ["anthropic", "gpt-5"] as const) {
    const parts = Object.values(run.totals.sections[model]).reduce((a, b) => a + b, 0);
    // The OpenAI stream has two one-byte message separators per request that no section owns.
    assert.ok(Math.abs(parts - run.totals.cost[model]) < 2 * run.totals.requests, `${model}: ${parts}`);
  }
});

test("masking keeps the last M outputs whole and replaces older ones with one line", () => {
  const masked = maskObservations(request(events(7, 50)), 5);
  const shown = (masked.sections[2] as { events: { output: string }[] }).events.map((e) => e.output);
  assert.deepEqual(shown.slice(0, 2), ["Old output omitted (1 line)", "Old output omitted (1 line)"]);
  assert.deepEqual(shown.slice(2), events(7, 50).slice(2).map((e) => e.output));
});

test("clearing waits for the trigger, keeps the last 3 results and stays cleared", () => {
  const clearing = new Clearing();
  const small = clearing.apply(request(events(3, 1000), { instructions: "short" }));
  assert.equal(JSON.stringify(small).includes("cleared"), false, "under the trigger nothing is cleared");
  const big = clearing.apply(request(events(30, 2000), { instructions: "short" }));
  const outputs = (big.sections[2] as { events: { output: string }[] }).events.map((e) => e.output);
  assert.equal(outputs.filter((o) => o.startsWith("Tool result cleared")).length, 27);
  assert.equal(clearing.clearings, 1);
  const next = clearing.apply(request(events(31, 2000), { instructions: "short" }));
  const after = (next.sections[2] as { events: { output: string }[] }).events.map((e) => e.output);
  assert.equal(
    after.filter((o) => o.startsWith("Tool result cleared")).length,
    27,
    "no new clearing below the minimum",
  );
});

test("identifiers are paths, dotted symbols and names with underscores or camelCase, not plain words", () => {
  const found = identifiers(
    "grep -n 'def separability_matrix' astropy/modeling/separable.py | head -5 && np.sum x getValue the",
  );
  assert.deepEqual([...found].sort(), ["astropy/modeling/separable.py", "getValue", "np.sum", "separability_matrix"]);
});

test("visibility counts only identifiers learned from earlier observations, searched outside the checkpoint", () => {
  const recording = openhandsStyleRecording(7, { steps: 14 });
  const learned = learnedIdentifiers(recording);
  const given = `${recording.header.slice.intent}${recording.header.slice.instructions}`;
  const observed = new Set<string>();
  for (const e of recording.executions) {
    for (const id of learned.get(e.step) ?? []) {
      assert.ok([...observed].some((text) => text.includes(id)), `${id} was observed before step ${e.step}`);
      assert.ok(!given.includes(id));
    }
    for (const text of Object.values(e.results)) observed.add(text);
  }
  const into = emptyVisibility();
  const withCheckpoint: TurnRequest = {
    ...request([]),
    sections: [{ section: "checkpoint", checkpoint: { index: "pkg/core/parse_0.py" } }, ...request([]).sections],
  };
  scoreStep(into, ["pkg/core/parse_0.py"], withCheckpoint);
  assert.deepEqual(into, { steps: 1, identifiers: 1, visible: 0 });
});

test("the synthetic OpenHands-style fixture has whole-file views of 5-30 KB", () => {
  const recording = openhandsStyleRecording(3, { steps: 36 });
  const views = recording.executions.filter((e) => e.action === "read_file").map((e) =>
    Object.values(e.results)[0].length
  );
  assert.ok(views.length >= 5);
  for (const bytes of views) assert.ok(bytes >= 5_000 && bytes <= 36_000, `${bytes}`);
});

test("the frontier pools each preview size over the shipped systems against the same legacy runs", () => {
  const run = (bytes: number, anthropic: number, visible: number, identifiers: number, checkpoints: number | null) => {
    const r = emptyContenderRun();
    r.calls = 10;
    r.bytes = bytes;
    r.maxBytes = bytes / 10;
    r.costs.cost.anthropic = anthropic;
    r.costs.cost["gpt-4.1"] = anthropic;
    r.costs.cost["gpt-5"] = anthropic;
    r.visibility = { steps: 5, identifiers, visible };
    r.checkpoints = checkpoints;
    return r;
  };
  const row = (system: System, legacy: ContenderRun): ComparisonRow => ({
    system,
    name: system,
    runs: { legacy } as ComparisonRow["runs"],
  });
  const rows = [
    row("mini-swe-agent", run(1000, 100, 10, 10, null)),
    row("synthetic openhands-calibrated", run(5000, 500, 10, 10, null)),
  ];
  const variants = new Map([
    ["512 B", [run(400, 60, 8, 10, 1), run(100, 10, 5, 10, 0)]],
    ["2 KiB", [run(500, 70, 9, 10, 2), run(200, 20, 7, 10, 0)]],
  ]);
  const [small, large] = summarizeFrontier(rows, variants, (s) => s !== "synthetic openhands-calibrated");
  // Only the shipped system is pooled; the synthetic one is reported by system.
  assert.equal(small.previews, "512 B");
  assert.equal(small.bytes_ratio, 0.4);
  assert.equal(small.cost_ratio.anthropic, 0.6);
  assert.equal(small.visibility, 0.8);
  assert.equal(small.checkpoints_per_100_calls, 10);
  assert.deepEqual(large.visibility_by_system, { "mini-swe-agent": 0.9, "synthetic openhands-calibrated": 0.7 });
  assert.equal(large.cost_ratio["gpt-5"], 0.7);
});
