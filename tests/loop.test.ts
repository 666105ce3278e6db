import { test } from "node:test";
import assert from "node:assert/strict";
import { applyReport, initialBriefing, viewBriefing } from "../lib/context/briefing.ts";
import type { LoopOptions } from "../lib/loop/loop.ts";
import { MAX_INVALID_STEPS } from "../lib/loop/limits.ts";
import { EXIT_CODES } from "../lib/outcome.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { ResultStore } from "../lib/context/store.ts";
import { utf8Length } from "../lib/text/digest.ts";
import {
  type Answer,
  answer,
  give,
  pick,
  runLoopReported,
  ScriptedExecutor,
  sliceRequest,
} from "./helpers/loop-builders.ts";
import type { SliceRequest } from "../lib/slice.ts";

async function loop(
  answers: Answer[],
  { outputs = [], testExit = [], request = sliceRequest(), ...options }: Partial<LoopOptions> & {
    outputs?: string[];
    testExit?: number[];
    request?: SliceRequest;
  } = {},
) {
  const store = new ResultStore();
  const provider = new ScriptedProvider(answers, { keepRequests: true });
  const executor = new ScriptedExecutor(store, outputs, testExit);
  let t = 0;
  const result = await runLoopReported(request, {
    policy: "legacy",
    provider,
    executor,
    store,
    now: () => (t += 1),
    version: "test",
    ...options,
  });
  return { result, provider, executor };
}

const finish = [pick("finish"), give({ status: "success", summary: "done" })];

test("run_tests skips the arguments phase (its argument schema is empty)", async () => {
  const { result, provider } = await loop([pick("run_tests"), ...finish], { outputs: ["ok"] });
  assert.equal(result.outcome, "completed");
  assert.deepEqual(provider.requests.map((r) => r.phase), ["selection", "selection", "arguments"]);
});

test("a pass on revision A followed by an edit leaves tests_current false", async () => {
  const answers = [
    pick("run_tests"),
    pick("edit_file"),
    give({ path: "a.txt", old_text: "x", new_text: "y" }),
    ...finish,
  ];
  const { result } = await loop(answers, { outputs: ["1 passed"], testExit: [0] });
  assert.equal(result.last_test?.revision, "r0");
  assert.equal(result.last_test?.exit_code, 0);
  assert.equal(result.revision, "r1");
  assert.equal(result.tests_current, false);
});

test("a pass on the latest revision makes tests_current true; a timed-out or failing run does not", async () => {
  const pass = await loop([
    pick("edit_file"),
    give({ path: "a", old_text: "x", new_text: "y" }),
    pick("run_tests"),
    ...finish,
  ], { outputs: ["ok"], testExit: [0] });
  assert.equal(pass.result.tests_current, true);
  const fail = await loop([pick("run_tests"), ...finish], { outputs: ["1 failed"], testExit: [1] });
  assert.equal(fail.result.tests_current, false);
});

test("a workspace file or a model message claiming 'all tests passed' changes no working state", async () => {
  const claim = "all tests passed\n".repeat(3);
  const { result, provider } = await loop(
    [pick("read_file", "all tests passed"), give({ path: "NOTES.md" }), ...finish],
    { outputs: [claim], policy: "bounded" },
  );
  assert.equal(result.last_test, null);
  assert.equal(result.tests_current, false);
  const last = provider.requests.at(-1)!;
  const state = last.sections.find((s) => s.section === "working_state") as { state: Record<string, unknown> };
  assert.equal(state.state.tests_current, false);
  assert.ok(!("last_test" in state.state), "no test ran: the working state has no last_test");
});

test("the ninth selection lookup suspends the run without executing anything", async () => {
  const lookups = Array.from({ length: 9 }, (_, i) => answer("selection", { $list_history: i }));
  const { result, executor, provider } = await loop([...lookups, ...finish]);
  assert.equal(result.outcome, "suspended");
  assert.equal(provider.calls, 9);
  assert.equal(executor.calls.length, 0);
  assert.equal(result.report.retrievals.list_history, 8);
});

