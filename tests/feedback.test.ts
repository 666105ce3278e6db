// Loom's feedback to a small model (issue 44): a passing test says plainly that the run may finish; a refused edit
// shows the lines that are there; an action on a missing path names the paths that exist.
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyReport, finishableLine, initialBriefing, viewBriefing } from "../lib/context/briefing.ts";
import { ResultStore } from "../lib/context/store.ts";
import { renderSection } from "../lib/providers/render-sections.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { NULL_USAGE, type Provider, type TurnRequest } from "../lib/vocabulary/turn.ts";
import { runLoopReported, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";

/** The request as a chat model reads it: every section rendered, in order. */
const promptText = (request: TurnRequest) => request.sections.map(renderSection).join("\n\n");

/** How many characters at the end of a request a small model is taken to weigh (the question and what precedes it). */
const END = 600;

/**
 * A stand-in for a small single-call model: edit, run the tests, then finish only when the end of the request says the
 * tests passed on the current revision; otherwise it edits again, as the live 0.5B model did.
 */
class EndReadingModel implements Provider {
  readonly name = "end-reading";
  readonly capabilities = { prompt_caching: false, schema_enforcement: false };
  readonly requests: TurnRequest[] = [];
  complete(request: TurnRequest) {
    this.requests.push(request);
    const call = this.requests.length;
    const end = promptText(request).slice(-END);
    const value = call === 2
      ? { action: "run_tests" }
      : call > 2 && /tests passed on r\d+, the current revision/i.test(end)
      ? { action: "finish", args: { status: "success", summary: "tests pass" } }
      : { action: "edit_file", args: { path: "a.ts", old_text: "a + b", new_text: "a - b" } };
    return Promise.resolve({ value, usage: NULL_USAGE, stop_reason: "end" as const });
  }
}

async function endReadingRun(policy: ContextPolicyName, testExit: number[] = [0]) {
  const store = new ResultStore();
  const provider = new EndReadingModel();
  // A test log long enough that its passing line is not the last thing a bounded request shows.
  const log = `${"ok - a check that passed\n".repeat(40)}# tests 40\n# pass 40\n`;
  const executor = new ScriptedExecutor(store, [log], testExit);
  let t = 0;
  const result = await runLoopReported(sliceRequest({ step_protocol: "single-call", limits: { max_steps: 6 } }), {
    policy,
    provider,
    executor,
    store,
    now: () => (t += 1),
  });
  return { result, provider };
}

test("bounded: after the tests pass on the current revision, the end of the next request says the run can finish", async () => {
  const { provider } = await endReadingRun("bounded");
  const afterPass = provider.requests[2];
  assert.ok(afterPass);
  const state = afterPass.sections.find((s) => s.section === "working_state");
  assert.ok(state && state.section === "working_state");
  assert.match(JSON.stringify(state.state), /Tests passed on r1, the current revision: you can finish/);
  assert.match(promptText(afterPass).slice(-END), /Tests passed on r1, the current revision: you can finish/);
});

test("a model that finishes when the request's end says the tests passed finishes at step 3 under bounded", async () => {
  const { result } = await endReadingRun("bounded");
  assert.equal(result.outcome, "completed");
  assert.equal(result.steps, 3);
  assert.equal(result.verified, true);
});

test("no finish line while the last test failed", async () => {
  const failed = await endReadingRun("bounded", [1, 1, 1, 1, 1, 1]);
  assert.equal(failed.result.outcome, "step_limit");
  for (const request of failed.provider.requests) assert.doesNotMatch(promptText(request), /you can finish/);
});

test("the finish line goes once an edit makes a new revision after the pass", () => {
  const sizeOf = () => 10;
  const digest = `sha256:${"a".repeat(64)}`;
  const passed = applyReport(initialBriefing("r1"), {
    kind: "test",
    revision: "r1",
    exit_code: 0,
    timed_out: false,
    duration_ms: 1,
    output: digest,
  }, { sizeOf, step: 2 });
  const all = { retained: () => true };
  assert.equal(viewBriefing(passed, all).next, finishableLine("r1"));
  const edited = applyReport(passed, { kind: "edit", paths: ["a.ts"], revision_before: "r1", revision_after: "r2" }, {
    sizeOf,
    step: 3,
  });
  assert.equal(viewBriefing(edited, all).next, undefined);
});
