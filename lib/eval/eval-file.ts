// DIR/eval.json (SPEC §12, `loom schema eval`): the key that resume and merge compare, one row per run, and the
// summary computed from the rows (lib/eval/summary.ts).
import { z } from "zod";
import { ContextPolicyName, PreviewMode, StepProtocol } from "../policy.ts";
import { SandboxMode } from "../sandbox-state.ts";
import { Outcome } from "../outcome.ts";
import { Usage } from "../vocabulary/turn.ts";
import { Cost } from "../prices.ts";

export const EVAL_SCHEMA_VERSION = 2;
const count = z.number().int().nonnegative();
const Hash = z.string().regex(/^sha256:[0-9a-f]{64}$/);

export const FailureClass = z.enum(["solved", "unsolved", "infra"]).describe(
  "solved: the check passed; unsolved: the agent's own failure (check failed or timed out, step limit, invalid " +
    "answers, context ceiling…); infra: provider outage after retries, sandbox or workspace failure, a check that " +
    "could not run",
);
export type FailureClass = z.infer<typeof FailureClass>;

export const EvalKey = z.strictObject({
  suite: Hash.describe("The suite file's content"),
  tasks: z.record(z.string(), Hash).describe("Per task: its workspace files, check (files and settings) and settings"),
  checks: z.record(z.string(), Hash).describe("Per task: its check alone (files, command, timeout)"),
  prices: Hash.describe("The price table in force (built-in merged with --prices)"),
  loom_version: z.string(),
  settings: Hash.describe("Models, policies, repeats, seed, margin, step protocol, retries, sandbox mode"),
}).describe("Content hashes: resume and merge refuse to mix runs whose keys differ");
export type EvalKey = z.infer<typeof EvalKey>;

export const EvalSettings = z.strictObject({
  models: z.array(z.string()).min(1),
  policies: z.array(ContextPolicyName).min(1).describe("The first is the baseline every other is compared with"),
  repeats: z.number().int().positive(),
  seed: z.string(),
  margin: z.number().positive().max(1).describe("Non-inferiority margin, as a fraction of tasks (0.05 = 5 points)"),
  cost_margin: z.number().min(0).max(0.99).describe(
    "Cost margin: cheaper needs the cost ratio's upper bound below 1 − cost_margin (0.05 = 5 %)",
  ),
  retries: count.describe("Re-runs of a pair after an infra failure before it is dropped"),
  run_timeout_ms: z.number().int().positive().describe(
    "Wall-clock cap of every run; a run stopped at it ends with error_code run_timeout and is checked as it is",
  ),
  step_protocol: StepProtocol.describe("The step protocol every run used (--step-protocol, else the default)"),
  previews: PreviewMode.describe("The bounded policy's previews (the default; the same for every run)"),
  sandbox: z.strictObject({
    mode: SandboxMode.describe("required (the default) or off (said with --sandbox off)"),
    active: z.boolean().describe("Whether the OS sandbox was found at the start"),
  }),
  cache_marker: z.boolean().describe("Each run's prefix starts with a per-run marker, so no run warms another's cache"),
});
export type EvalSettings = z.infer<typeof EvalSettings>;

export const EvalRow = z.strictObject({
  id: z.string().describe("Run id: task.model.policy.rREPEAT (the folder under runs/)"),
  task: z.string(),
  model: z.string(),
  policy: ContextPolicyName,
  repeat: z.number().int().positive(),
  attempt: z.number().int().positive().describe("1, or more after infra failures of its pair"),
  counted: z.boolean().describe(
    "This attempt's pair is in the statistics (its last attempt, not dropped); an interrupted attempt's rows are " +
      "kept for what they spent (outcome and error_code interrupted for the run in flight), never counted",
  ),
  order: count.describe("Position in the seeded order of the whole matrix"),
  outcome: Outcome,
  error_code: z.string().nullable(),
  check: z.strictObject({
    passed: z.boolean(),
    exit_code: z.number().int().nullable(),
    timed_out: z.boolean(),
    skipped_tests: z.boolean().describe("The check's output reports skipped tests (counted as a failure)"),
    duration_ms: z.number().nonnegative(),
  }).nullable().describe("Null when the check did not run (the run itself failed as infra)"),
  class: FailureClass,
  steps: count,
  model_calls: count,
  usage: Usage,
  cost: Cost.nullable().describe("Null when the model has no price or a counter was not reported"),
  sandbox: z.strictObject({
    mode: SandboxMode,
    active: z.boolean().describe("The run's processes and its hidden check all ran in the OS sandbox"),
  }),
  wall_ms: z.number().nonnegative().describe("The run's own wall time (the loop, not the copy or the check)"),
  overhead_ms: z.number().nonnegative().describe("Workspace copy, hidden check and bookkeeping"),
  checkpoints: count,
  lookups: count,
  request_bytes: count,
});
export type EvalRow = z.infer<typeof EvalRow>;

