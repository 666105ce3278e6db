// Comparing evaluations of the same matrix run at different times (sharded or not): what the runs' own process
// timings decide is left out. The run's wall time, the check's duration, and — because a test report's duration_ms
// is part of what the model is sent — the request bytes, the stand-in's usage (counted from those bytes) and so the
// cost. Everything else must be equal.
import type { EvalFile, EvalRow } from "../../lib/eval/eval-file.ts";

export function comparableRow(
  { wall_ms: _w, overhead_ms: _o, request_bytes: _b, usage: _u, cost: _c, check, ...row }: EvalRow,
) {
  return { ...row, check: check && { ...check, duration_ms: 0 } };
}

export function comparableSummary(s: EvalFile["summary"]) {
  return {
    runs: s.runs,
    attempts: s.attempts,
    dropped_pairs: s.dropped_pairs,
    policies: s.policies.map((p) => ({
      policy: p.policy,
      tasks: p.tasks,
      runs: p.runs,
      solved: p.solved,
      solve_rate: p.solve_rate,
      pass_all: p.pass_all,
      pass_at_1: p.pass_at_1,
      tasks_solved: p.tasks_solved,
      median_steps: p.median_steps,
      model_calls: p.model_calls,
    })),
    pairs: s.pairs.map((p) => ({
      difference: p.difference,
      permutation_p: p.permutation_p,
      mcnemar_p: p.mcnemar_p,
      detectable_difference: p.detectable_difference,
      disagreements: p.disagreements,
    })),
    per_tag: s.per_tag,
    per_task: s.per_task.map((t) => ({
      task: t.task,
      policies: Object.fromEntries(
        Object.entries(t.policies).map(([k, v]) => [k, { runs: v.runs, solved: v.solved, steps: v.median_steps }]),
      ),
    })),
  };
}
