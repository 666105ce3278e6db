// The step protocols: two-call (selection, then arguments) and single-call (the action with its arguments in one
// answer). Same executions and outcomes from the same decisions; lookups, re-asks and refusals as SPEC §1 says.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ContextReport } from "../lib/report/context-report.ts";
import { runWithOptions } from "../api.ts";
import { loadCatalog } from "../lib/catalog/catalog.ts";
import { planCatalogRun } from "../lib/catalog/plan.ts";
import { resolveSettings, type SettingsPlan } from "../lib/settings/settings.ts";
import { type ActionName, takesArguments } from "../lib/vocabulary/actions.ts";
import { LOOKUPS_PER_STAGE, parseStepDecision, stepResponseSchema } from "../lib/vocabulary/answer.ts";
import { canonicalJson } from "../lib/text/digest.ts";
import type { ContextPolicyName, StepProtocol } from "../lib/policy.ts";
import { convertToStrictJsonSchema } from "../lib/providers/openai/convert-to-strict-json-schema.ts";
import { wrapResponseSchema } from "../lib/providers/wrap-response-schema.ts";
import type { RecordedAnswer } from "../lib/recording/recording.ts";
import type { ExecutionReport } from "../lib/vocabulary/reports.ts";
import { convertAnswers, convertRecording, recordingProtocol, ScriptedProvider } from "../lib/recording/replay.ts";
import { parseRecording } from "../lib/recording/recording.ts";
import { availableActions } from "../lib/slice.ts";
import { ResultStore } from "../lib/context/store.ts";
import { NULL_USAGE, type Phase } from "../lib/vocabulary/turn.ts";
import { runLoopReported, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";

type Answer = Pick<RecordedAnswer, "phase" | "step" | "value" | "usage">;

const at = (step: number, phase: Phase, value: unknown): Answer => ({ phase, step, value, usage: NULL_USAGE });
const ACTIONS = availableActions(sliceRequest());
const ARGS: Partial<Record<ActionName, Record<string, unknown>>> = {
  read_file: { path: "src/a.ts" },
  edit_file: { path: "src/a.ts", old_text: "a", new_text: "b" },
  print: { text: "hello" },
  finish: { status: "success", summary: "done" },
};

async function run(
  answers: readonly Answer[],
  { protocol, policy = "bounded" }: { protocol: StepProtocol; policy?: ContextPolicyName },
) {
  const store = new ResultStore();
  const provider = new ScriptedProvider(answers, { keepRequests: true });
  const executor = new ScriptedExecutor(store, Array.from({ length: 64 }, (_, i) => `output ${i}\n`.repeat(40)));
  let t = 0;
  const result = await runLoopReported(sliceRequest({ step_protocol: protocol }), {
    policy,
    provider,
    executor,
    store,
    now: () => (t += 1),
    version: "test",
  });
  return { result, provider, executor };
}

/** Reports compared across protocols: a refusal's reason quotes the phase and the field path, so it is left out. */
const comparable = (reports: ExecutionReport[]) =>
  canonicalJson(reports.map((r) => (r.kind === "refusal" ? { kind: r.kind, step: r.step, code: r.code } : r)));

type StepScript = {
  action: ActionName;
  badSelection: boolean;
  selectionLookups: number;
  argumentLookups: number;
  badArguments: number;
};

const stepArb: fc.Arbitrary<StepScript> = fc.record({
  action: fc.constantFrom<ActionName>("read_file", "run_tests", "edit_file", "print"),
  badSelection: fc.boolean(),
  selectionLookups: fc.integer({ min: 0, max: 4 }),
  argumentLookups: fc.integer({ min: 0, max: 4 }),
  badArguments: fc.integer({ min: 0, max: 2 }),
});

/** A two-call recording's answers for these steps, then finish. */
function twoCallAnswers(steps: readonly StepScript[]): Answer[] {
  const answers: Answer[] = [];
  steps.forEach((s, i) => {
    const step = i + 1;
    if (s.badSelection) answers.push(at(step, "selection", "I think I should read the file"));
    for (let k = 0; k < s.selectionLookups; k++) answers.push(at(step, "selection", { $list_history: 0 }));
    answers.push(at(step, "selection", { action: s.action, reason: `step ${step}` }));
    if (!takesArguments(s.action)) return;
    for (let k = 0; k < s.argumentLookups; k++) answers.push(at(step, "arguments", { $list_history: 0 }));
    for (let k = 0; k < s.badArguments; k++) answers.push(at(step, "arguments", {}));
    if (s.badArguments < 2) answers.push(at(step, "arguments", ARGS[s.action]));
  });
  const last = steps.length + 1;
  answers.push(at(last, "selection", { action: "finish" }), at(last, "arguments", ARGS.finish));
  return answers;
}

test("a two-call recording replays under single-call with the same executions and outcome, and back", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(stepArb, { maxLength: 8 }),
      fc.constantFrom<ContextPolicyName>("legacy", "bounded"),
      async (
        steps,
        policy,
      ) => {
        const two = twoCallAnswers(steps);
        const one = convertAnswers(two, { from: "two-call", to: "single-call", actions: ACTIONS });
        const a = await run(two, { protocol: "two-call", policy });
        const b = await run(one, { protocol: "single-call", policy });
        assert.equal(b.result.outcome, a.result.outcome);
        assert.equal(comparable(b.result.reports), comparable(a.result.reports));
        assert.equal(b.result.report.refusals, a.result.report.refusals);
        assert.equal(b.result.report.step_protocol, "single-call");
        // One call per step, plus its lookups and re-asks: every answer of the converted script is used.
        if (b.result.outcome === "completed") assert.equal(b.provider.calls, one.length);
        assert.ok(b.provider.requests.every((r) => r.phase === "selection"));
        // Lookups are counted against the selection stage, never lost.
        assert.equal(b.result.report.retrievals.list_history, a.result.report.retrievals.list_history);
        // Splitting the single-call answers gives back the two-call decisions answer for answer (lookups now all
        // come before the step's decision), and the same run.
        const back = convertAnswers(one, { from: "single-call", to: "two-call", actions: ACTIONS });
        const decisions = (answers: Answer[]) =>
          answers.filter((x) => !(typeof x.value === "object" && x.value !== null && "$list_history" in x.value))
            .map((x) => [x.phase, x.step, x.value]);
        assert.deepEqual(decisions(back), decisions(two));
        assert.equal(back.length, two.length);
        const c = await run(back, { protocol: "two-call", policy });
        assert.equal(c.result.outcome, a.result.outcome);
        assert.equal(canonicalJson(c.result.reports), canonicalJson(a.result.reports));
      },
    ),
    { numRuns: 60 },
  );
});

