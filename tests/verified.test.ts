// A verified finish (SPEC §6): every result, report and run-ended event says whether the final revision's tests ran
// and passed; with require_passing_tests a finish with status success on an unverified revision is refused
// (tests_not_current) and a run that completes unverified exits 1 (any other ending keeps its exit code). The model's status is its own claim; verified is Loom's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { startRun } from "../lib/run/start-run.ts";
import type { PlanOptions } from "../lib/run/run-plan.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { applyReport, initialBriefing, settleRevision, unverifiedReason } from "../lib/context/briefing.ts";
import { ResultStore } from "../lib/context/store.ts";
import { digestOf } from "../lib/text/digest.ts";
import { runLoop } from "../lib/loop/loop.ts";
import type { ExecutionReport } from "../lib/vocabulary/reports.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import type { RunEvent } from "../lib/run-events.ts";
import { main } from "../main.ts";
import { Reporter } from "../commands/reporter.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { type Answer, answer, give, pick, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";
import { runWithOptions } from "../api.ts";
import process from "node:process";
import { endingOf } from "../lib/ending.ts";
import { EXIT_CODES, Outcome } from "../lib/outcome.ts";

const finish = (status: "success" | "failure") => [pick("finish"), give({ status, summary: `finished: ${status}` })];

async function run(
  answers: Answer[],
  { testExit = [], ...options }: { testExit?: number[] } & PlanOptions = {},
) {
  const events: RunEvent[] = [];
  let provider: ScriptedProvider | undefined;
  const result = await startRun({ request: sliceRequest() }, libraryPlan(options), {
    provider: provider = new ScriptedProvider(answers),
    executor: (store) => new ScriptedExecutor(store, [], testExit),
    onEvent: (event) => events.push(event),
  });
  const ended = events.find((e) => e.type === "run-ended");
  return { result, events, ended, provider: provider! };
}

function text(result: Awaited<ReturnType<typeof startRun>>, format: "text" | "json" = "text") {
  const { io, out } = fakeIo({ cwd: tmpdir() });
  new Reporter(io, { command: "run", format }).run(result, { label: "run" });
  return out;
}

test("a finish with status success after a failed test completes (exit 0) but says NOT verified everywhere", async () => {
  const { result, ended } = await run([pick("run_tests"), ...finish("success")], { testExit: [1] });
  assert.equal(result.outcome, "completed");
  assert.equal(result.finish?.status, "success");
  assert.equal(result.exit_code, 0, "without require_passing_tests the status stays the model's claim");
  assert.equal(result.verified, false);
  assert.equal(result.report.verified, false);
  assert.ok(ended?.type === "run-ended" && ended.verified === false);
  const json = JSON.parse(text(result, "json").stdout);
  assert.equal(json.verified, false);
  assert.equal(json.status, "success");
  assert.match(
    text(result).stdout,
    /^run: completed \(success\) after 2 steps, revision r0, NOT verified: last test failed on r0 \(exit code 1\)$/m,
  );
});

test("a passing test on the final revision is verified, in the result, the report, run-ended and the text line", async () => {
  const { result, ended } = await run([pick("run_tests"), ...finish("success")], {
    testExit: [0],
    requirePassingTests: true,
  });
  assert.equal(result.exit_code, 0);
  assert.equal(result.verified, true);
  assert.equal(result.report.verified, true);
  assert.ok(ended?.type === "run-ended" && ended.verified);
  assert.match(text(result).stdout, /^run: completed \(success\) after 2 steps, revision r0, verified$/m);
});

test("require_passing_tests refuses an unverified finish success with tests_not_current; ending unverified exits 1", async () => {
  const { result, events } = await run([pick("run_tests"), ...finish("success"), ...finish("failure")], {
    testExit: [1],
    requirePassingTests: true,
  });
  const refused = result.reports[1];
  assert.equal(refused.kind, "refusal");
  assert.ok(refused.kind === "refusal");
  assert.equal(refused.code, "tests_not_current");
  // The model is told the last test's revision and exit code.
  assert.match(refused.reason, /last test failed on r0 \(exit code 1\)/);
  const step2 = events.find((e) => e.type === "step-executed" && e.step === 2);
  assert.ok(step2?.type === "step-executed" && step2.refusal === "tests_not_current" && !step2.executed);
  assert.equal(result.outcome, "completed");
  assert.equal(result.finish?.status, "failure");
  assert.equal(result.exit_code, 1);
  assert.equal(result.error?.code, "unverified");
  assert.equal(result.report.outcome, "completed");
});

