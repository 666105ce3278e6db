// A run's plan (lib/run/run-plan.ts): one immutable value built by pure code — the user's settings resolved once, the
// outputs, the tables — and the pure decisions made from it before the loop, which the lifecycle only carries out.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  knownAtStart,
  libraryRun,
  ownFilesOf,
  planRun,
  requestSettings,
  type RunPlan,
  runPlan,
  settledRequest,
  unpricedCap,
} from "../lib/run/run-plan.ts";
import type { RunOptions } from "../lib/run/run-options.ts";
import { resolveSettings } from "../lib/settings/settings.ts";
import { BUILT_IN_PRICES, pricesOf, type PriceTable } from "../lib/prices.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { StartupError } from "../lib/errors.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { sliceRequest } from "./helpers/loop-builders.ts";

const PRICED = "anthropic/claude-sonnet-4-5";

/** The settings a run of `request` gets under a library run's options (as prepare layers them). */
function settingsOf(plan: RunPlan, request = sliceRequest()) {
  assert.ok(plan.settings.ok, "the plan's settings resolve");
  const layered = plan.settings.plan.request(requestSettings(request, "r.json"));
  assert.ok(layered.ok, "the request's settings resolve");
  return layered.settings;
}

test("planRun resolves the library's options as flags over the environment it is given, and nothing else", () => {
  const env = { LOOM_CONTEXT_POLICY: "bounded", LOOM_SANDBOX: "off" };
  const plan = planRun({ stepProtocol: "single-call", previewMode: "wide" }, { env });
  assert.ok(plan.settings.ok);
  const { context_policy, step_protocol, previews, sandbox } = plan.settings.settings;
  assert.deepEqual([context_policy.value, context_policy.source], ["bounded", "environment"]);
  assert.deepEqual([step_protocol.value, step_protocol.source], ["single-call", "flag"]);
  assert.deepEqual([previews.value, previews.source], ["wide", "flag"]);
  assert.deepEqual([sandbox.value, sandbox.source], ["off", "environment"]);
  // An option is a flag: above the environment. The environment is passed in: the process's is never read.
  const legacy = planRun({ contextPolicy: "legacy" }, { env });
  assert.equal(legacy.settings.ok && legacy.settings.settings.context_policy.value, "legacy");
  const bare = planRun({}, { env: {} });
  assert.equal(bare.settings.ok && bare.settings.settings.sandbox.source, "default");
  // A bad variable is the plan's refusal (the run reports it as a startup failure), never a throw.
  const refused = planRun({}, { env: { LOOM_SANDBOX: "sometimes" } });
  assert.equal(refused.settings.ok, false);
  assert.deepEqual(knownAtStart(refused, { slice: null }), {
    policy: "legacy",
    reportPath: undefined,
    slice: null,
    route: null,
    calls: [],
  });
});

test("requirePassingTests: false says nothing (the request's own stands); the sandbox grants are the plan's", () => {
  const off = settingsOf(
    planRun({ requirePassingTests: false }, { env: {} }),
    sliceRequest({ require_passing_tests: true }),
  );
  assert.deepEqual([off.require_passing_tests.value, off.require_passing_tests.source], [true, "request"]);
  const plan = planRun({ sandboxGrants: { network: true, env: ["PATH_EXTRA"] } }, { env: {} });
  assert.ok(plan.settings.ok);
  assert.deepEqual(plan.settings.plan.grants, { sandbox_network: true, sandbox_env: ["PATH_EXTRA"] });
});

test("a plan is immutable, and its prices are the given table, else the model table's, else the built-in one", () => {
  const resolved = resolveSettings({ env: {} });
  assert.ok(resolved.ok);
  const plan = runPlan(resolved.plan, { contextReport: "/r.json", ownFiles: ["/a"], models: BUILT_IN_MODELS });
  assert.ok(Object.isFrozen(plan) && Object.isFrozen(plan.outputs) && Object.isFrozen(plan.outputs.ownFiles));
  assert.throws(() => (plan.outputs.ownFiles as string[]).push("/b"));
  // A command's plan carries its resolution as the run reads it.
  assert.ok(plan.settings.ok);
  assert.equal(plan.settings.plan, resolved.plan);
  assert.deepEqual(plan.prices, pricesOf(BUILT_IN_MODELS));
  const own: PriceTable = { ...BUILT_IN_PRICES, models: {} };
  assert.equal(runPlan(resolved.plan, { prices: own, models: BUILT_IN_MODELS }).prices, own);
  assert.equal(runPlan(resolved.plan).prices, BUILT_IN_PRICES);
  assert.deepEqual(runPlan(resolved.plan).outputs, { ownFiles: [] });
});