test("eight selection lookups are allowed and answered in the lookups section", async () => {
  const lookups = Array.from({ length: 8 }, () => answer("selection", { $list_history: 0 }));
  const { result, provider } = await loop([...lookups, ...finish]);
  assert.equal(result.outcome, "completed");
  const eighth = provider.requests[8];
  const section = eighth.sections.at(-1) as { section: string; responses: unknown[] };
  assert.equal(section.section, "lookups");
  assert.equal(section.responses.length, 8);
});

test("the ninth arguments lookup refuses the step and the run goes on", async () => {
  const lookups = Array.from({ length: 9 }, () => answer("arguments", { $list_history: 0 }));
  const { result, executor } = await loop([pick("read_file"), ...lookups, ...finish]);
  assert.equal(result.outcome, "completed");
  assert.equal(result.reports[0].kind, "refusal");
  assert.equal((result.reports[0] as { code: string }).code, "lookup_limit");
  assert.deepEqual(executor.calls.map((c) => c.action), ["finish"]);
  assert.equal(result.report.refusals, 1);
});

test("lookups are counted per stage: eight in selection and eight in arguments of the same step are fine", async () => {
  const sel = Array.from({ length: 8 }, () => answer("selection", { $list_history: 0 }));
  const args = Array.from({ length: 8 }, () => answer("arguments", { $list_history: 0 }));
  const { result } = await loop([...sel, pick("read_file"), ...args, give({ path: "a" }), ...finish], {
    outputs: ["x"],
  });
  assert.equal(result.outcome, "completed");
  assert.equal(result.reports[0].kind, "read");
});

test("an invalid answer gets one re-ask with the validation error, then the step is refused", async () => {
  const once = await loop([answer("selection", { action: "fly" }), ...finish]);
  assert.equal(once.result.outcome, "completed");
  const reask = once.provider.requests[1].sections.at(-1) as { responses: { invalid_answer: string }[] };
  assert.match(reask.responses[0].invalid_answer, /action/);
  const twice = await loop([answer("selection", { action: "fly" }), answer("selection", "not json"), ...finish]);
  assert.equal(twice.result.reports[0].kind, "refusal");
  assert.equal((twice.result.reports[0] as { code: string }).code, "invalid_answer");
  assert.equal(twice.result.outcome, "completed");
});

test("three steps in a row without a valid answer end the run as invalid_answers (exit 7); a valid one resets the count", async () => {
  const invalidStep = [answer("selection", { action: "fly" }), answer("selection", "not json")];
  const never = await loop([...invalidStep, ...invalidStep, ...invalidStep, ...invalidStep, ...finish]);
  assert.equal(never.result.outcome, "invalid_answers");
  assert.equal(never.result.error?.code, "invalid_answers");
  assert.equal(never.result.steps, MAX_INVALID_STEPS);
  assert.equal(never.result.report.outcome, "invalid_answers");
  assert.equal(EXIT_CODES.invalid_answers, 7);
  const recovering = await loop([
    ...invalidStep,
    ...invalidStep,
    pick("print"),
    give({ text: "x" }),
    ...invalidStep,
    ...invalidStep,
    ...finish,
  ]);
  assert.equal(recovering.result.outcome, "completed");
});