test("a pass on r0 does not vouch for r1: the finish is refused and the model is told which revision was tested", async () => {
  const { result } = await run(
    [
      pick("run_tests"),
      pick("write_file"),
      give({ path: "a.txt", content: "x" }),
      ...finish("success"),
      ...finish("failure"),
    ],
    { testExit: [0], requirePassingTests: true },
  );
  const refused = result.reports[2];
  assert.ok(refused.kind === "refusal" && refused.code === "tests_not_current");
  assert.match(refused.reason, /last test ran on r0, the workspace is now r1/);
  assert.equal(result.exit_code, 1);
  assert.equal(result.verified, false);
});

test("a request's require_passing_tests does the same as the flag; a run that never tested is not verified", async () => {
  const events: RunEvent[] = [];
  const result = await startRun({ request: sliceRequest({ require_passing_tests: true }) }, libraryPlan(), {
    provider: new ScriptedProvider([...finish("success"), ...finish("failure")]),
    executor: (store) => new ScriptedExecutor(store),
    onEvent: (event) => events.push(event),
  });
  const refused = result.reports[0];
  assert.ok(refused.kind === "refusal" && refused.code === "tests_not_current");
  assert.match(refused.reason, /no test ran/);
  assert.equal(result.exit_code, 1);
});

test("a change after the last step (a leftover writer) leaves the run unverified: decided by the briefing's rule", async () => {
  const store = new ResultStore();
  const result = await runLoop(sliceRequest(), {
    policy: "legacy",
    provider: new ScriptedProvider([pick("run_tests"), ...finish("success")]),
    executor: new ScriptedExecutor(store, [], [0]),
    store,
    now: () => 0,
    settle: () => "r7",
  });
  assert.equal(result.revision, "r7");
  assert.equal(result.tests_current, false);
  assert.equal(result.verified, false);
});

test("verified is exactly: the last test ran on the latest revision, exited 0 and did not time out (property)", () => {
  const report = fc.oneof(
    fc.record({ exit: fc.integer({ min: 0, max: 2 }), timedOut: fc.boolean(), changes: fc.boolean() }).map((t) => ({
      kind: "test" as const,
      ...t,
    })),
    fc.constant({ kind: "edit" as const }),
    fc.constant({ kind: "settle" as const }),
  );
  fc.assert(fc.property(fc.array(report, { maxLength: 12 }), (steps) => {
    let briefing = initialBriefing();
    let revision = 0;
    let last: { revision: number; passed: boolean } | null = null;
    steps.forEach((s, i) => {
      if (s.kind === "settle") {
        revision += 1;
        briefing = settleRevision(briefing, `r${revision}`);
        return;
      }
      let r: ExecutionReport;
      if (s.kind === "edit") {
        r = { kind: "edit", paths: ["a"], revision_before: `r${revision}`, revision_after: `r${revision + 1}` };
        revision += 1;
      } else {
        r = {
          kind: "test",
          revision: `r${revision}`,
          exit_code: s.exit,
          timed_out: s.timedOut,
          duration_ms: 1,
          output: `sha256:${"0".repeat(64)}`,
          ...(s.changes ? { revision_after: `r${revision + 1}` } : {}),
        };
        last = { revision, passed: s.exit === 0 && !s.timedOut };
        if (s.changes) revision += 1;
      }
      briefing = applyReport(briefing, r, { sizeOf: () => 0, step: i + 1 });
    });
    const expected = last !== null && (last as { revision: number }).revision === revision &&
      (last as { passed: boolean }).passed;
    assert.equal(briefing.tests_current, expected);
    assert.equal(unverifiedReason(briefing) === null, expected);
  }));
});

