// The statistics of an evaluation: known values, the verdict's rules, and invariants as properties.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  detectableDifference,
  geometricMeanRatio,
  mcnemarExact,
  normalCdf,
  normalQuantile,
  pairedDifference,
  ratioBootstrap,
  signFlipTest,
  solveRateInterval,
  tasksNeeded,
  tQuantile,
  wilsonInterval,
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
  // Irrational differences fit no lattice: seeded Monte Carlo.
  const many = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? -Math.SQRT1_2 : 1));
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

test("property: the intervals hold their estimates and never have zero width; the ratio interval holds Σb/Σa", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })), {
        minLength: 1,
        maxLength: 20,
      }),
      (counts) => {
        const a = counts.map(([x]) => x / 3);
        const b = counts.map(([, y]) => y / 3);
        const rate = solveRateInterval(a);
        assert.ok(rate.low <= rate.estimate + 1e-12 && rate.estimate <= rate.high + 1e-12);
        assert.ok(rate.high - rate.low > 0, "a solve-rate interval never has zero width");
        const d = pairedDifference(a, b);
        assert.ok(d.low <= d.estimate + 1e-12 && d.estimate <= d.high + 1e-12);
        assert.ok(d.high - d.low > 0, "a difference interval never has zero width");
        assert.ok(d.low >= -1 && d.high <= 1);
      },
    ),
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

test("Wilson's interval (continuity-corrected) at the edges: 0/12 is 0 to 30 %, 12/12 70 to 100 %, never 0–0", () => {
  const z = 1.959964;
  const edge = (z * z + 1 + z * Math.sqrt(z * z + 2 - 1 / 12)) / (2 * (12 + z * z));
  const none = solveRateInterval(Array(12).fill(0));
  close(none.low, 0, 1e-12);
  close(none.high, edge, 1e-6);
  close(edge, 0.3013, 1e-3);
  const all = solveRateInterval(Array(12).fill(1));
  close(all.high, 1, 1e-12);
  close(all.low, 1 - edge, 1e-6);
  // Symmetric: 3 of 10 mirrors 7 of 10, and it holds the plain Wilson interval (10.8 % to 60.3 %).
  const w = wilsonInterval(0.3, 10);
  const m = wilsonInterval(0.7, 10);
  close(w.low, 1 - m.high, 1e-9);
  assert.ok(w.low < 0.1078 && w.high > 0.6032, `${w.low} to ${w.high}`);
});

test("the paired interval never collapses: 0/12 vs 0/12 is ±30 points, 2/4 vs 2/4 on the same tasks wider", () => {
  const zero = pairedDifference(Array(12).fill(0), Array(12).fill(0));
  const edge = wilsonInterval(0, 12).high;
  close(zero.low, -edge, 1e-9);
  close(zero.high, edge, 1e-9);
  const same = pairedDifference([1, 1, 0, 0], [1, 1, 0, 0]);
  assert.ok(same.low < -0.3 && same.high > 0.3, `${same.low} to ${same.high}`);
  // Paired counts e/f/g/h = 12/9/2/21 (both, B only, A only, neither), n = 44: difference 7/44 = 0.1591. By hand,
  // Newcombe's method 10 (plain Wilson, φ = 0.520) gives 0.018 to 0.289; method 11's corrections widen it.
  const a = [...Array(12).fill(1), ...Array(9).fill(0), ...Array(2).fill(1), ...Array(21).fill(0)];
  const b = [...Array(12).fill(1), ...Array(9).fill(1), ...Array(2).fill(0), ...Array(21).fill(0)];
  const n = pairedDifference(a, b);
  close(n.estimate, 7 / 44, 1e-12);
  close(n.correlation, (12 * 21 - 9 * 2 - 22) / Math.sqrt(21 * 23 * 14 * 30), 1e-9);
  assert.ok(n.low < 0.0182 && n.low > -0.02 && n.high > 0.2891 && n.high < 0.33, `${n.low} to ${n.high}`);
});

test("repeats narrow the solve-rate interval only as far as the tasks show it, never below one run per task", () => {
  // 50 tasks, 3 runs each, rates spread only by the runs' own noise: narrower than counting each task once.
  const rates = Array.from({ length: 50 }, (_, i) => [1 / 3, 2 / 3, 1 / 3, 2 / 3, 0, 1][i % 6]);
  const once = solveRateInterval(rates);
  const thrice = solveRateInterval(rates, 150);
  assert.ok(
    thrice.high - thrice.low < once.high - once.low,
    `${thrice.low}–${thrice.high} vs ${once.low}–${once.high}`,
  );
  // Tasks that are all or nothing carry one run's worth each, however many repeats.
  const allOrNothing = Array.from({ length: 50 }, (_, i) => (i % 2 ? 1 : 0));
  assert.deepEqual(solveRateInterval(allOrNothing, 150), solveRateInterval(allOrNothing));
});

