// The limits a run stops at and the finish it may not claim: steps without a valid answer, model calls per step,
// the cost cap, and a finish with status success on an unverified revision (require_passing_tests).
import type { ActionName } from "../vocabulary/actions.ts";
import { LOOKUPS_PER_STAGE } from "../vocabulary/answer.ts";
import { type Briefing, unverifiedReason } from "../context/briefing.ts";
import { CostLimitError } from "../errors.ts";
import type { ExecutionReport } from "../vocabulary/reports.ts";
import type { SliceRequest } from "../slice.ts";
import { refusedAt } from "./decision.ts";

/**
 * Steps in a row refused because the model never gave a valid answer (each after a re-ask) end the run: a model that
 * cannot answer in the schema would otherwise burn every remaining step.
 */
export const MAX_INVALID_STEPS = 3;

/** Refusals that mean the model gave no usable answer in the step: these count toward MAX_INVALID_STEPS. */
export const NO_ANSWER: ReadonlySet<string> = new Set(["invalid_answer", "lookup_limit"]);

/**
 * The most model calls one step can make (README, exit codes): each stage (two in a two-call step) asks at most
 * LOOKUPS_PER_STAGE + 2 times — its lookups, one re-ask after an invalid answer or a failed lookup, and the answer that
 * ends it (valid, invalid a second time, or one lookup too many). A single-call step is one stage with two parts (at
 * most LOOKUPS_PER_STAGE + 3 calls). tests/runaway.test.ts holds every run to it.
 */
export const MAX_CALLS_PER_STEP = 2 * (LOOKUPS_PER_STAGE + 2);

/**
 * With require_passing_tests, a finish with status success on a revision whose tests are not current and passing is
 * refused (the model sees why, and may run the tests or finish with failure); null when the finish may go ahead.
 */
export function unverifiedFinish(
  request: SliceRequest,
  { action, args, briefing, step }: {
    action: ActionName | null;
    args: Record<string, unknown>;
    briefing: Briefing;
    step: number;
  },
): ExecutionReport | null {
  if (!request.require_passing_tests || action !== "finish" || args.status !== "success") return null;
  const why = unverifiedReason(briefing);
  if (why === null) return null;
  return refusedAt(step, {
    code: "tests_not_current",
    reason: `finish with status success needs passing tests on the latest revision: ${why}; run_tests first, or ` +
      "finish with status failure",
  });
}

/** With limits.max_cost_usd: the check before each model call, which stops the run once the cost reached the cap. */
export function costCap(request: SliceRequest, spent: (() => number) | undefined): (() => void) | undefined {
  const cap = request.limits.max_cost_usd;
  if (cap === undefined || spent === undefined) return undefined;
  return () => {
    const soFar = spent();
    if (soFar >= cap) {
      throw new CostLimitError(
        `Cost limit reached: $${usd(soFar)} spent of the $${usd(cap)} cap (--max-cost); no further model calls`,
      );
    }
  };
}

/** Dollars with four decimals, as the run's text shows cost. */
const usd = (amount: number) => amount.toFixed(4);