test("single-call: a step's lookups count against the selection stage; the ninth suspends, the eighth does not", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 12 }), async (lookups) => {
      const answers = [
        ...Array.from({ length: lookups }, () => at(1, "selection", { $list_history: 0 })),
        at(1, "selection", { action: "read_file", args: ARGS.read_file }),
        at(2, "selection", { action: "finish", args: ARGS.finish }),
      ];
      const { result, executor, provider } = await run(answers, { protocol: "single-call" });
      if (lookups > LOOKUPS_PER_STAGE) {
        assert.equal(result.outcome, "suspended");
        assert.equal(executor.calls.length, 0);
        assert.equal(provider.calls, LOOKUPS_PER_STAGE + 1);
        assert.equal(result.report.retrievals.list_history, LOOKUPS_PER_STAGE);
      } else {
        assert.equal(result.outcome, "completed");
        assert.deepEqual(executor.calls.map((c) => c.action), ["read_file", "finish"]);
        assert.equal(result.report.retrievals.list_history, lookups);
        // The lookups used ride on the candidates of each call, counting up.
        const used = provider.requests.slice(0, lookups + 1).map((r) =>
          (r.sections.find((s) => s.section === "candidates") as { lookups_used: number }).lookups_used
        );
        assert.deepEqual(used, Array.from({ length: lookups + 1 }, (_, i) => i));
      }
    }),
    { numRuns: 30 },
  );
});

