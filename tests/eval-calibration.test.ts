// The calibration benchmark's small fixed grid (bench/eval-stats-sim.ts, seeded): simulated evaluations summarised by
// lib/eval/summary.ts, each interval's coverage and the false non-inferior and false cheaper rates held to their bounds
// (less a Monte Carlo allowance of two standard errors at this many simulations, as in the benchmark). Not timed: it
// counts, it never measures time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { outOfBounds, type SimCell, simulateCell } from "../bench/eval-stats-sim.ts";

const SIMS = 160;
/** Fewer bootstrap resamples than the summary's 2,000, to keep the test quick; the benchmark uses the default. */
const RESAMPLES = 400;

const CELLS: SimCell[] = [
  { rate: 0, heterogeneity: "none", tasks: 12, repeats: 1, shift: 0 },
  { rate: 1, heterogeneity: "none", tasks: 4, repeats: 3, shift: 0 },
  { rate: 0.5, heterogeneity: "strong", tasks: 4, repeats: 1, shift: 0 },
  { rate: 0.5, heterogeneity: "none", tasks: 12, repeats: 1, shift: -1 },
  { rate: 0.5, heterogeneity: "strong", tasks: 12, repeats: 3, shift: -1 },
  { rate: 0.9, heterogeneity: "none", tasks: 4, repeats: 3, shift: -1 },
];

test("calibration: every cell of the small grid keeps coverage, false non-inferior and false cheaper in bounds", {
  timeout: 600_000,
}, () => {
  const problems: string[] = [];
  for (const cell of CELLS) {
    const r = simulateCell(cell, { sims: SIMS, seed: "calibration-test", resamples: RESAMPLES });
    for (const problem of outOfBounds(r)) problems.push(`${JSON.stringify(cell)}: ${problem}`);
  }
  assert.deepEqual(problems, []);
});

test("calibration: 0/12 vs 0/12 and 2/4 vs 2/4 are inconclusive, with the reason in words", async () => {
  const { summarize } = await import("../lib/eval/summary.ts");
  const rows = (tasks: number, solved: number) =>
    Array.from({ length: tasks }, (_, t) =>
      (["legacy", "bounded"] as const).map((policy) => ({
        id: `t${t}.m.${policy}.r1`,
        task: `t${t}`,
        model: "m/x",
        policy,
        repeat: 1,
        attempt: 1,
        counted: true,
        order: 0,
        outcome: "completed" as const,
        error_code: null,
        check: null,
        class: t < solved ? "solved" as const : "unsolved" as const,
        steps: 1,
        model_calls: 2,
        usage: { input: 1, output: 1, cache_read: 0, cache_write: 0 },
        cost: null,
        sandbox: { mode: "required" as const, active: true },
        wall_ms: 1,
        overhead_ms: 1,
        checkpoints: 0,
        lookups: 0,
        request_bytes: 1,
      }))).flat();
  const settings = (tasks: number) => ({
    tasks: Array.from({ length: tasks }, (_, t) => `t${t}`),
    policies: ["legacy", "bounded"] as ("legacy" | "bounded")[],
    repeats: 1,
    margin: 0.05,
    costMargin: 0.05,
    seed: "s",
    droppedPairs: [],
  });
  const none = summarize(rows(12, 0), settings(12)).pairs[0];
  assert.equal(none.verdict, "inconclusive");
  assert.match(
    none.reason,
    /^no task was solved by either policy: nothing to compare \(the interval is −30 to \+30\)$/,
  );
  assert.ok(none.detectable_difference > 0.3);
  const half = summarize(rows(4, 2), settings(4)).pairs[0];
  assert.equal(half.verdict, "inconclusive");
  assert.match(
    half.reason,
    /^4 tasks cannot show a 5-point margin \(that needs ≥ \d+ tasks\): the interval is −\d+ to \+\d+$/,
  );
  assert.ok(half.difference.low < -0.3, `${half.difference.low}`);
});
