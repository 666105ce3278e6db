// The summary of an evaluation, computed from its rows alone (so a merge of shards recomputes exactly what one
// process would have written). The unit is the task: runs are clustered within tasks.
import type { ContextPolicyName } from "../policy.ts";
import type { EvalRow, EvalSummary, PairSummary, PolicySummary, Verdict } from "./eval-file.ts";
import { seedOf } from "./matrix.ts";
import {
  detectableDifference,
  geometricMeanRatio,
  mcnemarExact,
  mean,
  meanInterval,
  median,
  ratioBootstrap,
  signFlipTest,
  variance,
} from "./stats.ts";

type Cell = { runs: EvalRow[]; solved: number; rate: number; meanCost: number | null };

export function summarize(
  rows: readonly EvalRow[],
  { tasks, tags = {}, policies, repeats, margin, seed, droppedPairs }: {
    tasks: readonly string[];
    /** Each task's tags, for the per-tag figures. */
    tags?: Readonly<Record<string, readonly string[]>>;
    policies: readonly ContextPolicyName[];
    repeats: number;
    margin: number;
    seed: string;
    droppedPairs: readonly string[];
  },
): EvalSummary {
  const counted = rows.filter((row) => row.counted);
  // cells[task][policy]: the counted runs of one task under one policy (all models pooled).
  const cells = new Map<string, Map<ContextPolicyName, Cell>>();
  for (const task of tasks) {
    const byPolicy = new Map<ContextPolicyName, Cell>();
    for (const policy of policies) {
      const runs = counted.filter((row) => row.task === task && row.policy === policy);
      if (runs.length === 0) continue;
      const solved = runs.filter((row) => row.class === "solved").length;
      const costs = runs.map((row) => row.cost?.total ?? null);
      const meanCost = costs.every((c) => c !== null) ? mean(costs as number[]) : null;
      byPolicy.set(policy, { runs, solved, rate: solved / runs.length, meanCost });
    }
    if (byPolicy.size > 0) cells.set(task, byPolicy);
  }
  const measured = [...cells.keys()];
  const common = measured.filter((task) => policies.every((p) => (cells.get(task)!.get(p)?.solved ?? 0) > 0));

  const policySummaries: PolicySummary[] = policies.map((policy) => {
    const mine = counted.filter((row) => row.policy === policy);
    const taskCells = measured.map((task) => cells.get(task)!.get(policy)).filter((c): c is Cell => c !== undefined);
    const rates = taskCells.map((c) => c.rate);
    const priced = mine.filter((row) => row.cost !== null);
    const cost = priced.length === 0 ? null : sum(priced.map((row) => row.cost!.total));
    const solved = mine.filter((row) => row.class === "solved").length;
    const commonCosts = common.map((task) => cells.get(task)!.get(policy)?.meanCost ?? null);
    const cacheReads = mine.map((row) => row.usage.cache_read).filter((n): n is number => n !== null);
    return {
      policy,
      tasks: taskCells.length,
      runs: mine.length,
      solved,
      unsolved: mine.length - solved,
      solve_rate: rates.length ? meanInterval(rates, { bounds: [0, 1] }) : { estimate: 0, low: 0, high: 1 },
      pass_all: rates.length ? taskCells.filter((c) => c.solved === c.runs.length).length / rates.length : 0,
      pass_at_1: rates.length ? mean(rates) : 0,
      tasks_solved: taskCells.filter((c) => c.solved > 0).length,
      cost,
      runs_without_cost: mine.length - priced.length,
      cost_per_solved: cost === null || solved === 0 ? null : cost / solved,
      cost_on_common: commonCosts.length && commonCosts.every((c) => c !== null) ? sum(commonCosts as number[]) : null,
      median_steps: median(mine.map((row) => row.steps)),
      model_calls: sum(mine.map((row) => row.model_calls)),
      cache_read: cacheReads.length ? sum(cacheReads) : null,
      median_wall_ms: median(mine.map((row) => row.wall_ms)),
      wall_ms: sum(mine.map((row) => row.wall_ms)),
    };
  });

  const [baseline, ...candidates] = policies;
  const pairSummaries = candidates.map((candidate) =>
    comparePolicies({ cells, baseline, candidate, repeats, margin, seed })
  );

  return {
    runs: counted.length,
    attempts: rows.length,
    infra_retries: rows.filter((row) => row.attempt > 1).length,
    dropped_pairs: [...droppedPairs],
    runs_without_cost: counted.filter((row) => row.cost === null).length,
    policies: policySummaries,
    pairs: pairSummaries,
    per_tag: [...new Set(measured.flatMap((task) => tags[task] ?? []))].sort().map((tag) => {
      const tagged = measured.filter((task) => tags[task]?.includes(tag));
      return {
        tag,
        tasks: tagged.length,
        policies: Object.fromEntries(policies.map((policy) => {
          const taskCells = tagged.map((task) => cells.get(task)!.get(policy)).filter((c): c is Cell =>
            c !== undefined
          );
          return [policy, {
            runs: sum(taskCells.map((c) => c.runs.length)),
            solved: sum(taskCells.map((c) => c.solved)),
            solve_rate: taskCells.length ? mean(taskCells.map((c) => c.rate)) : 0,
          }];
        })),
      };
    }),
    per_task: measured.map((task) => ({
      task,
      policies: Object.fromEntries(
        [...cells.get(task)!].map(([policy, cell]) => [policy, {
          runs: cell.runs.length,
          solved: cell.solved,
          mean_cost: cell.meanCost,
          median_steps: median(cell.runs.map((row) => row.steps)),
        }]),
      ),
    })),
  };
}

