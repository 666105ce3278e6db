// How a run ends for an evaluation: solved, unsolved (the agent's own failure) or infra (nothing the policy or model
// did: a provider outage after retries, a sandbox or workspace failure, a check that could not run). Only infra is
// retried.
import type { Outcome } from "../outcome.ts";
import type { EvalRow, FailureClass } from "./eval-file.ts";
import { pairKey } from "./matrix.ts";

/** What decides the class: the run's outcome and error code, and the hidden check when it ran. */
export type CheckedRun = {
  outcome: Outcome;
  error_code: string | null;
  check: { passed: boolean; ran: boolean } | null;
};

/**
 * Error codes that say the run's surroundings failed, not the agent. A request the provider refused as invalid
 * (provider_bad_request) or as longer than the model's context (provider_context_exceeded: a transcript that grew past
 * what the server holds) is the policy's doing, not infra: it is counted, never retried away.
 */
const POLICY_ERRORS: readonly string[] = ["provider_bad_request", "provider_context_exceeded", "model_not_found"];

function isInfraError(code: string | null): boolean {
  if (code === null || POLICY_ERRORS.includes(code)) return false;
  return code.startsWith("provider_") || code.startsWith("sandbox_") || code.startsWith("workspace_") ||
    code === "report_unwritable" || code === "record_unwritable" || code === "executor_failed";
}

/** The error code of a run the evaluation's interrupt stopped (a run stopped at the time cap says run_timeout). */
export const INTERRUPTED = "interrupted";

/**
 * A run the evaluation's interrupt (Ctrl-C) stopped before it had a result: kept in eval.json for what it spent,
 * never counted, and re-run by --resume without using up a retry.
 */
export function wasInterrupted(row: { outcome: Outcome; error_code: string | null }): boolean {
  return row.outcome === "interrupted" && row.error_code === INTERRUPTED;
}

/**
 * The attempts (by attemptKey) an interrupt cut short: a run of it was stopped, or a half of its pair never started.
 * `policies`: how many runs a whole attempt has.
 */
export function interruptedAttempts(rows: readonly EvalRow[], policies: number): Set<string> {
  const runs = new Map<string, EvalRow[]>();
  for (const row of rows) runs.set(attemptKey(row), [...(runs.get(attemptKey(row)) ?? []), row]);
  return new Set([...runs].filter(([, rs]) => rs.length < policies || rs.some(wasInterrupted)).map(([key]) => key));
}

/** One attempt of one pair. */
export const attemptKey = (row: Pick<EvalRow, "task" | "model" | "repeat" | "attempt">): string =>
  `${pairKey(row)}\u0000${row.attempt}`;

export function failureClass({ outcome, error_code, check }: CheckedRun): FailureClass {
  // A run stopped at the evaluation's time cap ended like any other: what it left is checked.
  if (outcome === "interrupted" && error_code === "run_timeout" && check?.ran) {
    return check.passed ? "solved" : "unsolved";
  }
  if (outcome === "startup_failed" || outcome === "routing_failed" || outcome === "interrupted") return "infra";
  if (outcome === "failed" && isInfraError(error_code)) return "infra";
  if (check === null || !check.ran) return "infra";
  return check.passed ? "solved" : "unsolved";
}

/**
 * Whether a check's output reports skipped tests (node:test and TAP "# skipped N", pytest "N skipped", "SKIP"
 * directives): a skipped test proves nothing, so the check counts as failed.
 */
export function reportsSkippedTests(output: string): boolean {
  return /^# (skipped|todo) [1-9]/m.test(output) || /\b[1-9]\d* skipped\b/.test(output) ||
    /^(not )?ok \d+ .*# SKIP/im.test(output);
}
