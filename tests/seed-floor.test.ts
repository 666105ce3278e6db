// F_seed, the seed-conformant floor of the benchmark (bench/seed-floor.ts): what it charges below the trigger, the
// rewrite a forced retirement costs, and the hindsight choice of batches within the window.
import { test } from "node:test";
import assert from "node:assert/strict";
import { type SeedCall, seedFloorCost } from "../bench/seed-floor.ts";

const prices = { write: 1.25, read: 0.1 };
/** One single-call step per event: call c shows events 0..c (each `size` bytes) above `other` bytes. */
function calls(n: number, { size = 100, other = 100, fixed = 1000, candidates = 50 } = {}): SeedCall[] {
  return Array.from({ length: n }, (_, c) => {
    const events = Array.from({ length: c + 1 }, (_, i) => ({ text: `event ${i}`, bytes: size }));
    return { step: c + 1, fixed, candidates, perStep: 0, events, requestBytes: other + size * (c + 1) };
  });
}
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} != ${b}`);

test("F_seed below the trigger: each event written once as it enters, re-read by every later call, never rewritten", () => {
  const parts = seedFloorCost(calls(3), prices);
  // Prefix written once and read twice, candidates uncached: 1250 + 200 + 150 bytes.
  // Events: 125 + (10 + 125) + (20 + 100, the last call's new event sent uncached: nothing reads it again).
  close(parts.tailReads * 4, 30);
  close(parts.entering * 4, 350);
  assert.equal(parts.rewrites, 0);
  close(parts.total * 4, 1600 + 380);
});

test("F_seed past the trigger retires at least enough to come back under it, and pays the kept tail again", () => {
  // Call 3 would be 100 + 4 × 300 = 1,300 bytes over a 1,000-byte trigger; with the target at the trigger the batch
  // is exactly the oldest event, and the two events kept after it are written again.
  const run = calls(4, { size: 300 });
  const parts = seedFloorCost(run, prices, { trigger: 1000, target: 1000 });
  close(parts.rewrites * 4, 1.25 * 600);
  // Below the trigger nothing is rewritten.
  assert.equal(seedFloorCost(run, prices, { trigger: 2000, target: 1000 }).rewrites, 0);
});

test("F_seed chooses its batches in hindsight: a larger batch toward the target is taken when it pays", () => {
  const run = calls(12, { size: 300 });
  const forced = seedFloorCost(run, prices, { trigger: 1000, target: 1000 });
  const free = seedFloorCost(run, prices, { trigger: 1000, target: 400 });
  assert.ok(free.total < forced.total, `${free.total} < ${forced.total}`);
  // Above what the same run costs with no tail, by exactly its tail parts.
  const noTail = seedFloorCost(run.map((c) => ({ ...c, events: [], requestBytes: 100 })), prices);
  assert.ok(free.total > noTail.total);
  close(free.total - noTail.total, free.tailReads + free.rewrites + free.entering);
});