test("single-call: an invalid answer is re-asked once; a second one refuses the step and the run goes on", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 6 }),
      async (invalidPerStep) => {
        const answers: Answer[] = [];
        invalidPerStep.forEach((invalid, i) => {
          // Wrong arguments for the action named (read_file needs a path), as an arguments answer would be wrong.
          for (let k = 0; k < invalid; k++) answers.push(at(i + 1, "selection", { action: "read_file", args: {} }));
          if (invalid < 2) answers.push(at(i + 1, "selection", { action: "read_file", args: ARGS.read_file }));
        });
        answers.push(at(invalidPerStep.length + 1, "selection", { action: "finish", args: ARGS.finish }));
        const { result, executor, provider } = await run(answers, { protocol: "single-call" });
        const refusedSteps = invalidPerStep.flatMap((n, i) => (n === 2 ? [i + 1] : []));
        const runOfThree = invalidPerStep.some((_, i) =>
          invalidPerStep.slice(i, i + 3).filter((n) => n === 2).length === 3
        );
        if (runOfThree) {
          assert.equal(result.outcome, "invalid_answers");
          return;
        }
        assert.equal(result.outcome, "completed");
        assert.equal(result.report.refusals, refusedSteps.length);
        const refusals = result.reports.filter((r) => r.kind === "refusal");
        assert.deepEqual(
          refusals.map((r) => r.kind === "refusal" && [r.step, r.code]),
          refusedSteps.map((s) => [s, "invalid_answer"]),
        );
        assert.equal(executor.calls.length, invalidPerStep.length - refusedSteps.length + 1);
        assert.equal(provider.calls, answers.length);
        // The re-ask says what was wrong, in the lookups section of the next call.
        if (invalidPerStep[0] >= 1) {
          const second = provider.requests[1].sections.find((s) => s.section === "lookups");
          assert.match(JSON.stringify(second), /did not match the response schema.*args/);
        }
      },
    ),
    { numRuns: 40 },
  );
});

test("single-call answers: args may be left out only for an action without arguments; unknown keys are refused", () => {
  const parse = (value: unknown) => parseStepDecision(ACTIONS, value, { formatError: (e) => e.message });
  assert.deepEqual(parse({ action: "run_tests" }), { ok: true, value: { action: "run_tests", args: {} } });
  assert.deepEqual(parse({ action: "run_tests", reason: "check", args: {} }), {
    ok: true,
    value: { action: "run_tests", reason: "check", args: {} },
  });
  assert.equal(parse({ action: "read_file" }).ok, false);
  assert.equal(parse({ action: "read_file", args: { path: "a", extra: 1 } }).ok, false);
  assert.equal(parse({ action: "run_tests", args: { x: 1 } }).ok, false);
  assert.equal(parse({ action: "delete_everything", args: {} }).ok, false);
  assert.equal(parse("read the file").ok, false);
});

test("the single-call response schema is strict-compatible for OpenAI and names every action with its arguments", () => {
  const { json } = stepResponseSchema(ACTIONS);
  const { schema, strict } = convertToStrictJsonSchema(wrapResponseSchema(json));
  assert.equal(strict, true);
  const text = JSON.stringify(schema);
  for (const action of ACTIONS) assert.ok(text.includes(`"enum":["${action}"]`), action);
  for (const key of ["$result", "$list_history", "$read_history", "old_text", "argv"]) {
    assert.ok(text.includes(key), key);
  }
});

