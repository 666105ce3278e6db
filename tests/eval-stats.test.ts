// The statistics of an evaluation: known values, the verdict's rules, and invariants as properties.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  detectableDifference,
  geometricMeanRatio,
  mcnemarExact,
  meanInterval,
  normalQuantile,
  ratioBootstrap,
  signFlipTest,
  tQuantile,
} from "../lib/eval/stats.ts";
import { decide, summarize } from "../lib/eval/summary.ts";
import { allPairs, parseShard, schedule, shardPairs } from "../lib/eval/matrix.ts";
import type { EvalRow } from "../lib/eval/eval-file.ts";
import { BUILT_IN_PRICES, costOf, priceOf } from "../lib/prices.ts";
import { failureClass, reportsSkippedTests } from "../lib/eval/failure-class.ts";

const close = (a: number, b: number, tolerance: number) =>
  assert.ok(Math.abs(a - b) <= tolerance, `${a} is not within ${tolerance} of ${b}`);

test("quantiles match the tables: z(0.975) = 1.95996, t(0.975) for 1, 2, 5, 11 and 30 degrees of freedom", () => {
  close(normalQuantile(0.975), 1.959964, 1e-6);
  close(normalQuantile(0.8), 0.841621, 1e-6);
  close(tQuantile(0.975, 1), 12.7062, 1e-3);
  close(tQuantile(0.975, 2), 4.3027, 1e-3);
  close(tQuantile(0.975, 5), 2.5706, 2e-3);
  close(tQuantile(0.975, 11), 2.2010, 1e-3);
  close(tQuantile(0.975, 30), 2.0423, 1e-3);
});

test("McNemar's exact p: 0 vs 6 discordant pairs is 2/64; 3 vs 3 is 1; no discordance is 1", () => {
  close(mcnemarExact(0, 6), 2 / 64, 1e-12);
  close(mcnemarExact(1, 9), 2 * (1 + 10) / 1024, 1e-12);
  assert.equal(mcnemarExact(3, 3), 1);
  assert.equal(mcnemarExact(0, 0), 1);
});

test("the sign-flip test is exact over 2^k patterns up to 16 tasks and seeded Monte Carlo past it", () => {
  // Four equal positive differences: only all-plus and all-minus reach the observed |sum|: p = 2/16.
  assert.deepEqual(signFlipTest([0.5, 0.5, 0.5, 0.5]), { p: 2 / 16, exact: true });
  assert.deepEqual(signFlipTest([0, 0, 0]), { p: 1, exact: true });
  const many = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? -0.5 : 1));
  const a = signFlipTest(many, { seed: 7 });
  assert.equal(a.exact, false);
  assert.deepEqual(signFlipTest(many, { seed: 7 }), a, "same seed, same p");
  assert.ok(a.p > 0 && a.p < 0.05, `p = ${a.p}`);
});

test("property: the sign-flip p is in (0, 1], and the same for d and −d", () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: -4, max: 4 }).map((x) => x / 4), { maxLength: 12 }), (d) => {
      const p = signFlipTest(d).p;
      assert.ok(p > 0 && p <= 1);
      assert.equal(signFlipTest(d.map((x) => -x)).p, p);
    }),
  );
});

test("property: the mean interval holds its estimate, and the bootstrap ratio interval holds Σb/Σa", () => {
  fc.assert(
    fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 20 }), (xs) => {
      const interval = meanInterval(xs, { bounds: [0, 1] });
      assert.ok(interval.low <= interval.estimate + 1e-12 && interval.estimate <= interval.high + 1e-12);
    }),
  );
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          a: fc.double({ min: 0.01, max: 5, noNaN: true }),
          b: fc.double({ min: 0.01, max: 5, noNaN: true }),
        }),
        {
          minLength: 1,
          maxLength: 12,
        },
      ),
      (pairs) => {
        const r = ratioBootstrap(pairs, { seed: 3, samples: 300 })!;
        assert.ok(r.low <= r.high);
        close(r.estimate, pairs.reduce((s, p) => s + p.b, 0) / pairs.reduce((s, p) => s + p.a, 0), 1e-9);
      },
    ),
  );
});