test("$result lookups select whole, bytes, lines and JSON-pointer parts; unknown references get an error answer", async () => {
  const store = new ResultStore();
  const content = "line one\nline two\nline three\n";
  const digest = store.put(content).digest;
  const json = store.put('{"a":{"b":[10,20]}}').digest;
  const answers = [
    pick("read_file"),
    give({ path: "f" }),
    answer("selection", { $result: digest }),
    answer("selection", { $result: `${digest}#bytes=5-8` }),
    answer("selection", { $result: `${digest}#lines=2-3` }),
    answer("selection", { $result: `${json}#/a/b/1` }),
    answer("selection", { $result: `sha256:${"0".repeat(64)}` }),
    answer("selection", { $result: "nonsense" }),
    ...finish,
  ];
  const provider = new ScriptedProvider(answers, { keepRequests: true });
  const result = await runLoopReported(sliceRequest(), {
    policy: "bounded",
    provider,
    executor: new ScriptedExecutor(store, [content]),
    store,
    now: () => 0,
    version: "t",
  });
  const last = provider.requests[7]!.sections.at(-1) as { responses: Record<string, unknown>[] };
  const [whole, bytes, lines, pointer, unknown] = last.responses;
  assert.equal(whole!.content, content);
  assert.equal(bytes!.content, "one");
  assert.equal(lines!.content, "line two\nline three");
  assert.equal(pointer!.content, "20");
  assert.match(String(unknown!.error), /Unknown reference/);
  // A second failed lookup in the stage is its second invalid answer: the step is refused, not asked a third time.
  const refused = result.reports[1] as { kind: string; code: string; reason: string };
  assert.deepEqual([refused.kind, refused.code], ["refusal", "invalid_answer"]);
  assert.match(refused.reason, /Malformed reference/);
});

test("the archive cap stops model requests and ends with archive_capacity_exceeded", async () => {
  const steps = Array.from({ length: 10 }, () => [pick("run_tests")]).flat();
  const { result, provider } = await loop([...steps, ...finish], {
    outputs: Array(10).fill("ok"),
    archiveLimits: { maxEvents: 3 },
  });
  assert.equal(result.outcome, "archive_capacity_exceeded");
  assert.equal(result.error?.code, "archive_capacity_exceeded");
  // three events archived; with the archive full, the model is not asked for a fourth step
  assert.equal(provider.calls, 3);
  assert.equal(result.reports.length, 3);
  assert.equal(result.last_test?.exit_code, 0);
});

test("the archive byte cap counts serialized event data", async () => {
  const { result } = await loop([pick("run_tests"), pick("run_tests"), ...finish], {
    outputs: ["a", "b"],
    archiveLimits: { maxBytes: 250 },
  });
  assert.equal(result.outcome, "archive_capacity_exceeded");
  assert.ok(result.report.archive.bytes <= 250);
});

test("mandatory content over the ceiling fails explicitly under bounded, and legacy enforces no ceiling", async () => {
  const request = sliceRequest({ instructions: "x".repeat(70_000) });
  const bounded = await loop([...finish], { request, policy: "bounded" });
  assert.equal(bounded.result.outcome, "failed");
  assert.equal(bounded.result.error?.code, "context_ceiling_exceeded");
  assert.equal(bounded.provider.calls, 0);
  const legacy = await loop([...finish], { request, policy: "legacy" });
  assert.equal(legacy.result.outcome, "completed");
});

test("a lookup response that does not fit is omitted whole with an error entry saying its size and the room left", async () => {
  const big = "y".repeat(60_000);
  const store = new ResultStore();
  const digest = store.put(big).digest;
  const p = new ScriptedProvider([
    pick("read_file"),
    give({ path: "big" }),
    answer("selection", { $result: digest }),
    ...finish,
  ], { keepRequests: true });
  const r = await runLoopReported(sliceRequest(), {
    policy: "bounded",
    provider: p,
    executor: new ScriptedExecutor(store, [big]),
    store,
    now: () => 0,
    version: "t",
  });
  assert.equal(r.outcome, "completed");
  const req = p.requests[3];
  const entry = (req.sections.at(-1) as { responses: Record<string, string>[] }).responses[0];
  assert.equal(entry.content, undefined);
  assert.match(entry.error, /omitted whole: \d+ bytes do not fit .* \(\d+ bytes of room left\)/);
  assert.ok(utf8Length(JSON.stringify(req)) <= 65_536);
  assert.equal(r.report.retrievals.omitted, 1);
});