const IntervalSchema = z.strictObject({ estimate: z.number(), low: z.number(), high: z.number() });

export const PolicySummary = z.strictObject({
  policy: ContextPolicyName,
  tasks: count,
  runs: count,
  solved: count,
  unsolved: count,
  solve_rate: IntervalSchema.describe("Mean over tasks of the per-task solve rate, Wilson 95 % interval over tasks"),
  pass_all: z.number().describe("pass^R: share of tasks solved in every repeat"),
  pass_at_1: z.number().describe("pass@1: mean per-task probability that one run solves it"),
  tasks_solved: count.describe("Tasks solved in at least one repeat"),
  cost: z.number().nullable().describe("Total USD over runs with a cost; null when none has one"),
  runs_without_cost: count,
  cost_per_solved: z.number().nullable().describe("Total cost / solved runs"),
  cost_on_common: z.number().nullable().describe(
    "Sum over tasks every policy solved at least once of the mean cost per run",
  ),
  median_steps: z.number().nullable(),
  model_calls: count,
  cache_read: z.number().nullable().describe("Sum of cache-read tokens"),
  median_wall_ms: z.number().nullable(),
  wall_ms: z.number().nonnegative(),
  seconds_per_run: z.number().nonnegative().nullable().optional().describe(
    "Mean of the runs' own wall time (wall_ms), in seconds: a local model's cost; null without runs",
  ),
  seconds_per_solved: z.number().nonnegative().nullable().optional().describe(
    "The runs' wall time in seconds / solved runs; null when none solved",
  ),
  tokens_per_run: z.number().nonnegative().nullable().optional().describe(
    "Mean tokens per run (input, cache read and write, output); null when a run's input or output was not reported",
  ),
  tokens_per_solved: z.number().nonnegative().nullable().optional().describe(
    "Tokens over all runs / solved runs; null when none solved or a run's input or output was not reported",
  ),
});
export type PolicySummary = z.infer<typeof PolicySummary>;

export const Verdict = z.enum(["non_inferior_and_cheaper", "inconclusive", "inferior"]);
export type Verdict = z.infer<typeof Verdict>;

export const PairSummary = z.strictObject({
  baseline: ContextPolicyName.describe("A"),
  candidate: ContextPolicyName.describe("B"),
  tasks: count,
  difference: IntervalSchema.describe(
    "Mean over tasks of d_t = ŝ_B,t − ŝ_A,t with Newcombe's hybrid score 95 % interval over tasks",
  ),
  correlation: z.number().describe("φ*: the continuity-corrected correlation of the two policies' task rates"),
  permutation_p: z.number().describe("Paired sign-flip permutation test over tasks, two-sided"),
  permutation_exact: z.boolean(),
  mcnemar_p: z.number().nullable().describe("Exact McNemar p on discordant pairs (one repeat only)"),
  cost_ratio: z.strictObject({
    estimate: z.number(),
    low: z.number(),
    high: z.number().nullable().describe("Null: unbounded (one task, or one task carrying all the cost)"),
  }).nullable().describe(
    "Σc̄_B,t / Σc̄_A,t with a 95 % interval over tasks (expanded-percentile bootstrap widened to a jackknife t-interval)",
  ),
  cost_ratio_geomean: z.number().nullable().describe("Geometric mean of per-task cost ratios"),
  cost_tasks: count.describe("Tasks with a cost for both policies (the ratio's base)"),
  seconds_ratio: z.strictObject({
    estimate: z.number(),
    low: z.number(),
    high: z.number().nullable().describe("Null: unbounded (one task, or one task carrying all the time)"),
  }).nullable().optional().describe(
    "Σs̄_B,t / Σs̄_A,t of the runs' mean wall time per task, with the cost ratio's 95 % interval over tasks; null " +
      "when no task has runs of both policies",
  ),
  cost_basis: z.enum(["usd", "seconds"]).nullable().optional().describe(
    "What the verdict weighed as cost: the cost ratio (usd), or, when no task has a price under both policies, the " +
      "seconds ratio (a local model's cost is its time); null when neither",
  ),
  standard_error: z.number().describe("(high − low) / (2 · 1.96) of the difference's interval"),
  detectable_difference: z.number().describe("Smallest difference detectable at 80 % power, 5 % level"),
  margin: z.number(),
  cost_margin: z.number(),
  tasks_needed: count.nullable().describe("The fewest tasks that could show the margin if the policies agreed"),
  verdict: Verdict,
  reason: z.string().describe("Why this verdict, in words"),
  sentence: z.string().describe("The verdict sentence text and HTML print"),
  disagreements: z.array(z.strictObject({ task: z.string(), baseline: z.number(), candidate: z.number() })).describe(
    "Tasks whose solve rates differ between the two policies",
  ),
});
export type PairSummary = z.infer<typeof PairSummary>;

