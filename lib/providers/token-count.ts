/**
 * No call's counter is larger: 2^32 tokens, far beyond any model's context and output. A server reporting more is
 * taken at this bound, never at its word — so a cost cap still stops the run (the cost is over, not under), and a
 * run's or an evaluation's sums stay exact integers (below 2^53: a larger one would make eval.json unreadable).
 */
const MAX_TOKEN_COUNT = 2 ** 32;

/** A reported token counter (at most MAX_TOKEN_COUNT), or null when the provider did not report one. */
export function tokenCount(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? Math.min(value, MAX_TOKEN_COUNT) : null;
}