test("the geometric mean of per-task ratios, and the detectable difference shrinks with more tasks", () => {
  close(geometricMeanRatio([{ a: 1, b: 2 }, { a: 2, b: 1 }])!, 1, 1e-12);
  const d = [0, 0.5, -0.5, 0, 0.5, 0];
  const small = detectableDifference({ differences: d, within: 0.01 })!;
  const large = detectableDifference({ differences: [...d, ...d, ...d, ...d], within: 0.01 })!;
  // (z₀.₉₇₅ + z₀.₈₀) · √(max(s², within) / T): s² = 0.85/6 here with T = 6, and 3.4/23 with the tasks repeated.
  close(small, 2.8016 * Math.sqrt(0.85 / 6 / 6), 1e-3);
  close(large, 2.8016 * Math.sqrt(2.8333 / 23 / 24), 1e-3);
  assert.ok(large < small);
  close(detectableDifference({ differences: [0, 0, 0, 0], within: 0.04 })!, 2.8016 * Math.sqrt(0.04 / 4), 1e-3);
});

test("verdict: inferior below the margin, inconclusive across it or when not cheaper, else non-inferior and cheaper", () => {
  const cheaper = { low: 0.5, high: 0.8 };
  assert.equal(
    decide({ difference: { low: -0.2, high: -0.06 }, costRatio: cheaper, margin: 0.05 }).verdict,
    "inferior",
  );
  assert.equal(
    decide({ difference: { low: -0.1, high: 0.1 }, costRatio: cheaper, margin: 0.05 }).verdict,
    "inconclusive",
  );
  assert.equal(
    decide({ difference: { low: -0.02, high: 0.1 }, costRatio: { low: 0.9, high: 1.1 }, margin: 0.05 }).verdict,
    "inconclusive",
  );
  assert.equal(
    decide({ difference: { low: -0.02, high: 0.1 }, costRatio: cheaper, margin: 0.05 }).verdict,
    "non_inferior_and_cheaper",
  );
});

test("shards deal whole pairs: every pair in exactly one shard, and the order does not depend on the shard", () => {
  const pairs = allPairs({ tasks: ["a", "b", "c", "d", "e"], models: ["m/x", "m/y"], repeats: 3 });
  const shards = [1, 2, 3].map((index) => shardPairs(pairs, { index, count: 3 }));
  assert.equal(shards.flat().length, pairs.length);
  assert.equal(new Set(shards.flat().map((p) => JSON.stringify(p))).size, pairs.length);
  assert.ok(Math.max(...shards.map((s) => s.length)) - Math.min(...shards.map((s) => s.length)) <= 1);
  const order = schedule(pairs, { policies: ["legacy", "bounded"], seed: "s" });
  assert.deepEqual(schedule(pairs, { policies: ["legacy", "bounded"], seed: "s" }), order);
  assert.notDeepEqual(schedule(pairs, { policies: ["legacy", "bounded"], seed: "t" }), order);
  const firsts = new Set(order.map((p) => p.policies[0]));
  assert.equal(firsts.size, 2, "which policy of a pair runs first is randomised");
  assert.equal(parseShard("2/4")?.index, 2);
  assert.equal(parseShard("5/4"), null);
  assert.equal(parseShard("0/4"), null);
});

test("cost comes from the counters at the dated table; a missing counter or price gives null, never an estimate", () => {
  const price = priceOf(BUILT_IN_PRICES, "anthropic/claude-sonnet-5-5")!;
  const cost = costOf({ input: 1_000_000, output: 100_000, cache_read: 2_000_000, cache_write: 400_000 }, price)!;
  close(cost.input, 2, 1e-9);
  close(cost.output, 1, 1e-9);
  close(cost.cache_read, 0.4, 1e-9);
  close(cost.cache_write, 1, 1e-9);
  close(cost.total, 4.4, 1e-9);
  assert.equal(cost.prices.date, price.date);
  assert.equal(costOf({ input: null, output: 5, cache_read: null, cache_write: null }, price), null);
  assert.equal(costOf({ input: 5, output: 5, cache_read: null, cache_write: null }, null), null);
  assert.equal(priceOf(BUILT_IN_PRICES, "claude-sonnet-5-5"), price, "a catalog's bare model id finds its entry");
  assert.equal(priceOf(BUILT_IN_PRICES, "openai-compatible/qwen2.5-coder:7b"), null);
});

