// Simulated evaluations for the calibration benchmark (bench/eval-stats.ts) and its seeded test: rows drawn from known
// true solve rates and costs, summarised by the same code loom eval uses (lib/eval/summary.ts), and each interval and
// verdict scored against the truth.
import type { EvalRow } from "../lib/eval/eval-file.ts";
import { seededRandom, seedOf } from "../lib/eval/matrix.ts";
import { summarize } from "../lib/eval/summary.ts";

export type SimCell = {
  /** The baseline's mean solve rate over the population of tasks. */
  rate: number;
  /** none: every task has the rate; strong: task rates ~ Beta(rate·2, (1 − rate)·2). */
  heterogeneity: "none" | "strong";
  tasks: number;
  repeats: number;
  /** The candidate's true mean difference, in margins: −1, 0 or +1. */
  shift: -1 | 0 | 1;
};

export type SimResult = SimCell & {
  sims: number;
  /** Share of intervals holding the truth: solve rates (the lower of the two policies), difference, cost ratio. */
  coverage: { rate: number; difference: number; cost: number };
  /** Share the verdict judged non-inferior (cheaper or not): a false claim at shift −1, the power at shift 0. */
  non_inferior: number;
  /** Share judged cheaper when the true cost ratio is exactly 1 − cost margin (always a false claim). */
  cheaper: number;
};

export const MARGIN = 0.05;
export const COST_MARGIN = 0.05;
/** The bounds each cell must keep. */
export const BOUNDS = { coverage: 0.94, false_non_inferior: 0.05, false_cheaper: 0.05 };

/** The candidate's per-task rate: losses scale with the rate, gains with its complement, so the mean moves by Δ. */
function shifted(p: number, rate: number, delta: number): number {
  if (delta < 0) return p * (1 + delta / rate);
  if (delta > 0) return 1 - (1 - p) * (1 - delta / (1 - rate));
  return p;
}

/** Whether a cell's true difference can exist (no loss below 0 %, no gain above 100 %). */
export function feasible(cell: SimCell): boolean {
  const delta = cell.shift * MARGIN;
  return cell.rate + delta >= 0 && cell.rate + delta <= 1 &&
    !(cell.shift !== 0 && (cell.rate === 0 || cell.rate === 1));
}

