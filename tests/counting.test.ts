// Counting what a run did: a library provider's failed call counts like an HTTP one (null usage, the run failed as a
// provider error, not a bug); the archive's byte limit stops before asking for a step whose event could not be kept,
// as its count limit does.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { createEvent, MAX_EVENT_BYTES } from "../lib/context/events.ts";
import { ResultStore } from "../lib/context/store.ts";
import { NULL_USAGE, type Provider } from "../lib/vocabulary/turn.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { answer, give, pick, runLoopReported, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";

test("a library provider that throws: its call is counted with null usage and the run fails as provider_error", async () => {
  const usage = { input: 10, cache_read: 0, cache_write: 0, output: 2 };
  const script = new ScriptedProvider([
    answer("selection", { action: "run_tests" }, usage),
    answer("selection", { action: "run_tests" }, usage),
  ]);
  const provider: Provider = {
    name: "mine",
    capabilities: script.capabilities,
    complete: (request, options) => {
      if (script.calls === 2) return Promise.reject(new TypeError("socket closed"));
      return script.complete(request, options);
    },
  };
  const result = await startRun({ request: sliceRequest() }, libraryPlan(), {
    provider,
    executor: (store) => new ScriptedExecutor(store, ["ok", "ok"]),
  });
  assert.equal(result.outcome, "failed");
  assert.equal(result.error?.code, "provider_error");
  assert.match(result.error!.message, /Provider "mine" failed: socket closed/);
  // 3 calls sent, 3 reported: the third with null usage, as over HTTP.
  assert.equal(result.report.model_calls, 3);
  assert.deepEqual(result.report.calls[2].usage, NULL_USAGE);
  assert.deepEqual(result.report.partial_usage, { input: 20, cache_read: 0, cache_write: 0, output: 4 });
  // The provider's own words stay out of the report.
  assert.equal(result.report.error?.message, 'Provider "mine" threw TypeError; the message is on stderr');
});

test("at the archive's byte limit no step is asked for whose event could not be kept: steps equal archived events", async () => {
  // Each step's event holds a 3.5 KiB argv (inline: under the 4 KiB array limit).
  const argv = ["bash", "-c", ...Array.from({ length: 7 }, (_, i) => `${i}`.repeat(490))];
  const steps = Array.from({ length: 60 }, () => [pick("run_command"), give({ argv })]).flat();
  const store = new ResultStore();
  const result = await runLoopReported(sliceRequest(), {
    policy: "bounded",
    provider: new ScriptedProvider(steps),
    executor: new ScriptedExecutor(store, Array(60).fill("ok")),
    store,
    now: () => 0,
    archiveLimits: { maxBytes: MAX_EVENT_BYTES + 40_000 },
  });
  assert.equal(result.outcome, "archive_capacity_exceeded");
  assert.ok(result.steps > 1, `${result.steps} steps`);
  assert.equal(result.report.archive.events, result.steps, "every step asked for and executed has its event");
  assert.ok(result.report.archive.bytes <= MAX_EVENT_BYTES + 40_000);
});

test("no archived event passes MAX_EVENT_BYTES, whatever the arguments (long argv, escapes, long strings)", () => {
  const text = fc.string({ unit: fc.constantFrom("a", "\u0001", '"', "é", "😀", "\n"), maxLength: 2000 });
  fc.assert(
    fc.property(fc.array(text, { minLength: 1, maxLength: 200 }), text, text, (argv, reason, out) => {
      const store = new ResultStore();
      const sealed = createEvent({
        seq: 1,
        step: 1,
        action: "run_command",
        args: { argv },
        reason,
        report: { kind: "command", argv, exit_code: 1, timed_out: false, output: store.put(out).digest },
      }, store);
      assert.ok(sealed.bytes <= MAX_EVENT_BYTES, `${sealed.bytes} B`);
    }),
    { numRuns: 200 },
  );
});
