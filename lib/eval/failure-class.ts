// How a run ends for an evaluation: solved, unsolved (the agent's own failure) or infra (nothing the policy or model
// did: a provider outage after retries, a sandbox or workspace failure, a check that could not run). Only infra is
// retried.
import type { Outcome } from "../outcome.ts";
import type { FailureClass } from "./eval-file.ts";

/** What decides the class: the run's outcome and error code, and the hidden check when it ran. */
export type CheckedRun = {
  outcome: Outcome;
  error_code: string | null;
  check: { passed: boolean; ran: boolean } | null;
};

/**
 * Error codes that say the run's surroundings failed, not the agent. A request the provider refused as invalid
 * (provider_bad_request: too long for the model's context window, say) is the policy's doing, not infra.
 */
function isInfraError(code: string | null): boolean {
  if (code === null || code === "provider_bad_request" || code === "model_not_found") return false;
  return code.startsWith("provider_") || code.startsWith("sandbox_") || code.startsWith("workspace_") ||
    code === "report_unwritable" || code === "record_unwritable" || code === "executor_failed";
}

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