function sampler(seed: number) {
  const uniform = seededRandom(seed);
  const normal = () => {
    const u = 1 - uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
  // Marsaglia & Tsang (2000); shape < 1 by the u^(1/shape) boost.
  const gamma = (shape: number): number => {
    if (shape < 1) return gamma(shape + 1) * (1 - uniform()) ** (1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      const x = normal();
      const v = (1 + c * x) ** 3;
      if (v <= 0) continue;
      if (Math.log(1 - uniform()) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
    }
  };
  const beta = (a: number, b: number) => {
    const x = gamma(a);
    return x / (x + gamma(b));
  };
  return { uniform, normal, beta };
}

const BLANK: Omit<EvalRow, "id" | "task" | "policy" | "repeat" | "class" | "cost"> = {
  model: "sim/model",
  attempt: 1,
  counted: true,
  order: 0,
  outcome: "completed",
  error_code: null,
  check: null,
  steps: 10,
  model_calls: 20,
  usage: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
  sandbox: { mode: "required", active: true },
  wall_ms: 0,
  overhead_ms: 0,
  checkpoints: 0,
  lookups: 0,
  request_bytes: 0,
};

const costOf = (total: number): EvalRow["cost"] => ({
  currency: "USD",
  input: total,
  output: 0,
  cache_read: 0,
  cache_write: 0,
  total,
  prices: { source: "simulation", date: "2026-12-01" },
});

/**
 * `sims` evaluations of one cell. Costs: a task's base cost ~ lognormal(σ 1), each run's × lognormal(σ 0.3), the
 * candidate's × a per-task factor lognormal(σ 0.2) × (1 − cost margin), all with mean 1 but the last: the true
 * population cost ratio is exactly 1 − cost margin, so every `cheaper` is false. `resamples`: the cost ratio's
 * bootstrap resamples (the summary's own 2,000 unless given).
 */
export function simulateCell(
  cell: SimCell,
  { sims, seed, resamples }: { sims: number; seed: string; resamples?: number },
): SimResult {
  const { rate, tasks, repeats } = cell;
  const delta = cell.shift * MARGIN;
  const random = sampler(seedOf(`${seed}:${JSON.stringify(cell)}`));
  const taskIds = Array.from({ length: tasks }, (_, i) => `t${i}`);
  const hits = { rateA: 0, rateB: 0, difference: 0, cost: 0, nonInferior: 0, cheaper: 0 };
  const ratio = 1 - COST_MARGIN;
  for (let n = 0; n < sims; n++) {
    const rows: EvalRow[] = [];
    for (const task of taskIds) {
      const pa = cell.heterogeneity === "none" || rate === 0 || rate === 1
        ? rate
        : random.beta(rate * 2, (1 - rate) * 2);
      const pb = shifted(pa, rate, delta);
      const base = Math.exp(random.normal() - 0.5);
      const factor = Math.exp(0.2 * random.normal() - 0.02);
      for (let r = 1; r <= repeats; r++) {
        for (const [policy, p, scale] of [["legacy", pa, 1], ["bounded", pb, factor * ratio]] as const) {
          const solved = random.uniform() < p;
          rows.push({
            ...BLANK,
            id: `${task}.sim.${policy}.r${r}`,
            task,
            policy,
            repeat: r,
            class: solved ? "solved" : "unsolved",
            cost: costOf(base * scale * Math.exp(0.3 * random.normal() - 0.045)),
          });
        }
      }
    }
    const summary = summarize(rows, {
      tasks: taskIds,
      policies: ["legacy", "bounded"],
      repeats,
      margin: MARGIN,
      costMargin: COST_MARGIN,
      seed: `${seed}:${n}`,
      droppedPairs: [],
      ...(resamples ? { resamples } : {}),
    });
    const [a, b] = summary.policies;
    const pair = summary.pairs[0];
    const holds = (i: { low: number; high: number | null }, truth: number) =>
      i.low <= truth + 1e-12 && (i.high === null || truth <= i.high + 1e-12);
    if (holds(a.solve_rate, rate)) hits.rateA++;
    if (holds(b.solve_rate, rate + delta)) hits.rateB++;
    if (holds(pair.difference, delta)) hits.difference++;
    if (pair.cost_ratio && holds(pair.cost_ratio, ratio)) hits.cost++;
    // Judged non-inferior by the verdict itself (which also refuses to compare when nothing was solved).
    if (pair.verdict === "non_inferior_and_cheaper" || pair.reason.startsWith("non-inferior")) hits.nonInferior++;
    if (pair.cost_ratio && pair.cost_ratio.high !== null && pair.cost_ratio.high < ratio) hits.cheaper++;
  }
  return {
    ...cell,
    sims,
    coverage: {
      rate: Math.min(hits.rateA, hits.rateB) / sims,
      difference: hits.difference / sims,
      cost: hits.cost / sims,
    },
    non_inferior: hits.nonInferior / sims,
    cheaper: hits.cheaper / sims,
  };
}

/** Two Monte Carlo standard errors of a share near `p` estimated from `sims` simulations. */
export const allowance = (p: number, sims: number) => 2 * Math.sqrt((p * (1 - p)) / sims);

/** The bounds a cell breaks (less two Monte Carlo standard errors at its simulations), in words. */
export function outOfBounds(r: SimResult): string[] {
  const out: string[] = [];
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const coverage = BOUNDS.coverage - allowance(BOUNDS.coverage, r.sims);
  const falseRate = (bound: number) => bound + allowance(bound, r.sims);
  if (r.coverage.rate < coverage) out.push(`solve-rate coverage ${pct(r.coverage.rate)}`);
  if (r.coverage.difference < coverage) out.push(`difference coverage ${pct(r.coverage.difference)}`);
  if (r.coverage.cost < coverage) out.push(`cost-ratio coverage ${pct(r.coverage.cost)}`);
  if (r.shift === -1 && r.non_inferior > falseRate(BOUNDS.false_non_inferior)) {
    out.push(`false non-inferior ${pct(r.non_inferior)}`);
  }
  if (r.cheaper > falseRate(BOUNDS.false_cheaper)) out.push(`false cheaper ${pct(r.cheaper)}`);
  return out;
}

/** The grid: rates 0 to 1 (edges without heterogeneity, which they cannot have), tasks, repeats, shifts. */
export function grid(
  { rates, tasks, repeats }: { rates: readonly number[]; tasks: readonly number[]; repeats: readonly number[] },
): SimCell[] {
  const cells: SimCell[] = [];
  for (const T of tasks) {
    for (const R of repeats) {
      for (const rate of rates) {
        for (const heterogeneity of rate === 0 || rate === 1 ? ["none"] as const : ["none", "strong"] as const) {
          for (const shift of [-1, 0, 1] as const) {
            const cell = { rate, heterogeneity, tasks: T, repeats: R, shift };
            if (feasible(cell)) cells.push(cell);
          }
        }
      }
    }
  }
  return cells;
}
