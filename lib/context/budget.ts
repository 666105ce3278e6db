// The numbers of the bounded policy, and the pure decisions built on them.

/** Retire when a request would pass this many bytes… */
export const RETIRE_TRIGGER_BYTES = 48 * 1024;
/** …aiming for this many after a batch. */
export const RETIRE_TARGET_BYTES = 32 * 1024;
/** No bounded request is ever larger. */
export const CEILING_BYTES = 64 * 1024;
/** The tail never holds more events than this… */
export const TAIL_MAX = 64;
/** …and a count-triggered retirement halves it, so retirements stay rare (each one changes the cached prefix). */
export const TAIL_TARGET = 32;

/**
 * The three byte numbers of a bounded run. The SPEC's 48/32/64 KiB by default; a server whose context holds less
 * (a local model of 8K tokens) gets all three scaled down together (`budgetForContext`), in the same proportions.
 */
export type Budget = { trigger: number; target: number; ceiling: number };

export const DEFAULT_BUDGET: Budget = {
  trigger: RETIRE_TRIGGER_BYTES,
  target: RETIRE_TARGET_BYTES,
  ceiling: CEILING_BYTES,
};

/**
 * Bytes of a Loom request per token of the prompt the server reads, on the low side, so a ceiling sized with it holds.
 * Measured 2026-12-03 on llama-server (de3ff81) with SmolLM2-135M's tokenizer: whole requests 4.7-9.3 bytes per
 * prompt token (the response schema, about 3 KB of every request, becomes a grammar, not prompt), and what grows in a
 * run (events, file text, JSON-escaped source code) 2.8. At 3 over the whole request the schema's bytes pay for the
 * difference up to requests of about 40 KB, and the output room kept below the context is slack on top
 * (docs/providers.md, "A local server's model").
 */
export const BYTES_PER_TOKEN = 3;

/** The smallest ceiling Loom sizes a bounded run to: below it the mandatory sections alone rarely fit. */
const MIN_CEILING_BYTES = 8 * 1024;

/**
 * The budget for a server whose context holds `contextTokens` tokens, of which `outputTokens` are kept for the answer:
 * the ceiling is what the rest holds at BYTES_PER_TOKEN (never over 64 KiB, never under 8 KiB), the trigger and the
 * target 3/4 and 1/2 of it as 48 and 32 are of 64. null: the default budget fits, nothing to change.
 */
export function budgetForContext(
  { contextTokens, outputTokens }: { contextTokens: number; outputTokens: number },
): Budget | null {
  const room = Math.floor((contextTokens - outputTokens) * BYTES_PER_TOKEN);
  if (room >= CEILING_BYTES) return null;
  const ceiling = Math.max(MIN_CEILING_BYTES, room);
  return { ceiling, trigger: Math.floor(ceiling * 3 / 4), target: Math.floor(ceiling / 2) };
}

/**
 * Below the trigger, a tail needs at least this much room to be worth keeping under it: with less (a prefix within
 * 8 KiB of 48 KiB), every step would retire the step before it, so such a run is held to the ceiling instead. A smaller
 * budget scales it (1/8 of the ceiling).
 */
const minRoomBytes = (budget: Budget) => Math.floor(budget.ceiling / 8);

/**
 * Whether retiring can bring a request usefully under the trigger: the newest event alone fits under it, and the
 * request with every event retired (`floorBytes`) leaves the minimum room below it.
 */
export function triggerReachable(
  { floorBytes, keptNewestBytes }: { floorBytes: number; keptNewestBytes: number },
  budget: Budget = DEFAULT_BUDGET,
) {
  return keptNewestBytes < budget.trigger && floorBytes + minRoomBytes(budget) <= budget.trigger;
}

/**
 * Whether to retire before this request. `floorBytes` is the request with every event retired: when even that is
 * past the trigger (a very large prefix), retiring cannot reach the trigger, so only the ceiling and the tail count
 * force it — otherwise every request would retire everything, leaving the model blind and the cache cold.
 */
export function needsRetirement(
  { requestBytes, tailLength, floorBytes }: { requestBytes: number; tailLength: number; floorBytes: number },
  budget: Budget = DEFAULT_BUDGET,
): boolean {
  if (tailLength > TAIL_MAX) return true;
  if (floorBytes >= budget.trigger) return requestBytes > budget.ceiling;
  return requestBytes > budget.trigger;
}

/**
 * What a retirement aims for: 32 KiB; when even an empty tail is above that, halfway from that floor to the limit
 * that triggered it (48 KiB, or the ceiling for a prefix past 48 KiB), so a batch always leaves room for several steps.
 */
export function retirementTarget(
  floorBytes: number,
  reachable = floorBytes < RETIRE_TRIGGER_BYTES,
  budget: Budget = DEFAULT_BUDGET,
): number {
  if (floorBytes <= budget.target && reachable) return budget.target;
  const limit = reachable ? budget.trigger : budget.ceiling;
  return Math.floor((floorBytes + limit) / 2);
}

/**
 * How many of the oldest tail events to retire: the smallest batch that brings the request to `target` and the tail
 * to its count target. The newest event is kept when the others are not enough, unless the request does not fit the
 * ceiling with it. `bytesAfter(n)` is the request size after retiring n events (it includes the grown checkpoint).
 */
export function retirementBatch(
  { tailLength, bytesAfter, target = RETIRE_TARGET_BYTES, ceiling = CEILING_BYTES }: {
    tailLength: number;
    bytesAfter: (n: number) => number;
    target?: number;
    ceiling?: number;
  },
): number {
  for (let n = 1; n < tailLength; n++) {
    if (tailLength - n <= TAIL_TARGET && bytesAfter(n) <= target) return n;
  }
  if (tailLength >= 1 && bytesAfter(tailLength - 1) <= ceiling) return tailLength - 1;
  return tailLength;
}
