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
 * Below the trigger, a tail needs at least this much room to be worth keeping under it: with less (a prefix within
 * 8 KiB of 48 KiB), every step would retire the step before it, so such a run is held to the ceiling instead.
 */
const MIN_ROOM_BYTES = 8 * 1024;

/**
 * Whether retiring can bring a request usefully under the trigger: the newest event alone fits under it, and the
 * request with every event retired (`floorBytes`) leaves MIN_ROOM_BYTES below it.
 */
export function triggerReachable({ floorBytes, keptNewestBytes }: { floorBytes: number; keptNewestBytes: number }) {
  return keptNewestBytes < RETIRE_TRIGGER_BYTES && floorBytes + MIN_ROOM_BYTES <= RETIRE_TRIGGER_BYTES;
}

/**
 * Whether to retire before this request. `floorBytes` is the request with every event retired: when even that is
 * past the trigger (a very large prefix), retiring cannot reach the trigger, so only the ceiling and the tail count
 * force it — otherwise every request would retire everything, leaving the model blind and the cache cold.
 */
export function needsRetirement(
  { requestBytes, tailLength, floorBytes }: { requestBytes: number; tailLength: number; floorBytes: number },
): boolean {
  if (tailLength > TAIL_MAX) return true;
  if (floorBytes >= RETIRE_TRIGGER_BYTES) return requestBytes > CEILING_BYTES;
  return requestBytes > RETIRE_TRIGGER_BYTES;
}

/**
 * What a retirement aims for: 32 KiB; when even an empty tail is above that, halfway from that floor to the limit
 * that triggered it (48 KiB, or the ceiling for a prefix past 48 KiB), so a batch always leaves room for several steps.
 */
export function retirementTarget(floorBytes: number, reachable = floorBytes < RETIRE_TRIGGER_BYTES): number {
  if (floorBytes <= RETIRE_TARGET_BYTES && reachable) return RETIRE_TARGET_BYTES;
  const limit = reachable ? RETIRE_TRIGGER_BYTES : CEILING_BYTES;
  return Math.floor((floorBytes + limit) / 2);
}

/**
 * How many of the oldest tail events to retire: the smallest batch that brings the request to `target` and the tail
 * to its count target. The newest event is kept when the others are not enough, unless the request does not fit the
 * ceiling with it. `bytesAfter(n)` is the request size after retiring n events (it includes the grown checkpoint).
 */
export function retirementBatch(
  { tailLength, bytesAfter, target = RETIRE_TARGET_BYTES }: {
    tailLength: number;
    bytesAfter: (n: number) => number;
    target?: number;
  },
): number {
  for (let n = 1; n < tailLength; n++) {
    if (tailLength - n <= TAIL_TARGET && bytesAfter(n) <= target) return n;
  }
  if (tailLength >= 1 && bytesAfter(tailLength - 1) <= CEILING_BYTES) return tailLength - 1;
  return tailLength;
}