test("failure classes: provider and sandbox failures are infra; a failed or timed-out check is the agent's", () => {
  const ran = (passed: boolean) => ({ passed, ran: true });
  assert.equal(failureClass({ outcome: "completed", error_code: null, check: ran(true) }), "solved");
  assert.equal(failureClass({ outcome: "step_limit", error_code: null, check: ran(false) }), "unsolved");
  assert.equal(
    failureClass({ outcome: "failed", error_code: "context_ceiling_exceeded", check: ran(false) }),
    "unsolved",
  );
  assert.equal(failureClass({ outcome: "failed", error_code: "provider_unreachable", check: null }), "infra");
  assert.equal(failureClass({ outcome: "startup_failed", error_code: "sandbox_unavailable", check: null }), "infra");
  assert.equal(failureClass({ outcome: "completed", error_code: null, check: { passed: false, ran: false } }), "infra");
  assert.ok(reportsSkippedTests("# tests 3\n# pass 2\n# skipped 1\n"));
  assert.ok(reportsSkippedTests("==== 4 passed, 1 skipped in 0.1s ===="));
  assert.ok(!reportsSkippedTests("# skipped 0\nall checks passed"));
});

function row(
  task: string,
  policy: "legacy" | "bounded",
  solved: boolean,
  cost: number,
  extra: Partial<EvalRow> = {},
): EvalRow {
  return {
    id: `${task}.m.${policy}.r1`,
    task,
    model: "m/x",
    policy,
    repeat: 1,
    attempt: 1,
    counted: true,
    order: 0,
    outcome: "completed",
    error_code: null,
    check: { passed: solved, exit_code: solved ? 0 : 1, timed_out: false, skipped_tests: false, duration_ms: 1 },
    class: solved ? "solved" : "unsolved",
    steps: 3,
    model_calls: 6,
    usage: { input: 100, output: 10, cache_read: 0, cache_write: 0 },
    cost: {
      currency: "USD",
      input: cost,
      output: 0,
      cache_read: 0,
      cache_write: 0,
      total: cost,
      prices: { source: "s", date: "2025-01-01" },
    },
    wall_ms: 10,
    overhead_ms: 1,
    checkpoints: 0,
    lookups: 0,
    request_bytes: 400,
    ...extra,
  };
}

test("the summary's unit is the task: per-task differences, McNemar with one repeat, rows not counted are left out", () => {
  const rows = [
    row("a", "legacy", true, 2),
    row("a", "bounded", true, 1),
    row("b", "legacy", true, 2),
    row("b", "bounded", false, 1),
    row("c", "legacy", false, 4),
    row("c", "bounded", false, 2),
    row("c", "legacy", true, 100, { counted: false, attempt: 1, class: "infra" }),
  ];
  const s = summarize(rows, {
    tasks: ["a", "b", "c"],
    policies: ["legacy", "bounded"],
    repeats: 1,
    margin: 0.05,
    seed: "x",
    droppedPairs: [],
  });
  assert.equal(s.runs, 6);
  assert.equal(s.attempts, 7);
  const [legacy, bounded] = s.policies;
  assert.equal(legacy.solved, 2);
  assert.equal(bounded.solved, 1);
  assert.equal(legacy.cost, 8);
  assert.equal(bounded.cost, 4);
  assert.equal(legacy.cost_per_solved, 4);
  assert.equal(legacy.cost_on_common, 2, "only task a was solved by both");
  const pair = s.pairs[0];
  close(pair.difference.estimate, -1 / 3, 1e-12);
  assert.equal(pair.mcnemar_p, 1);
  close(pair.cost_ratio!.estimate, 0.5, 1e-12);
  assert.deepEqual(pair.disagreements.map((d) => d.task), ["b"]);
  assert.equal(pair.verdict, "inconclusive");
});