test("the working state keeps its bytes across a step's calls; the counters move on the candidates", async () => {
  const two = [
    at(1, "selection", { $list_history: 0 }),
    at(1, "selection", { action: "read_file" }),
    at(1, "arguments", { $list_history: 0 }),
    at(1, "arguments", ARGS.read_file),
    at(2, "selection", { action: "finish" }),
    at(2, "arguments", ARGS.finish),
  ];
  for (const protocol of ["two-call", "single-call"] as const) {
    const answers = protocol === "two-call"
      ? two
      : convertAnswers(two, { from: "two-call", to: protocol, actions: ACTIONS });
    const { provider } = await run(answers, { protocol });
    const states = provider.requests.map((r) => JSON.stringify(r.sections.find((s) => s.section === "working_state")));
    const stepOne = provider.requests.length - (protocol === "two-call" ? 2 : 1);
    assert.equal(new Set(states.slice(0, stepOne)).size, 1, protocol);
    const counters = provider.requests.map((r) => {
      const c = r.sections.find((s) => s.section === "candidates") as Record<string, unknown>;
      return [c.step, c.lookups_used];
    });
    assert.deepEqual(
      counters,
      protocol === "two-call" ? [[1, 0], [1, 1], [1, 0], [1, 1], [2, 0], [2, 0]] : [[1, 0], [1, 1], [1, 2], [2, 0]],
    );
  }
});