function comparePolicies(
  { cells, baseline, candidate, repeats, margin, seed }: {
    cells: Map<string, Map<ContextPolicyName, Cell>>;
    baseline: ContextPolicyName;
    candidate: ContextPolicyName;
    repeats: number;
    margin: number;
    seed: string;
  },
): PairSummary {
  const both = [...cells].filter(([, byPolicy]) => byPolicy.has(baseline) && byPolicy.has(candidate));
  const a = both.map(([, c]) => c.get(baseline)!);
  const b = both.map(([, c]) => c.get(candidate)!);
  const d = b.map((cell, i) => cell.rate - a[i].rate);
  const difference = d.length ? meanInterval(d, { bounds: [-1, 1] }) : { estimate: 0, low: -1, high: 1 };
  const pairSeed = seedOf(`${seed}:${baseline}:${candidate}`);
  const permutation = signFlipTest(d, { seed: pairSeed });
  // McNemar pairs one run of each policy per task: only meaningful with one repeat.
  const discordant = repeats === 1 ? { b: d.filter((x) => x < 0).length, c: d.filter((x) => x > 0).length } : null;
  const costPairs = both
    .map(([, c]) => ({ a: c.get(baseline)!.meanCost, b: c.get(candidate)!.meanCost }))
    .filter((p): p is { a: number; b: number } => p.a !== null && p.b !== null);
  const costRatio = ratioBootstrap(costPairs, { seed: pairSeed });
  // Within-task variance of d_t from R repeats, with rates shrunk off 0 and 1 ((k + ½)/(R + 1)) so agreement on every
  // task does not claim infinite precision.
  const shrunk = (cell: Cell) => (cell.solved + 0.5) / (cell.runs.length + 1);
  const within = both.length
    ? mean(
      both.map(([, c]) =>
        [c.get(baseline)!, c.get(candidate)!].reduce(
          (s, cell) => s + shrunk(cell) * (1 - shrunk(cell)) / cell.runs.length,
          0,
        )
      ),
    )
    : 0;
  const { verdict, reason } = decide({ difference, costRatio, margin });
  return {
    baseline,
    candidate,
    tasks: both.length,
    difference,
    permutation_p: permutation.p,
    permutation_exact: permutation.exact,
    mcnemar_p: discordant ? mcnemarExact(discordant.b, discordant.c) : null,
    cost_ratio: costRatio,
    cost_ratio_geomean: geometricMeanRatio(costPairs),
    cost_tasks: costPairs.length,
    detectable_difference: detectableDifference({ differences: d, within }),
    variance: { between: variance(d), within },
    margin,
    verdict,
    reason,
    disagreements: both
      .filter((_, i) => d[i] !== 0)
      .map(([task, c]) => ({ task, baseline: c.get(baseline)!.rate, candidate: c.get(candidate)!.rate })),
  };
}

/**
 * Non-inferiority at margin m: the candidate is non-inferior when the whole 95 % interval of the difference lies
 * above −m, inferior when it lies wholly below −m; "cheaper" needs the cost ratio's interval wholly below 1.
 * Anything else is inconclusive — a non-significant difference is never called "no difference".
 */
export function decide(
  { difference, costRatio, margin }: {
    difference: { low: number; high: number };
    costRatio: { low: number; high: number } | null;
    margin: number;
  },
): { verdict: Verdict; reason: string } {
  const points = (x: number) => `${Math.round(x * 100)} points`;
  if (difference.high < -margin) {
    return { verdict: "inferior", reason: `the whole interval is below −${points(margin)}` };
  }
  if (difference.low <= -margin) {
    return { verdict: "inconclusive", reason: `the interval reaches below −${points(margin)}` };
  }
  if (costRatio === null) return { verdict: "inconclusive", reason: "non-inferior, but no cost to compare" };
  if (costRatio.high >= 1) return { verdict: "inconclusive", reason: "non-inferior, but not shown to be cheaper" };
  return { verdict: "non_inferior_and_cheaper", reason: `non-inferior at ${points(margin)} and cheaper` };
}

const sum = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0);