test("step limit ends the run with outcome step_limit", async () => {
  const { result } = await loop([pick("run_tests"), pick("run_tests")], {
    outputs: ["a", "b"],
    request: sliceRequest({ limits: { max_steps: 2 } }),
  });
  assert.equal(result.outcome, "step_limit");
  assert.equal(result.steps, 2);
});

test("a provider error fails the run with partial usage, and the report still has every call made", async () => {
  const store = new ResultStore();
  const provider = new ScriptedProvider([
    answer("selection", { action: "run_tests" }, { input: 10, cache_read: null, cache_write: 2, output: 3 }),
  ]);
  const result = await runLoopReported(sliceRequest(), {
    policy: "legacy",
    provider,
    executor: new ScriptedExecutor(store, ["ok"]),
    store,
    now: () => 0,
    version: "t",
  });
  assert.equal(result.outcome, "failed");
  assert.equal(result.error?.code, "replay_exhausted");
  assert.equal(result.report.final_usage, null);
  assert.deepEqual(result.report.partial_usage, { input: 10, cache_read: null, cache_write: 2, output: 3 });
  assert.equal(result.report.model_calls, 1);
});

test("report request bytes equal the UTF-8 length of each serialized TurnRequest", async () => {
  for (const policy of ["legacy", "bounded"] as const) {
    const { result, provider } = await loop(
      [pick("read_file", "é✓ 😀"), give({ path: "ü.txt" }), pick("run_tests"), ...finish],
      { outputs: ['naïve "quoted" \\ text\n\t😀'.repeat(50), "ok"], policy },
    );
    assert.equal(result.outcome, "completed");
    assert.deepEqual(
      result.report.calls.map((c) => c.request_bytes),
      provider.requests.map((r) => utf8Length(JSON.stringify(r))),
    );
  }
});

test("a printed text is kept once in its event: the arguments hold it, the report's reference is not repeated", async () => {
  const text = "p".repeat(2000);
  const { provider } = await loop([pick("print"), give({ text }), ...finish], { policy: "legacy" });
  const events =
    (provider.requests.at(-1)!.sections.find((s) => s.section === "events") as { events: Record<string, unknown>[] })
      .events;
  const serialized = JSON.stringify(events[0]);
  assert.equal(serialized.split(text).length - 1, 1);
});

test("a huge model answer (a lookup, an invalid lookup or an unknown key) never pushes a bounded request over the ceiling", async () => {
  const big = "x".repeat(100_000);
  for (
    const value of [{ $result: `sha256:${"a".repeat(64)}#/${big}` }, { $nope: big }, { action: "read_file", [big]: 1 }]
  ) {
    const { result, provider } = await loop([answer("selection", value), ...finish], { policy: "bounded" });
    assert.equal(result.outcome, "completed", result.error?.message);
    for (const r of provider.requests) assert.ok(utf8Length(JSON.stringify(r)) <= 65_536);
    assert.ok(utf8Length(JSON.stringify(provider.requests[1])) < 10_000, "the answer is not repeated in full");
  }
});

