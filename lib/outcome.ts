// How a run ends, and the one table from how a command ended to its process exit code.
import { z } from "zod";

export const Outcome = z.enum([
  "completed",
  "failed",
  "suspended",
  "step_limit",
  "invalid_answers",
  "cost_limit",
  "archive_capacity_exceeded",
  "routing_failed",
  "startup_failed",
  "interrupted",
]);
export type Outcome = z.infer<typeof Outcome>;

/**
 * How a command ended: a run's outcome, or an ending that is not a run's — a replay whose re-execution differed from
 * its recording, bad command-line input, or a bug.
 */
export type Ending = Outcome | "diverged" | "usage" | "internal_error";

/** The exit code of each ending. Errors carry theirs from here; nothing else decides one. */
export const EXIT_CODES: Readonly<Record<Ending, number>> = {
  completed: 0,
  failed: 1,
  diverged: 1,
  internal_error: 1,
  usage: 2,
  routing_failed: 3,
  startup_failed: 3,
  suspended: 4,
  archive_capacity_exceeded: 5,
  step_limit: 6,
  invalid_answers: 7,
  cost_limit: 8,
  interrupted: 130,
};

/** Outcomes a run can have ended with before its first step: a failed start or route, or an interrupt. */
export const BEFORE_A_STEP: ReadonlySet<Outcome> = new Set(["startup_failed", "routing_failed", "interrupted"]);

/** Outcomes that end a run as governed (usage is final), as opposed to an error (usage is partial). */
export const NORMAL_OUTCOMES: ReadonlySet<Outcome> = new Set([
  "completed",
  "step_limit",
  "suspended",
  "cost_limit",
]);
