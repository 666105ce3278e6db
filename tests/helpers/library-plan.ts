// A library run's plan, built as api.ts builds it (planRun): the tests' runs that configure a run by the library's
// options, over the process's environment unless a test gives its own.
import { type PlanOptions, planRun, type RunPlan } from "../../lib/run/run-plan.ts";

export function libraryPlan(
  options: PlanOptions = {},
  { env = process.env }: { env?: Record<string, string | undefined> } = {},
): RunPlan {
  return planRun(options, { env });
}
