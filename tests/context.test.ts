// The two context policies tested directly (the loop exercises them end to end): exact byte counts, legacy's rolling
// transcript, bounded retirement under the 64 KiB ceiling, lookups that do not fit, and mandatory content over it.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { CEILING_BYTES, RETIRE_TRIGGER_BYTES } from "../lib/context/budget.ts";
import { BoundedContext, createContext, type RequestParts } from "../lib/context/context.ts";
import { utf8Length } from "../lib/text/digest.ts";
import { createEvent } from "../lib/context/events.ts";
import { ResultStore } from "../lib/context/store.ts";
import { BudgetError } from "../lib/errors.ts";
import type { ContextPolicyName } from "../lib/policy.ts";

const parts = (lookups: unknown[] = []): RequestParts => ({
  phase: "selection",
  responseSchema: { json: { type: "object" }, text: JSON.stringify({ type: "object" }) },
  candidates: { section: "candidates", task: "choose the next action" },
  state: (view) => ({ retired: view.retired }),
  lookups,
});

function commandEvent(seq: number, output: string, store: ResultStore) {
  return createEvent({
    seq,
    step: seq,
    action: "run_command",
    args: { argv: ["bash", "-c", `step ${seq}`] },
    reason: `step ${seq}`,
    report: {
      kind: "command",
      argv: ["bash", "-c", `step ${seq}`],
      exit_code: 0,
      timed_out: false,
      output: store.put(output).digest,
    },
  }, store);
}

function context(policy: ContextPolicyName, store: ResultStore, instructions = "You fix bugs.") {
  return createContext(policy, { instructions, intent: "Make the tests pass.", store });
}

test("each policy counts a request's bytes exactly: bytes is the UTF-8 length of its JSON", () => {
  fc.assert(
    fc.property(
      fc.constantFrom<ContextPolicyName>("legacy", "bounded"),
      fc.array(fc.string({ unit: "grapheme", maxLength: 3000 }), { maxLength: 12 }),
      fc.array(fc.record({ note: fc.string({ maxLength: 200 }) }), { maxLength: 3 }),
      (policy, outputs, lookups) => {
        const store = new ResultStore();
        const ctx = context(policy, store);
        outputs.forEach((output, i) => ctx.append(commandEvent(i + 1, output, store)));
        const built = ctx.build(parts(lookups));
        assert.equal(built.bytes, utf8Length(JSON.stringify(built.request)));
      },
    ),
    { numRuns: 60 },
  );
});

test("legacy sends every event with its output inline, retires nothing and never omits a lookup", () => {
  const store = new ResultStore();
  const ctx = context("legacy", store);
  const outputs = Array.from({ length: 30 }, (_, i) => `${i}:`.padEnd(4000, "x"));
  outputs.forEach((output, i) => ctx.append(commandEvent(i + 1, output, store)));
  const built = ctx.build(parts());
  const json = JSON.stringify(built.request);
  assert.ok(outputs.every((output) => json.includes(output)), "each output whole");
  assert.ok(built.bytes > CEILING_BYTES, "legacy has no ceiling");
  assert.deepEqual([built.retired, built.checkpointed, ctx.retiredCount], [0, false, 0]);
  const huge = { lookup: { $result: "sha256:x" }, content: "y".repeat(CEILING_BYTES) };
  assert.deepEqual(ctx.fitLookup(parts(), huge), { entry: huge, omitted: false });
});

test("bounded keeps every request under the ceiling, retiring the oldest events into a checkpoint", () => {
  const store = new ResultStore();
  const ctx = context("bounded", store) as BoundedContext;
  let retiredBy = 0, checkpoints = 0;
  for (let seq = 1; seq <= 80; seq++) {
    ctx.append(commandEvent(seq, `output ${seq} `.padEnd(6000, "z"), store));
    const built = ctx.build(parts());
    assert.ok(built.bytes <= CEILING_BYTES, `request ${seq}: ${built.bytes} bytes`);
    if (built.checkpointed) checkpoints++;
    retiredBy += built.retired;
  }
  assert.ok(checkpoints > 0 && retiredBy > 0, "events were retired");
  assert.equal(ctx.retiredCount, retiredBy);
  assert.equal(ctx.checkpoint?.retired, retiredBy);
  assert.equal(ctx.tailLength + retiredBy, 80, "every event is in the tail or the checkpoint");
  const json = JSON.stringify(ctx.build(parts()).request);
  assert.ok(!json.includes("output 1 zzz"), "the oldest output is gone from the request");
  assert.ok(json.includes("output 80 "), "the newest output is shown");
});

test("bounded: a lookup response that would pass the ceiling becomes an error entry with its size and the room", () => {
  const store = new ResultStore();
  const ctx = context("bounded", store);
  ctx.append(commandEvent(1, "small", store));
  const small = { lookup: { $result: "sha256:aa" }, content: "fits" };
  assert.deepEqual(ctx.fitLookup(parts(), small), { entry: small, omitted: false });
  const big = { lookup: { $result: "sha256:bb" }, content: "b".repeat(RETIRE_TRIGGER_BYTES + 20_000) };
  const fitted = ctx.fitLookup(parts(), big);
  assert.equal(fitted.omitted, true);
  assert.deepEqual(fitted.entry.lookup, big.lookup);
  assert.match(String(fitted.entry.error), new RegExp(`${utf8Length(JSON.stringify(big))} bytes do not fit`));
  assert.ok(ctx.build(parts([fitted.entry])).bytes <= CEILING_BYTES);
});

test("bounded: mandatory content over the ceiling fails with context_ceiling_exceeded; legacy sends it", () => {
  const store = new ResultStore();
  const instructions = "i".repeat(CEILING_BYTES + 1);
  assert.throws(
    () => context("bounded", store, instructions).build(parts()),
    (error: unknown) => error instanceof BudgetError && error.code === "context_ceiling_exceeded",
  );
  assert.ok(context("legacy", store, instructions).build(parts()).bytes > CEILING_BYTES);
});

test("a built request never changes when the context goes on", () => {
  for (const policy of ["legacy", "bounded"] as const) {
    const store = new ResultStore();
    const ctx = context(policy, store);
    ctx.append(commandEvent(1, "first", store));
    const lookups: unknown[] = [{ note: "one" }];
    const built = ctx.build(parts(lookups));
    const before = JSON.stringify(built.request);
    ctx.append(commandEvent(2, "second", store));
    lookups.push({ note: "two" });
    ctx.build(parts(lookups));
    assert.equal(JSON.stringify(built.request), before, policy);
  }
});