export const EvalSummary = z.strictObject({
  runs: count.describe("Counted runs"),
  attempts: count.describe("Every run started, retried infra attempts and interrupted runs included"),
  infra_retries: count.describe("Attempts after an infra failure of their pair (not the re-run of an interrupted one)"),
  dropped_pairs: z.array(z.string()).describe("Pairs dropped after infra failures on every attempt (run-id stems)"),
  runs_without_cost: count,
  unsandboxed_runs: count.describe("Runs whose processes or check ran outside the OS sandbox"),
  uncounted: z.strictObject({
    runs: count.describe("Rows not counted: interrupted runs, and the attempts an infra failure had re-run"),
    cost: z.number().nullable().describe("What they spent in USD; null when none has a cost"),
    model_calls: count,
    seconds: z.number().nonnegative().describe("Their own wall time, in seconds"),
  }).optional().describe("What the runs outside the statistics spent: kept, never in the figures"),
  rescored: z.boolean().describe("The checks were re-run by loom eval rescore"),
  policies: z.array(PolicySummary),
  pairs: z.array(PairSummary),
  per_tag: z.array(z.strictObject({
    tag: z.string(),
    tasks: count,
    policies: z.record(z.string(), z.strictObject({ runs: count, solved: count, solve_rate: z.number() })),
  })).describe("Per tag: the runs of its tasks under each policy, and the mean per-task solve rate"),
  per_task: z.array(z.strictObject({
    task: z.string(),
    policies: z.record(
      z.string(),
      z.strictObject({
        runs: count,
        solved: count,
        mean_cost: z.number().nullable(),
        mean_seconds: z.number().nullable().optional().describe("Mean of the runs' own wall time, in seconds"),
        median_steps: z.number().nullable(),
      }),
    ),
  })),
});
export type EvalSummary = z.infer<typeof EvalSummary>;

export const EvalFile = z.strictObject({
  $schema: z.string().optional(),
  kind: z.literal("eval"),
  schema_version: z.literal(EVAL_SCHEMA_VERSION),
  loom_version: z.string(),
  suite: z.strictObject({
    name: z.string().nullable(),
    path: z.string(),
    tasks: z.array(z.string()),
    tags: z.record(z.string(), z.array(z.string())).describe("Each task's tags"),
  }),
  key: EvalKey,
  settings: EvalSettings,
  shard: z.strictObject({ index: z.number().int().positive(), count: z.number().int().positive() }).nullable(),
  complete: z.boolean().describe("Every pair of this shard (or matrix) has a final result"),
  stopped: z.string().nullable().describe("Why runs stopped early (interrupted, --max-cost reached), else null"),
  rescore: z.strictObject({
    changed_checks: z.array(z.strictObject({ task: z.string(), old: Hash, new: Hash })).describe(
      "Checks that changed since the evaluation ran (accepted with --accept-changed-checks)",
    ),
  }).nullable().describe("Set by loom eval rescore"),
  rows: z.array(EvalRow).describe("One per run attempt, in canonical order (task, model, repeat, policy, attempt)"),
  summary: EvalSummary,
}).describe("The result of loom eval: every run, and a summary whose unit is the task");
export type EvalFile = z.infer<typeof EvalFile>;
