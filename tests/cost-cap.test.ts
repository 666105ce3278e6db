// Money per run (loom run --max-cost USD, limits.max_cost_usd): no model call starts once the run's cost (its usage
// counters at the model's price) has reached the cap; the run ends cost_limit (exit 8) with its report, and the
// progress line shows the cost so far.
import { test } from "node:test";
import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { BUILT_IN_PRICES } from "../lib/prices.ts";
import { EXIT_CODES } from "../lib/outcome.ts";
import type { Progress } from "../lib/run-events.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { main } from "../main.ts";
import { Reporter } from "../commands/reporter.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { answer, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";

const MODEL = "anthropic/claude-sonnet-4-5";
const PRICE = BUILT_IN_PRICES.models[MODEL];
// Each call: a million uncached input tokens, nothing else: exactly PRICE.input dollars.
const MILLION = { input: 1_000_000, cache_read: 0, cache_write: 0, output: 0 };
const tests = Array.from({ length: 10 }, () => answer("selection", { action: "run_tests" }, MILLION));

test("--max-cost stops before the call that would start at or past the cap: cost_limit, exit 8, the report lands", async () => {
  const progress: Progress[] = [];
  const cap = 2.5 * PRICE.input; // two calls spend 2 x input, under the cap; after the third, no fourth starts
  const provider = new ScriptedProvider(tests);
  const result = await startRun({ request: sliceRequest({ model: MODEL }) }, libraryPlan({ maxCost: cap }), {
    provider,
    executor: (store) => new ScriptedExecutor(store, Array(10).fill("ok")),
    onProgress: (p) => progress.push(p),
  });
  assert.equal(provider.calls, 3);
  assert.equal(result.outcome, "cost_limit");
  assert.equal(result.exit_code, EXIT_CODES.cost_limit);
  assert.equal(result.exit_code, 8);
  assert.equal(result.error?.code, "cost_limit");
  assert.match(result.error!.message, /Cost limit reached: \$9\.0000 spent of the \$7\.5000 cap/);
  assert.equal(result.report.outcome, "cost_limit");
  assert.equal(result.report.model_calls, 3);
  // A governed stop like the step limit: the usage is final.
  assert.deepEqual(result.report.final_usage, { input: 3_000_000, cache_read: 0, cache_write: 0, output: 0 });
  const calls = progress.filter((p) => p.phase !== "execution");
  assert.deepEqual(calls.map((p) => p.cost_usd), [0, PRICE.input, 2 * PRICE.input]);
  const { io, out } = fakeIo({ cwd: tmpdir() });
  // The live line (a terminal) shows the cost so far; a log gets one line per step instead.
  new Reporter({ ...io, isTTY: true }, { command: "run" }).progress!(calls[2]!);
  assert.match(out.stderr, /step 3\/200 selection [\d,]+ B, \$6\.0000 so far$/m);
});

test("the request's limits.max_cost_usd caps a run as the flag does; under the cap nothing changes", async () => {
  const capped = await startRun(
    { request: sliceRequest({ model: MODEL, limits: { max_steps: 10, max_cost_usd: 1 } }) },
    libraryPlan(),
    {
      provider: new ScriptedProvider(tests),
      executor: (store) => new ScriptedExecutor(store, Array(10).fill("ok")),
    },
  );
  assert.equal(capped.outcome, "cost_limit");
  assert.equal(capped.report.model_calls, 1);
  const free = await startRun({ request: sliceRequest({ model: MODEL, limits: { max_steps: 2 } }) }, libraryPlan(), {
    provider: new ScriptedProvider(tests),
    executor: (store) => new ScriptedExecutor(store, Array(10).fill("ok")),
  });
  assert.equal(free.outcome, "step_limit");
});

test("a cap on a model without a known price does not start (exit 3, one line); bad --max-cost values are usage errors", async () => {
  const result = await startRun({ request: sliceRequest({ model: "test/unpriced" }) }, libraryPlan({ maxCost: 1 }), {
    provider: new ScriptedProvider(tests),
    executor: (store) => new ScriptedExecutor(store),
  });
  assert.equal(result.outcome, "startup_failed");
  assert.equal(result.exit_code, 3);
  assert.equal(result.error?.code, "price_unknown");
  assert.match(result.error!.message, /has none for "test\/unpriced"/);
  for (const bad of ["0", "-1", "abc", "1e999"]) {
    const { io, out } = fakeIo({ cwd: tmpdir() });
    assert.equal(await main(["run", "x", "-m", MODEL, "--max-cost", bad], io), 2, bad);
    assert.match(
      out.stderr,
      /^loom run: --max-cost "[^"]*": expected an amount of US dollars above 0, e\.g\. 0\.50\n$/,
    );
  }
});

test("the progress line shows no cost once a call reported no counters (a recording without usage): none is claimed", async () => {
  const progress: Progress[] = [];
  const unreported = [answer("selection", { action: "run_tests" }), answer("selection", { action: "run_tests" })];
  await startRun({ request: sliceRequest({ model: MODEL, limits: { max_steps: 2 } }) }, libraryPlan(), {
    provider: new ScriptedProvider(unreported),
    executor: (store) => new ScriptedExecutor(store, ["ok", "ok"]),
    onProgress: (p) => progress.push(p),
  });
  const calls = progress.filter((p) => p.phase !== "execution");
  assert.deepEqual(calls.map((p) => p.cost_usd), [0, null]);
  const { io, out } = fakeIo({ cwd: tmpdir() });
  new Reporter({ ...io, isTTY: true }, { command: "run" }).progress!(calls[1]!);
  assert.doesNotMatch(out.stderr, /so far/);
});