test("a refusal reason quoting a huge path stays small in the working state", async () => {
  const store = new ResultStore();
  const provider = new ScriptedProvider([pick("read_file"), give({ path: "p" }), ...finish], { keepRequests: true });
  const executor = {
    revision: "r0",
    execute: (action: string, _args: unknown, { step }: { step: number }) =>
      Promise.resolve(
        action === "finish" ? { kind: "finish" as const, status: "success" as const, summary: "s" } : {
          kind: "refusal" as const,
          step,
          code: "path_outside_workspace",
          reason: `Path "${"../".repeat(40_000)}" leaves the workspace`,
        },
      ),
  };
  const result = await runLoopReported(sliceRequest(), {
    policy: "bounded",
    provider,
    executor,
    store,
    now: () => 0,
    version: "t",
  });
  assert.equal(result.outcome, "completed", result.error?.message);
  const last = provider.requests.at(-1)!;
  const state = last.sections.find((s) => s.section === "working_state") as {
    state: { last_refusal: { step: number; code: string; reason?: string } };
  };
  // The refused step is still in the tail: its event shows the (clipped) reason, the working state names the step.
  assert.deepEqual(state.state.last_refusal, { step: 1, code: "path_outside_workspace" });
  const events = (last.sections.find((s) => s.section === "events") as { events: Record<string, any>[] }).events;
  assert.equal(events[0].step, 1);
  assert.ok(utf8Length(JSON.stringify(events[0])) < 4_000, "the event holds a preview of the reason, not all of it");
  // Once the step is retired, the working state carries the reason itself, clipped.
  const briefing = applyReport(initialBriefing(), {
    kind: "refusal",
    step: 1,
    code: "path_outside_workspace",
    reason: `Path "${"../".repeat(40_000)}" leaves the workspace`,
  }, { sizeOf: () => 0, step: 1 });
  const retired = viewBriefing(briefing, { retained: () => false }).last_refusal!;
  assert.ok(utf8Length(retired.reason!) <= 512);
  assert.match(retired.reason!, /…/);
});

test("the working state names the last test only by its step while the test's event is in the tail, and repeats what it showed once it is retired", () => {
  const briefing = applyReport(initialBriefing(), {
    kind: "test",
    revision: "r0",
    exit_code: 0,
    timed_out: false,
    duration_ms: 12,
    output: `sha256:${"b".repeat(64)}`,
  }, { sizeOf: () => 10, step: 4 });
  assert.deepEqual(viewBriefing(briefing, { retained: (s) => s >= 3 }).last_test, { step: 4 });
  assert.deepEqual(viewBriefing(briefing, { retained: (s) => s >= 5 }).last_test, {
    revision: "r0",
    exit_code: 0,
    timed_out: false,
    duration_ms: 12,
    output: `sha256:${"b".repeat(64)}`,
  });
  assert.equal(viewBriefing(briefing, { retained: () => true }).tests_current, true);
  // The test's output is its artifact: left out while the event shows it, named with digest and bytes once retired.
  assert.equal(viewBriefing(briefing, { retained: (s) => s >= 3 }).recent_artifacts, undefined);
  assert.deepEqual(viewBriefing(briefing, { retained: (s) => s >= 5 }).recent_artifacts, [
    { kind: "test", digest: `sha256:${"b".repeat(64)}`, bytes: 10 },
  ]);
});

test("a working state with nothing to say beyond the revision sends no null fields or empty lists", () => {
  assert.deepEqual(viewBriefing(initialBriefing("r3"), { retained: () => true }), {
    latest_revision: "r3",
    tests_current: false,
  });
});

test("the prefix's tasks say what to answer, which commands run_command may run and what run_tests runs; candidates name the phase; arguments keep the reason", async () => {
  const { provider } = await loop([pick("read_file", "look at the code"), give({ path: "a" }), ...finish], {
    outputs: ["x"],
  });
  const tasks = provider.requests[0].sections.find((s) => s.section === "tasks") as Record<string, any>;
  assert.match(tasks.selection, /"action": NAME/);
  assert.match(tasks.lookups, /\$list_history/);
  assert.match(tasks.arguments, /arguments/);
  assert.deepEqual(tasks.actions.find((a: any) => a.name === "run_command").allowed, [["bash", "-c"]]);
  assert.deepEqual(tasks.actions.find((a: any) => a.name === "run_tests").command, ["node", "test.mjs"]);
  // The same tasks on every call of both phases, in the prefix (before any event).
  for (const request of provider.requests) {
    const names = request.sections.map((s) => s.section);
    assert.deepEqual(names.slice(0, 3), ["instructions", "intent", "tasks"]);
    assert.deepEqual(request.sections[2], tasks);
  }
  const selection = provider.requests[0].sections.find((s) => s.section === "candidates") as Record<string, any>;
  assert.match(selection.task, /Selection/);
  const args = provider.requests[1].sections.find((s) => s.section === "candidates") as Record<string, any>;
  assert.equal(args.action, "read_file");
  assert.equal(args.reason, "look at the code");
  assert.match(args.task, /Arguments/);
});

