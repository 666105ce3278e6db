// How a command ended, decided once: from what happened (a run that got to its end, or what was thrown) to the
// outcome, the error code and the exit code. Errors carry a code; the exit code comes from the table in outcome.ts,
// here and nowhere else.
import { CostLimitError, InterruptedError, LoomError, RoutingError, StartupError, UsageError } from "./errors.ts";
import { type Ending, EXIT_CODES, type Outcome } from "./outcome.ts";

/** The error code of a bug: the run's report and result say it, and the exit code is the table's internal_error. */
export const INTERNAL_ERROR = "internal_error";

/** What happened, as the lifecycle, a command or main.ts knows it. */
export type Happened =
  /**
   * A run that got to its end (its report built), with its error's code; a bug inside the run ("internal_error") is
   * an internal error; a report that could not be written, or a replay whose re-execution differed from its
   * recording, end a completed run otherwise; so does a run required to end verified (require_passing_tests) that
   * did not.
   */
  | { ran: Outcome; errorCode?: string | null; reportUnwritten?: boolean; diverged?: boolean; unverified?: boolean }
  /**
   * What was thrown: bad input, a failed start or route, an interrupt, a failure of the run, or a bug. Inside a run's
   * steps (`inRun`) every error but an interrupt fails the run, whatever its class.
   */
  | { threw: unknown; aborted?: boolean; inRun?: boolean };

export type Ended = {
  /** The run outcome, or the ending that is not a run's (usage, internal_error, diverged). */
  ending: Ending;
  /** The outcome a run's report and result say (a bug inside a run is a failed run: its report is still written). */
  outcome: Outcome;
  /** The error's code, null when nothing went wrong. */
  code: string | null;
  exitCode: number;
};

/** An ending, the error's code, and the outcome a run's report says (the ending itself when it is a run's). */
const ended = (ending: Ending, code: string | null, outcome: Outcome = ending as Outcome): Ended => ({
  ending,
  outcome,
  code,
  exitCode: EXIT_CODES[ending],
});

/** The one decision of how a command ended. */
export function endingOf(happened: Happened): Ended {
  if ("ran" in happened) {
    const { ran, errorCode = null, reportUnwritten, diverged, unverified } = happened;
    if (errorCode === INTERNAL_ERROR) return ended("internal_error", INTERNAL_ERROR, ran);
    if (ran !== "completed") return ended(ran, errorCode);
    if (reportUnwritten) return ended("failed", "report_unwritable", "completed");
    if (unverified) return ended("failed", "unverified", "completed");
    return diverged ? ended("diverged", "diverged", "completed") : ended("completed", null);
  }
  const { threw, aborted, inRun } = happened;
  if (threw instanceof InterruptedError || aborted) return ended("interrupted", "interrupted");
  if (threw instanceof CostLimitError) return ended("cost_limit", "cost_limit");
  if (inRun && threw instanceof LoomError) return ended("failed", threw.code);
  if (threw instanceof UsageError) return ended("usage", threw.code, "startup_failed");
  if (threw instanceof RoutingError) return ended("routing_failed", threw.code);
  if (threw instanceof StartupError) return ended("startup_failed", threw.code);
  if (threw instanceof LoomError) return ended("failed", threw.code);
  return ended("internal_error", INTERNAL_ERROR, "failed");
}
