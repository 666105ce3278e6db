// The summary of an evaluation, computed from its rows alone (so a merge of shards recomputes exactly what one
// process would have written). The unit is the task: runs are clustered within tasks.
import type { ContextPolicyName } from "../policy.ts";
import type { EvalRow, EvalSummary, PairSummary, PolicySummary, Verdict } from "./eval-file.ts";
import { seedOf } from "./matrix.ts";
import { attemptKey, interruptedAttempts } from "./failure-class.ts";
import {
  detectableDifference,
  geometricMeanRatio,
  mcnemarExact,
  mean,
  median,
  pairedDifference,
  ratioBootstrap,
  signFlipTest,
  solveRateInterval,
  tasksNeeded,
} from "./stats.ts";
import { formatCount } from "../text/numbers.ts";

/** What every summary line says when a run's processes or its check ran outside the OS sandbox. */
export const UNSANDBOXED_NOTE = "unsandboxed: checks were exposed to the agent";

type Cell = { runs: EvalRow[]; solved: number; rate: number; meanCost: number | null; meanSeconds: number };

export function summarize(
  rows: readonly EvalRow[],
  { tasks, tags = {}, policies, repeats, margin, costMargin, seed, droppedPairs, rescored = false, resamples }: {
    tasks: readonly string[];
    /** Each task's tags, for the per-tag figures. */
    tags?: Readonly<Record<string, readonly string[]>>;
    policies: readonly ContextPolicyName[];
    repeats: number;
    margin: number;
    costMargin: number;
    seed: string;
    droppedPairs: readonly string[];
    rescored?: boolean;
    /** Bootstrap resamples of the cost ratio (2,000). */
    resamples?: number;
  },
): EvalSummary {
  const counted = rows.filter((row) => row.counted);
  // cells[task][policy]: the counted runs of one task under one policy (all models pooled).
  const cells = new Map<string, Map<ContextPolicyName, Cell>>();
  const grouped = new Map<string, EvalRow[]>();
  for (const row of counted) {
    const key = `${row.task}\u0000${row.policy}`;
    const list = grouped.get(key);
    if (list) list.push(row);
    else grouped.set(key, [row]);
  }
  for (const task of tasks) {
    const byPolicy = new Map<ContextPolicyName, Cell>();
    for (const policy of policies) {
      const runs = grouped.get(`${task}\u0000${policy}`) ?? [];
      if (runs.length === 0) continue;
      const solved = runs.filter((row) => row.class === "solved").length;
      const costs = runs.map((row) => row.cost?.total ?? null);
      const meanCost = costs.every((c) => c !== null) ? mean(costs as number[]) : null;
      const meanSeconds = mean(runs.map((row) => row.wall_ms)) / 1000;
      byPolicy.set(policy, { runs, solved, rate: solved / runs.length, meanCost, meanSeconds });
    }
    if (byPolicy.size > 0) cells.set(task, byPolicy);
  }
  const measured = [...cells.keys()];
  // "!" on cells.get(task) in this function: cells holds every measured task (built from the same rows)
  const common = measured.filter((task) => policies.every((p) => (cells.get(task)!.get(p)?.solved ?? 0) > 0));

  const policySummaries: PolicySummary[] = policies.map((policy) => {
    const mine = counted.filter((row) => row.policy === policy);
    const taskCells = measured.map((task) => cells.get(task)!.get(policy)).filter((c): c is Cell => c !== undefined);
    const rates = taskCells.map((c) => c.rate);
    const priced = mine.filter((row) => row.cost !== null);
    // "!": priced rows are those whose cost is set (filtered just above)
    const cost = priced.length === 0 ? null : sum(priced.map((row) => row.cost!.total));
    const solved = mine.filter((row) => row.class === "solved").length;
    const commonCosts = common.map((task) => cells.get(task)!.get(policy)?.meanCost ?? null);
    const cacheReads = mine.map((row) => row.usage.cache_read).filter((n): n is number => n !== null);
    const seconds = sum(mine.map((row) => row.wall_ms)) / 1000;
    const tokens = tokensOf(mine);
    return {
      policy,
      tasks: taskCells.length,
      runs: mine.length,
      solved,
      unsolved: mine.length - solved,
      solve_rate: solveRateInterval(rates, sum(taskCells.map((c) => c.runs.length))),
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
      seconds_per_run: mine.length ? seconds / mine.length : null,
      seconds_per_solved: solved ? seconds / solved : null,
      tokens_per_run: tokens === null || mine.length === 0 ? null : tokens / mine.length,
      tokens_per_solved: tokens === null || solved === 0 ? null : tokens / solved,
    };
  });

  const [baseline, ...candidates] = policies;
  const unsandboxed = counted.filter((row) => !row.sandbox.active).length;
  // no policies, no baseline: then no candidates either
  const pairSummaries = baseline === undefined ? [] : candidates.map((candidate) => {
    const pair = comparePolicies({ cells, baseline, candidate, repeats, margin, costMargin, seed, resamples });
    const sentence = pairSentence(pair, policySummaries) + (unsandboxed ? `; ${UNSANDBOXED_NOTE}` : "");
    return { ...pair, sentence };
  });

  return {
    runs: counted.length,
    attempts: rows.length,
    infra_retries: infraRetries(rows, policies.length),
    dropped_pairs: [...droppedPairs],
    runs_without_cost: counted.filter((row) => row.cost === null).length,
    unsandboxed_runs: unsandboxed,
    uncounted: uncountedSpend(rows),
    rescored,
    policies: policySummaries,
    pairs: pairSummaries,
    per_tag: [...new Set(measured.flatMap((task) => tags[task] ?? []))].sort().map((tag) => {
      const tagged = measured.filter((task) => tags[task]?.includes(tag));
      return {
        tag,
        tasks: tagged.length,
        policies: Object.fromEntries(policies.map((policy) => {
          // "!": cells holds every tagged task (tags are read from measured tasks)
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
        // "!": task is one of cells' own keys
        [...cells.get(task)!].map(([policy, cell]) => [policy, {
          runs: cell.runs.length,
          solved: cell.solved,
          mean_cost: cell.meanCost,
          mean_seconds: cell.meanSeconds,
          median_steps: median(cell.runs.map((row) => row.steps)),
        }]),
      ),
    })),
  };
}

function comparePolicies(
  { cells, baseline, candidate, repeats, margin, costMargin, seed, resamples }: {
    cells: Map<string, Map<ContextPolicyName, Cell>>;
    baseline: ContextPolicyName;
    candidate: ContextPolicyName;
    repeats: number;
    margin: number;
    costMargin: number;
    seed: string;
    resamples?: number;
  },
): Omit<PairSummary, "sentence"> {
  // the tasks that have a cell for the baseline and for the candidate
  const both = [...cells].flatMap(([task, byPolicy]) => {
    const a = byPolicy.get(baseline);
    const b = byPolicy.get(candidate);
    return a && b ? [{ task, a, b }] : [];
  });
  const a = both.map((pair) => pair.a);
  const b = both.map((pair) => pair.b);
  const d = both.map((pair) => pair.b.rate - pair.a.rate);
  const { correlation, ...difference } = pairedDifference(a.map((c) => c.rate), b.map((c) => c.rate), {
    runsA: sum(a.map((c) => c.runs.length)),
    runsB: sum(b.map((c) => c.runs.length)),
  });
  const pairSeed = seedOf(`${seed}:${baseline}:${candidate}`);
  const permutation = signFlipTest(d, { seed: pairSeed });
  // McNemar pairs one run of each policy per task: only meaningful with one repeat.
  const discordant = repeats === 1 ? { b: d.filter((x) => x < 0).length, c: d.filter((x) => x > 0).length } : null;
  const costPairs = both
    .map((pair) => ({ a: pair.a.meanCost, b: pair.b.meanCost }))
    .filter((p): p is { a: number; b: number } => p.a !== null && p.b !== null);
  const ratio = ratioBootstrap(costPairs, { seed: pairSeed, ...(resamples ? { samples: resamples } : {}) });
  // JSON has no ∞: an unbounded upper end is null.
  const costRatio = ratio && { ...ratio, high: Number.isFinite(ratio.high) ? ratio.high : null };
  // A local model's cost is its time: the same statistic over the runs' mean wall time per task.
  const timed = ratioBootstrap(both.map((pair) => ({ a: pair.a.meanSeconds, b: pair.b.meanSeconds })), {
    seed: seedOf(`${seed}:${baseline}:${candidate}:seconds`),
    ...(resamples ? { samples: resamples } : {}),
  });
  const secondsRatio = timed && { ...timed, high: Number.isFinite(timed.high) ? timed.high : null };
  const basis = costRatio ? "usd" as const : secondsRatio ? "seconds" as const : null;
  const { standard_error, detectable } = detectableDifference(difference);
  const needed = tasksNeededFor(margin);
  const solvedAny = [...a, ...b].some((cell) => cell.solved > 0);
  const solvedAll = [...a, ...b].every((cell) => cell.solved === cell.runs.length);
  const { verdict, reason } = decide({
    difference,
    costRatio: costRatio ?? secondsRatio,
    basis: basis ?? "usd",
    margin,
    costMargin,
    tasks: both.length,
    tasksNeeded: needed,
    agreement: both.length === 0 ? "none" : !solvedAny ? "none_solved" : solvedAll ? "all_solved" : null,
  });
  return {
    baseline,
    candidate,
    tasks: both.length,
    difference,
    correlation,
    permutation_p: permutation.p,
    permutation_exact: permutation.exact,
    mcnemar_p: discordant ? mcnemarExact(discordant.b, discordant.c) : null,
    cost_ratio: costRatio,
    cost_ratio_geomean: geometricMeanRatio(costPairs),
    cost_tasks: costPairs.length,
    seconds_ratio: secondsRatio,
    cost_basis: basis,
    standard_error,
    detectable_difference: detectable,
    margin,
    cost_margin: costMargin,
    tasks_needed: needed,
    verdict,
    reason,
    disagreements: both
      .filter((pair) => pair.b.rate - pair.a.rate !== 0)
      .map(({ task, a, b }) => ({ task, baseline: a.rate, candidate: b.rate })),
  };
}

const neededByMargin = new Map<number, number | null>();
/** tasksNeeded, remembered per margin (the same few margins, asked once per summary). */
function tasksNeededFor(margin: number): number | null {
  if (!neededByMargin.has(margin)) neededByMargin.set(margin, tasksNeeded(margin));
  // "!": set on the line above when it was missing
  return neededByMargin.get(margin)!;
}

const points = (x: number) => `${Math.round(x * 100)}`;
const signed = (x: number) => {
  const p = Math.round(x * 100);
  return p === 0 ? "0" : `${p > 0 ? "+" : "−"}${Math.abs(p)}`;
};
const interval = (d: { low: number; high: number }) => `${signed(d.low)} to ${signed(d.high)}`;
/** A cost ratio with enough digits that a bound a hair from 1 is not printed as 1.00. */
export const ratioText = (x: number | null) =>
  x === null || x === Infinity ? "∞" : Math.abs(x - 1) < 0.01 ? x.toFixed(4) : x >= 1000
    ? formatCount(Math.round(x)) // "326,309", not "326309.00"
    : x.toFixed(2);

/**
 * Non-inferiority at margin m: the candidate is non-inferior when the 95 % interval's lower bound clears −m, inferior
 * when the whole interval lies below −m; "cheaper" needs the cost ratio's upper bound below 1 − cost margin. Anything
 * else is inconclusive, and says why — a non-significant difference is never called "no difference".
 */
export function decide(
  { difference, costRatio, basis = "usd", margin, costMargin, tasks, tasksNeeded, agreement = null }: {
    difference: { low: number; high: number };
    costRatio: { low: number; high: number | null } | null;
    /** What costRatio is a ratio of: dollars, or (no price) the runs' seconds. */
    basis?: "usd" | "seconds";
    margin: number;
    costMargin: number;
    tasks: number;
    /** The fewest tasks that could show the margin (null: none could). */
    tasksNeeded: number | null;
    /** No task measured, none solved by either policy, or every run of both solved. */
    agreement?: "none" | "none_solved" | "all_solved" | null;
  },
): { verdict: Verdict; reason: string } {
  const m = `${points(margin)}-point margin`;
  const shown = `the interval is ${interval(difference)}`;
  if (agreement === "none") return { verdict: "inconclusive", reason: "no task has runs of both policies" };
  if (agreement === "none_solved") {
    return { verdict: "inconclusive", reason: `no task was solved by either policy: nothing to compare (${shown})` };
  }
  if (agreement === "all_solved") {
    return {
      verdict: "inconclusive",
      reason: `every run of both policies solved its task: the suite is too easy to compare them (${shown})`,
    };
  }
  if (difference.high < -margin) {
    return { verdict: "inferior", reason: `the whole interval is below −${points(margin)} points: ${shown}` };
  }
  if (difference.low <= -margin) {
    const cannot = tasksNeeded === null || tasks < tasksNeeded;
    return {
      verdict: "inconclusive",
      reason: cannot
        ? `${tasks} task${tasks === 1 ? "" : "s"} cannot show a ${m}${
          tasksNeeded === null ? "" : ` (that needs ≥ ${tasksNeeded} tasks)`
        }: ${shown}`
        : `the interval reaches below −${points(margin)} points: ${interval(difference)}`,
    };
  }
  const limit = 1 - costMargin;
  if (costRatio === null) {
    return { verdict: "inconclusive", reason: `non-inferior at a ${m} (${shown}), but no cost to compare` };
  }
  const cheaper = basis === "seconds" ? "cheaper in time (no price: time is the cost)" : "cheaper";
  const ratio = basis === "seconds" ? "seconds ratio" : "cost ratio";
  if (costRatio.high === null || costRatio.high >= limit) {
    return {
      verdict: "inconclusive",
      reason: `non-inferior at a ${m} (${shown}), but not shown ${cheaper}: the ${ratio}'s upper bound ${
        ratioText(costRatio.high)
      } is not below ${ratioText(limit)} (a ${points(costMargin)} % cost margin)`,
    };
  }
  return {
    verdict: "non_inferior_and_cheaper",
    reason: `non-inferior at a ${m} (${shown}) and ${cheaper}: the ${ratio}'s upper bound ${
      ratioText(costRatio.high)
    } is below ${ratioText(limit)}`,
  };
}

function tasksSolved(p: PolicySummary): string {
  return `${p.policy} ${Math.round(p.pass_at_1 * p.tasks * 100) / 100}/${p.tasks} tasks`;
}

/**
 * The verdict sentence text, JSON and HTML share, e.g. "bounded 41/50 vs legacy 43/50 tasks (−4 points, 95 % CI −12
 * to +4; …); inconclusive at a 5-point margin (…); could detect ≥ 12 points; cost 0.83× legacy (…)".
 */
function pairSentence(pair: Omit<PairSummary, "sentence">, policies: readonly PolicySummary[]): string {
  // "!": every pair names two policies of this summary (matrix.ts builds the pairs from them)
  const a = policies.find((p) => p.policy === pair.baseline)!;
  const b = policies.find((p) => p.policy === pair.candidate)!;
  const d = pair.difference;
  const parts = [
    `${tasksSolved(b)} vs ${tasksSolved(a)} (${signed(d.estimate)} points, 95 % CI ${interval(d)}; sign-flip p = ${
      pair.permutation_p.toFixed(3)
    }${pair.mcnemar_p === null ? "" : `, McNemar p = ${pair.mcnemar_p.toFixed(3)}`})`,
    `${pair.verdict.replaceAll("_", " ")} at a ${points(pair.margin)}-point margin (${pair.reason})`,
    `could detect ≥ ${points(pair.detectable_difference)} points`,
    pair.cost_ratio === null
      ? timeClause(pair)
      : `cost ${ratioText(pair.cost_ratio.estimate)}× ${pair.baseline} (95 % CI ${ratioText(pair.cost_ratio.low)}–${
        ratioText(pair.cost_ratio.high)
      }; geometric mean of task ratios ${
        pair.cost_ratio_geomean === null ? "n/a" : `${ratioText(pair.cost_ratio_geomean)}×`
      })`,
  ];
  return parts.join("; ");
}

/** The sentence's cost part without a price: the seconds ratio (a local model's cost is its time). */
function timeClause(pair: Omit<PairSummary, "sentence">): string {
  const r = pair.seconds_ratio;
  if (!r) return "cost ratio n/a (no task has a price, or a time, under both policies)";
  return `no price: time ${ratioText(r.estimate)}× ${pair.baseline} (95 % CI ${ratioText(r.low)}–${
    ratioText(r.high)
  }; seconds per task, the cost of a local model)`;
}

/** Tokens over the runs (input, cache read and write, output); null when a run's input or output was not reported. */
function tokensOf(rows: readonly EvalRow[]): number | null {
  let total = 0;
  for (const { usage } of rows) {
    const { input, cache_read, cache_write, output } = usage;
    if (input === null || output === null) return null;
    total += input + (cache_read ?? 0) + (cache_write ?? 0) + output;
  }
  return total;
}

/** What the rows outside the statistics spent (interrupted runs, re-run attempts): kept, never counted. */
function uncountedSpend(rows: readonly EvalRow[]): NonNullable<EvalSummary["uncounted"]> {
  const out = rows.filter((row) => !row.counted);
  const priced = out.filter((row) => row.cost !== null);
  return {
    runs: out.length,
    cost: priced.length ? sum(priced.map((row) => row.cost?.total ?? 0)) : null,
    model_calls: sum(out.map((row) => row.model_calls)),
    seconds: sum(out.map((row) => row.wall_ms)) / 1000,
  };
}

const sum = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0);

/** Attempts after the first that followed an infra failure: a re-run of an interrupted attempt (--resume) is none. */
function infraRetries(rows: readonly EvalRow[], policies: number): number {
  const cut = interruptedAttempts(rows, policies);
  return rows.filter((row) => row.attempt > 1 && !cut.has(attemptKey({ ...row, attempt: row.attempt - 1 }))).length;
}