test("the newest event's view continues its cut output: preview and view show 8 KiB, no byte twice, and name the rest", async () => {
  const big = `${"h".repeat(5000)}MIDDLE${"m".repeat(10_000)}END${"t".repeat(5000)}`;
  const { provider } = await loop([pick("read_file"), give({ path: "big" }), ...finish], {
    outputs: [big],
    policy: "bounded",
  });
  const newest = provider.requests[2].sections.find((s) => s.section === "newest") as {
    step: number;
    view: Record<string, any>;
  };
  const events = provider.requests[2].sections.find((s) => s.section === "events") as { events: any[] };
  assert.equal(newest.step, 1);
  const preview = events.events[0].result;
  const more = newest.view.result;
  assert.equal(more.ref, preview.ref);
  assert.deepEqual([more.from, more.to], [preview.head.length, big.length - preview.tail.length]);
  assert.equal(preview.head.length + more.head.length + more.tail.length + preview.tail.length, 8192);
  const [, start, end] = /#bytes=(\d+)-(\d+)$/.exec(more.rest)!.map(Number);
  assert.equal(preview.head + more.head + big.slice(start, end) + more.tail + preview.tail, big);
});

test("requests show short references, and lookups take them back with their selections", async () => {
  const big = `${"h".repeat(5000)}MIDDLE${"m".repeat(10_000)}END${"t".repeat(5000)}`;
  const store = new ResultStore();
  const digest = store.put(big).digest;
  const short = `sha256:${digest.slice(7, 19)}`;
  const answers = [
    pick("read_file"),
    give({ path: "big" }),
    answer("selection", { $result: `${short}#bytes=5000-5006` }),
    ...finish,
  ];
  const provider = new ScriptedProvider(answers, { keepRequests: true });
  await runLoopReported(sliceRequest(), {
    policy: "bounded",
    provider,
    executor: new ScriptedExecutor(store, [big]),
    store,
    now: () => 0,
    version: "t",
  });
  const events = provider.requests[2].sections.find((s) => s.section === "events") as { events: any[] };
  const newest = provider.requests[2].sections.find((s) => s.section === "newest") as { view: Record<string, any> };
  assert.equal(events.events[0].result.ref, short);
  assert.ok(newest.view.result.rest.startsWith(`${short}#bytes=`));
  assert.ok(!JSON.stringify(provider.requests[2]).includes(digest), "the whole digest is never shown");
  const lookups = provider.requests[3].sections.at(-1) as { responses: Record<string, unknown>[] };
  assert.equal(lookups.responses[0].content, "MIDDLE");
});

test("the newest event's view shows the rest of an output whole when it fits 8 KiB; a small output is inline text", async () => {
  const medium = `${"a".repeat(3000)}MIDDLE${"z".repeat(3000)}`;
  const { provider } = await loop([
    pick("read_file"),
    give({ path: "m" }),
    pick("read_file"),
    give({ path: "s" }),
    ...finish,
  ], {
    outputs: [medium, "small output"],
    policy: "bounded",
  });
  const at = (i: number, name: string) => provider.requests[i].sections.find((s) => s.section === name) as any;
  const preview = at(2, "events").events[0].result;
  const more = at(2, "newest").view.result;
  assert.equal(preview.head + more.text + preview.tail, medium);
  assert.equal(more.rest, undefined);
  // Two steps on: the small output is shown as legacy shows it, and the medium one keeps its preview unchanged.
  const later = at(4, "events").events;
  assert.equal(later[1].result, "small output");
  assert.deepEqual(later[0].result, preview);
  assert.equal(at(4, "newest"), undefined);
});