test("loom replay --step-protocol: a two-call recording replays in one call per step and back, same outcome; --record keeps the protocol", () => {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const loom = join(root, "dist", "loom");
  assert.ok(existsSync(loom), "dist/loom is missing: run `bash compile.sh` (scripts/test.sh builds it)");
  const dir = mkdtempSync(join(tmpdir(), "loom-steps-"));
  try {
    const replay = (file: string, ...args: string[]) => {
      const report = join(dir, `report-${args.join("-") || "default"}.json`);
      const r = spawnSync(loom, ["replay", file, "--quiet", "--json", "--context-report", report, ...args], {
        encoding: "utf8",
      });
      return {
        code: r.status,
        stderr: r.stderr,
        report: ContextReport.parse(JSON.parse(readFileSync(report, "utf8"))),
      };
    };
    for (const name of ["fix-bug.jsonl", "escape-and-suspend.jsonl"]) {
      const file = join(root, "testdata/workflows", name);
      const two = replay(file, "--context-policy", "bounded");
      const one = replay(file, "--context-policy", "bounded", "--step-protocol", "single-call");
      assert.equal(one.code, two.code, name);
      assert.equal(one.report.outcome, two.report.outcome, name);
      assert.equal(two.report.step_protocol, "two-call");
      assert.equal(one.report.step_protocol, "single-call");
      assert.equal(one.report.phases.arguments.requests, 0);
      assert.ok(one.report.model_calls < two.report.model_calls, `${name}: fewer round trips`);
      assert.equal(one.report.refusals, two.report.refusals);
    }
    const bad = spawnSync(loom, ["replay", join(root, "testdata/workflows/fix-bug.jsonl"), "--step-protocol", "one"], {
      encoding: "utf8",
    });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--step-protocol "one": expected two-call or single-call/);
    const badPreviews = spawnSync(loom, [
      "replay",
      join(root, "testdata/workflows/fix-bug.jsonl"),
      "--previews",
      "huge",
    ], {
      encoding: "utf8",
    });
    assert.equal(badPreviews.status, 2);
    assert.match(badPreviews.stderr, /--previews "huge": expected one of compact, balanced, wide/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a catalog slice's step_protocol and previews reach the request; the defaults fill in; a bad value names its field", async () => {
  const catalogText = (slice: Record<string, unknown>, defaults: Record<string, unknown> = {}) =>
    JSON.stringify({
      models: { m: { kind: "openai-compatible", model: "local" } },
      defaults: { workspace: ".", ...defaults },
      slices: {
        fix: {
          description: "Fix it",
          intent: "{{request}}",
          instructions: "Work.",
          actions: ["read_file"],
          test: { command: ["true"], timeout_ms: 1000 },
          model: "m",
          limits: { max_steps: 3 },
          ...slice,
        },
      },
    });
  const plan = (text: string) =>
    planCatalogRun({ catalog: loadCatalog(text, { file: "c.json" }), file: "/tmp/c.json", text: "go", slice: "fix" }, {
      settings: userPlan(),
      known: { policy: "legacy", reportPath: undefined, slice: null, route: null, calls: [] },
      provider: () => new ScriptedProvider([]),
      now: () => 0,
      reportPathProblem: () => null,
    });
  // The catalog's settings are resolved with the rest (lib/settings/settings.ts): the slice's own, else the defaults'.
  const own = await plan(
    catalogText({ step_protocol: "single-call", previews: "wide" }, { step_protocol: "two-call" }),
  );
  assert.ok(own.ok);
  assert.deepEqual(own.settings.step_protocol, {
    value: "single-call",
    source: "catalog",
    from: "/tmp/c.json: slices.fix.step_protocol",
  });
  assert.equal(own.settings.previews.value, "wide");
  const inherited = await plan(catalogText({}, { step_protocol: "single-call", previews: "compact" }));
  assert.ok(inherited.ok);
  assert.equal(inherited.settings.step_protocol.value, "single-call");
  assert.equal(inherited.settings.previews.from, "/tmp/c.json: defaults.previews");
  const none = await plan(catalogText({}));
  assert.ok(none.ok);
  assert.equal(none.settings.step_protocol.source, "default");
  assert.throws(
    () => loadCatalog(catalogText({ step_protocol: "three-call" }), { file: "c.json" }),
    /slices\.fix\.step_protocol/,
  );
});

test("runWithOptions: stepProtocol single-call runs one call per step in a real workspace; the request's own setting works too", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-steps-lib-"));
  try {
    const request = sliceRequest({ workspace: dir, actions: ["print"] });
    const answers = [
      at(1, "selection", { action: "print", args: { text: "hello" } }),
      at(2, "selection", { action: "finish", reason: "done", args: ARGS.finish }),
    ];
    const viaOption = await runWithOptions(request, {
      stepProtocol: "single-call",
      provider: new ScriptedProvider(answers),
    });
    const viaRequest = await runWithOptions({ ...request, step_protocol: "single-call" }, {
      provider: new ScriptedProvider(answers),
    });
    for (const result of [viaOption, viaRequest]) {
      assert.equal(result.outcome, "completed");
      assert.deepEqual(result.printed, ["hello"]);
      assert.equal(result.report.model_calls, 2);
      assert.equal(result.report.step_protocol, "single-call");
    }
    // A single-call run's recording says so in its slice, and replays under either protocol to the same end.
    const record = join(dir, "run.jsonl");
    await runWithOptions(request, { stepProtocol: "single-call", provider: new ScriptedProvider(answers), record });
    const recording = parseRecording(readFileSync(record, "utf8"));
    assert.equal(recording.header.slice.step_protocol, "single-call");
    assert.equal(recordingProtocol(recording), "single-call");
    for (const protocol of ["single-call", "two-call"] as const) {
      const converted = convertRecording(recording, protocol);
      const replayed = await run(converted.answers, { protocol });
      assert.equal(replayed.result.outcome, "completed");
      assert.deepEqual(replayed.executor.calls.map((c) => c.action), ["print", "finish"]);
      assert.equal(replayed.result.report.model_calls, protocol === "two-call" ? 4 : 2);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The user's settings resolved from an empty environment: what a catalog's are layered onto. */
function userPlan(): SettingsPlan {
  const resolved = resolveSettings({ env: {} });
  if (!resolved.ok) throw new Error(resolved.message);
  return resolved.plan;
}