test("the request is settled by its settings: the resolved protocol, previews, --require-passing-tests and --max-cost", () => {
  const request = sliceRequest({ limits: { max_steps: 5, max_cost_usd: 2 } });
  // Nothing set: the request is as written (no default is written into it).
  assert.deepEqual(settledRequest(request, settingsOf(planRun({}, { env: {} }), request)), request);
  const flagged = planRun(
    { stepProtocol: "single-call", previewMode: "compact", requirePassingTests: true, maxCost: 0.5 },
    { env: {} },
  );
  const settled = settledRequest(request, settingsOf(flagged, request));
  assert.equal(settled.step_protocol, "single-call");
  assert.equal(settled.previews, "compact");
  assert.equal(settled.require_passing_tests, true);
  assert.deepEqual(settled.limits, { max_steps: 5, max_cost_usd: 0.5 });
  // The request's own stand when no flag says otherwise; the request given is not changed.
  const own = sliceRequest({ step_protocol: "single-call", require_passing_tests: true, limits: request.limits });
  const kept = settledRequest(own, settingsOf(planRun({ stepProtocol: undefined }, { env: {} }), own));
  assert.deepEqual(kept, own);
  assert.equal(request.step_protocol, undefined);
  assert.deepEqual(request.limits, { max_steps: 5, max_cost_usd: 2 });
});

test("a cost cap needs the model's price: unpricedCap says so before any call, and only then", () => {
  assert.equal(unpricedCap(sliceRequest({ model: "test/unpriced" }), BUILT_IN_PRICES), null, "no cap, no price needed");
  const capped = { max_steps: 3, max_cost_usd: 1 };
  assert.equal(unpricedCap(sliceRequest({ model: PRICED, limits: capped }), BUILT_IN_PRICES), null);
  const refused = unpricedCap(sliceRequest({ model: "test/unpriced", limits: capped }), BUILT_IN_PRICES);
  assert.ok(refused instanceof StartupError);
  assert.equal(refused.code, "price_unknown");
  assert.match(refused.message, /has none for "test\/unpriced"/);
  // The plan's table decides: a priced model without a price in the given table is refused too.
  assert.ok(unpricedCap(sliceRequest({ model: PRICED, limits: capped }), { ...BUILT_IN_PRICES, models: {} }));
});

test("Loom's own files: a catalog's report path, the outputs and the other own files, none missing, none invented", () => {
  const plan = planRun({
    contextReport: "/o/r.json",
    record: "/o/rec.jsonl",
    diff: "/o/d.patch",
    trace: "/o/t.jsonl",
    ownFiles: ["/w/rec.jsonl"],
  }, {
    env: {},
  });
  assert.deepEqual(ownFilesOf(plan.outputs, { reportPath: "/c/report.json" }), [
    "/c/report.json",
    "/o/r.json",
    "/o/rec.jsonl",
    "/o/d.patch",
    "/o/t.jsonl",
    "/w/rec.jsonl",
  ]);
  assert.deepEqual(ownFilesOf(planRun({}, { env: {} }).outputs, { reportPath: undefined }), []);
  assert.equal(knownAtStart(plan, { slice: "fix" }).reportPath, "/o/r.json");
});

test("a library run: its plan from its options, its hooks as given, and nothing else a caller's object holds", () => {
  const provider = new ScriptedProvider([]);
  const warn = () => {};
  // A caller's object may hold more than RunOptions says (a plain JavaScript caller): none of it reaches the run.
  const smuggled = {
    contextPolicy: "bounded",
    contextReport: "/r.json",
    provider,
    warn,
    previews: { retained: 1, upTo: 1, newest: 1 },
    replay: { recording: {}, execute: true },
    diff: "/d.patch",
  } as RunOptions;
  const { plan, hooks } = libraryRun(smuggled, { env: {} });
  assert.ok(plan.settings.ok);
  assert.equal(plan.settings.settings.context_policy.value, "bounded");
  assert.deepEqual(plan.outputs, { contextReport: "/r.json", ownFiles: [] });
  assert.equal(plan.previews, undefined);
  assert.deepEqual(Object.keys(hooks).sort(), ["now", "onProgress", "provider", "signal", "warn"]);
  assert.equal(hooks.provider, provider);
  assert.equal(hooks.warn, warn);
});