test("loom replay --require-passing-tests: exit 1, the text line says NOT verified in words; schema events describes verified", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-verified-"));
  try {
    const header = {
      type: "header",
      format: "loom-recording",
      version: 1,
      slice: { ...sliceRequest(), workspace: "." },
    };
    const none = { input: null, cache_read: null, cache_write: null, output: null };
    const out = digestOf("1 test failed\n");
    const lines = [
      header,
      { type: "answer", phase: "selection", step: 1, value: { action: "run_tests" }, usage: none },
      {
        type: "execution",
        step: 1,
        action: "run_tests",
        args: {},
        report: { kind: "test", revision: "r0", exit_code: 1, timed_out: false, duration_ms: 5, output: out },
        results: { [out]: "1 test failed\n" },
      },
      { type: "answer", phase: "selection", step: 2, value: { action: "finish" }, usage: none },
      { type: "answer", phase: "arguments", step: 2, value: { status: "success", summary: "done" }, usage: none },
      { type: "answer", phase: "selection", step: 3, value: { action: "finish" }, usage: none },
      { type: "answer", phase: "arguments", step: 3, value: { status: "failure", summary: "no" }, usage: none },
      {
        type: "execution",
        step: 3,
        action: "finish",
        args: { status: "failure", summary: "no" },
        report: { kind: "finish", status: "failure", summary: "no" },
        results: {},
      },
    ];
    writeFileSync(join(dir, "r.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const { io, out: printed } = fakeIo({ cwd: dir });
    const code = await main(["replay", "r.jsonl", "--quiet", "--require-passing-tests"], io);
    assert.equal(code, 1, printed.stderr);
    assert.match(
      printed.stdout,
      /completed \(failure\) after 3 steps, revision r0, NOT verified: last test failed on r0/,
    );
    assert.match(
      printed.stderr,
      /NOT verified \(passing tests were required\): last test failed on r0 \(exit code 1\)/,
    );
    const schema = fakeIo({ cwd: dir });
    assert.equal(await main(["schema", "events"], schema.io), 0);
    assert.match(schema.out.stdout, /"verified"/);
    assert.match(schema.out.stdout, /tests_current/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the library's runWithOptions takes requirePassingTests and maxCost as the command line does", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-verified-api-"));
  try {
    const request = sliceRequest({
      workspace: dir,
      test: { command: [process.execPath, "-e", "process.exit(1)"], timeout_ms: 30_000 },
    });
    const result = await runWithOptions(request, {
      provider: new ScriptedProvider([pick("run_tests"), ...finish("success"), ...finish("failure")]),
      sandbox: "off",
      warn: () => {},
      requirePassingTests: true,
    });
    assert.equal(result.reports[1].kind, "refusal");
    assert.equal(result.exit_code, 1);
    assert.equal(result.verified, false);
    const capped = await runWithOptions({ ...request, model: "anthropic/claude-sonnet-4-5" }, {
      provider: new ScriptedProvider([
        answer("selection", { action: "finish" }, { input: 1_000_000, cache_read: 0, cache_write: 0, output: 0 }),
      ]),
      sandbox: "off",
      warn: () => {},
      maxCost: 0.5,
    });
    assert.equal(capped.outcome, "cost_limit");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("--require-passing-tests at the step limit exits 6, as its help says: only a completed run turns exit 1", async () => {
  const request = sliceRequest({ limits: { max_steps: 2 } });
  const result = await startRun({ request }, libraryPlan({ requirePassingTests: true }), {
    provider: new ScriptedProvider([pick("run_tests"), pick("run_tests")]),
    executor: (store) => new ScriptedExecutor(store, [], [1, 1]),
  });
  assert.equal(result.outcome, "step_limit");
  assert.equal(result.verified, false);
  assert.equal(result.exit_code, EXIT_CODES.step_limit);
  // Every ending but completed keeps its own exit code when unverified; a completed one exits 1 (failed).
  for (const ran of Outcome.options) {
    const { exitCode } = endingOf({ ran, unverified: true });
    assert.equal(exitCode, ran === "completed" ? EXIT_CODES.failed : EXIT_CODES[ran], ran);
  }
  // The help says the same, in the flag's line and in loom --help's exit-code table.
  const help = async (argv: string[]) => {
    const { io, out } = fakeIo({ cwd: tmpdir() });
    assert.equal(await main(argv, io), 0);
    return out.stdout.replace(/\s+/g, " ");
  };
  assert.match(
    await help(["run", "--help"]),
    /exit 1 when the run completes unverified \(any other ending keeps its own exit code: 6 at the step limit\)/,
  );
  const table = await help(["--help"]);
  assert.match(table, / 1 failed, [^.]*or completed NOT verified \(--require-passing-tests\) 2 /);
  assert.match(table, / 6 step limit 7 /);
});