test("the detectable difference uses the interval's own standard error, and more tasks shrink it", () => {
  const few = detectableDifference(pairedDifference(Array(12).fill(0), Array(12).fill(0)));
  const many = detectableDifference(pairedDifference(Array(200).fill(0), Array(200).fill(0)));
  close(few.standard_error, (2 * wilsonInterval(0, 12).high) / (2 * 1.95996), 1e-4);
  close(few.detectable, 2.8016 * few.standard_error, 1e-3);
  assert.ok(many.detectable < few.detectable);
  assert.ok(few.detectable > 0.3, "0/12 vs 0/12 could not detect less than 30 points");
});

test("a suite too small for the margin is known in advance: 12 tasks cannot show 5 points, and how many can", () => {
  const needed = tasksNeeded(0.05)!;
  assert.ok(needed > 12 && needed < 200, `${needed}`);
  assert.ok(tasksNeeded(0.2)! < needed);
});

test("normalCdf inverts normalQuantile; the geometric mean of per-task ratios", () => {
  for (const p of [0.001, 0.025, 0.3, 0.5, 0.975]) close(normalCdf(normalQuantile(p)), p, 1e-6);
  close(geometricMeanRatio([{ a: 1, b: 2 }, { a: 2, b: 1 }])!, 1, 1e-12);
});

test("the sign-flip test is exact for many tasks when rates are of whole runs (by convolution)", () => {
  // 16 tasks: brute force and convolution agree.
  const sixteen = Array.from({ length: 16 }, (_, i) => (i % 3 === 0 ? -1 / 3 : 2 / 3));
  const brute = signFlipTest(sixteen);
  const lattice = signFlipTest([...sixteen, 1, -1, 0.5]);
  assert.equal(brute.exact, true);
  assert.equal(lattice.exact, true);
  assert.ok(lattice.p > 0 && lattice.p <= 1);
});

const verdictOf = (
  difference: { low: number; high: number },
  costRatio: { low: number; high: number } | null,
  extra: Partial<Parameters<typeof decide>[0]> = {},
) => decide({ difference, costRatio, margin: 0.05, costMargin: 0.05, tasks: 200, tasksNeeded: 40, ...extra });

test("verdict: inferior below the margin, inconclusive across it or when not cheaper, else non-inferior and cheaper", () => {
  const cheaper = { low: 0.5, high: 0.8 };
  assert.equal(verdictOf({ low: -0.2, high: -0.06 }, cheaper).verdict, "inferior");
  assert.equal(verdictOf({ low: -0.1, high: 0.1 }, cheaper).verdict, "inconclusive");
  assert.equal(verdictOf({ low: -0.02, high: 0.1 }, { low: 0.9, high: 1.1 }).verdict, "inconclusive");
  assert.equal(verdictOf({ low: -0.02, high: 0.1 }, cheaper).verdict, "non_inferior_and_cheaper");
});

test("cheaper needs the ratio's upper bound below 1 − cost margin: 0.9972–0.9973 is not cheaper, and says why", () => {
  const hair = verdictOf({ low: -0.02, high: 0.1 }, { low: 0.9972, high: 0.9973 });
  assert.equal(hair.verdict, "inconclusive");
  assert.match(hair.reason, /upper bound 0\.9973 is not below 0\.95/);
  assert.equal(verdictOf({ low: -0.02, high: 0.1 }, { low: 0.9, high: 0.94 }).verdict, "non_inferior_and_cheaper");
});

test("each inconclusive says why: too few tasks (with the count needed), nothing solved, no cost", () => {
  const small = verdictOf({ low: -0.24, high: 0.24 }, { low: 0.5, high: 0.6 }, { tasks: 12 });
  assert.equal(
    small.reason,
    "12 tasks cannot show a 5-point margin (that needs ≥ 40 tasks): the interval is −24 to +24",
  );
  assert.match(verdictOf({ low: -0.08, high: 0.03 }, null).reason, /^the interval reaches below −5 points: −8 to \+3$/);
  const none = verdictOf({ low: -0.24, high: 0.24 }, null, { tasks: 12, agreement: "none_solved" });
  assert.match(none.reason, /^no task was solved by either policy: nothing to compare/);
  assert.match(verdictOf({ low: 0, high: 0.1 }, null).reason, /but no cost to compare/);
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
  // repeat by repeat: every task and model once before any twice, shuffled within a repeat
  assert.deepEqual(order.map((p) => p.repeat), [...Array(10).fill(1), ...Array(10).fill(2), ...Array(10).fill(3)]);
  assert.notDeepEqual(
    order.slice(0, 10).map((p) => `${p.task}${p.model}`),
    pairs.filter((p) => p.repeat === 1)
      .map((p) => `${p.task}${p.model}`),
    "a repeat's pairs are shuffled",
  );
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
  // Cache reads at $0.20/MTok, the conservative value of the stored official page (lib/models/built-in.ts).
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
  // A transcript the server refused as longer than its context is the policy's failure: counted, not retried away
  // (a live legacy run whose test output overflowed a 16K context was retried as infra, and its pair went uncounted).
  assert.equal(
    failureClass({ outcome: "failed", error_code: "provider_context_exceeded", check: ran(false) }),
    "unsolved",
  );
  assert.equal(
    failureClass({ outcome: "failed", error_code: "provider_context_exceeded", check: ran(true) }),
    "solved",
  );
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
    sandbox: { mode: "required", active: true },
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
    costMargin: 0.05,
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
