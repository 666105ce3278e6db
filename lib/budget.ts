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

export function needsRetirement({ requestBytes, tailLength }: { requestBytes: number; tailLength: number }): boolean {
  return requestBytes > RETIRE_TRIGGER_BYTES || tailLength > TAIL_MAX;
}

/**
 * How many of the oldest tail events to retire: the smallest batch that brings the request to the byte target and
 * the tail to its count target. `bytesAfter(n)` is the request size after retiring n events (it includes the grown
 * checkpoint); it must be computable for 0..tailLength.
 */
export function retirementBatch({ tailLength, bytesAfter }: { tailLength: number; bytesAfter: (n: number) => number }): number {
  for (let n = 1; n <= tailLength; n++) {
    if (tailLength - n <= TAIL_TARGET && bytesAfter(n) <= RETIRE_TARGET_BYTES) return n;
  }
  return tailLength;
}
