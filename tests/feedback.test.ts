// Loom's feedback to a small model (issue 44): a passing test says plainly that the run may finish; a refused edit
// shows the lines that are there; an action on a missing path names the paths that exist.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { applyReport, finishableLine, initialBriefing, viewBriefing } from "../lib/context/briefing.ts";
import { ResultStore } from "../lib/context/store.ts";
import { renderSection } from "../lib/providers/render-sections.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { NULL_USAGE, type Provider, type TurnRequest } from "../lib/vocabulary/turn.ts";
import { answer, runLoopReported, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { WorkspaceExecutor } from "../lib/workspace/workspace-executor.ts";
import { NEAREST_LINES_MAX, NEAREST_PATHS_MAX, nearestLines, nearestPaths } from "../lib/workspace/refusal-hints.ts";
import { comparableReport, ExecutionReport } from "../lib/vocabulary/reports.ts";
import type { ActionName } from "../lib/vocabulary/actions.ts";
import { utf8Length } from "../lib/text/digest.ts";

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

// --- A refused edit shows the lines that are there; a missing path names the paths that exist ---

async function withWorkspace(files: Record<string, string>, fn: (fx: WorkspaceFixture) => Promise<void>) {
  const root = mkdtempSync(join(tmpdir(), "loom-feedback-"));
  try {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
    }
    const store = new ResultStore();
    const executor = new WorkspaceExecutor({
      root,
      store,
      test: { command: ["node", "-e", "process.exit(1)"], timeout_ms: 10_000 },
      commands: [],
      commandTimeoutMs: 10_000,
    });
    const run = async (action: ActionName, args: Record<string, unknown>) =>
      ExecutionReport.parse(await executor.execute(action, args, { step: 1 }));
    await fn({ root, store, executor, run });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
type WorkspaceFixture = {
  root: string;
  store: ResultStore;
  executor: WorkspaceExecutor;
  run: (action: ActionName, args: Record<string, unknown>) => Promise<ExecutionReport>;
};

const SUB = "export function sub(a, b) {\n  return a - b;\n}\n\nexport function add(a, b) {\n  return a + b;\n}\n";

test("edit_file: old text that occurs with other whitespace is refused with the lines where it is", async () => {
  await withWorkspace({ "src/math.js": SUB }, async ({ run }) => {
    const report = await run("edit_file", { path: "src/math.js", old_text: "-b", new_text: "+b" });
    assert.equal(report.kind, "refusal");
    if (report.kind !== "refusal") return;
    assert.equal(report.code, "edit_text_not_found");
    assert.deepEqual(report.nearest_lines, [{ line: 2, text: "  return a - b;" }]);
    assert.match(report.reason, /nearest_lines/);
    const indented = await run("edit_file", {
      path: "src/math.js",
      old_text: "export function add(a, b) {\n return a + b;",
      new_text: "",
    });
    assert.ok(indented.kind === "refusal");
    assert.deepEqual(indented.nearest_lines?.map((l) => l.line), [5, 6]);
  });
});

test("edit_file: old text that occurs nowhere is refused with the most alike lines, or none when nothing is alike", async () => {
  await withWorkspace({ "src/math.js": SUB }, async ({ run }) => {
    const report = await run("edit_file", { path: "src/math.js", old_text: "  return a * b;", new_text: "" });
    assert.ok(report.kind === "refusal");
    assert.deepEqual(report.nearest_lines?.map((l) => l.line), [2, 6]);
    const none = await run("edit_file", { path: "src/math.js", old_text: "zzzz qqqq", new_text: "" });
    assert.ok(none.kind === "refusal");
    assert.equal(none.nearest_lines, undefined);
    assert.doesNotMatch(none.reason, /nearest_lines/);
  });
});

test("an action on a missing path is refused with the nearest paths that exist", async () => {
  const files = { "src/math.js": SUB, "src/util/fmt.js": "x\n", "test/math.test.js": "t\n", "README.md": "r\n" };
  await withWorkspace(files, async ({ run }) => {
    const placeholder = await run("read_file", { path: "path/to/file" });
    assert.ok(placeholder.kind === "refusal");
    assert.equal(placeholder.code, "not_found");
    assert.deepEqual(placeholder.existing_paths, ["README.md", "src/", "test/"]);
    assert.match(placeholder.reason, /existing_paths/);
    const moved = await run("edit_file", { path: "lib/math.js", old_text: "a", new_text: "b" });
    assert.ok(moved.kind === "refusal");
    assert.deepEqual(moved.existing_paths, ["src/math.js", "README.md", "src/", "test/"]);
    const sibling = await run("list_files", { path: "src/utils" });
    assert.ok(sibling.kind === "refusal");
    assert.deepEqual(sibling.existing_paths, ["src/math.js", "src/util/"]);
  });
});

test("the refused edit's nearest lines reach the next request under both policies", async () => {
  for (const policy of ["legacy", "bounded"] as const) {
    await withWorkspace({ "src/math.js": SUB }, async ({ store, executor }) => {
      const provider = new ScriptedProvider([
        answer("selection", {
          action: "edit_file",
          args: { path: "src/math.js", old_text: "-b", new_text: "+ b" },
        }),
        answer("selection", { action: "finish", args: { status: "failure", summary: "gave up" } }),
      ], { keepRequests: true });
      let t = 0;
      await runLoopReported(sliceRequest({ step_protocol: "single-call" }), {
        policy,
        provider,
        executor,
        store,
        now: () => (t += 1),
      });
      const second = provider.requests[1];
      assert.ok(second);
      const shown = JSON.stringify({ nearest_lines: [{ line: 2, text: "  return a - b;" }] }).slice(1, -1);
      assert.ok(promptText(second).includes(shown), policy);
    });
  }
});

test("nearest lines are a bounded excerpt of the file: real line numbers, each line as it is or clipped", () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ maxLength: 300 }), { maxLength: 60 }),
      fc.string({ minLength: 1, maxLength: 80 }),
      (lines, old) => {
        const content = lines.join("\n");
        const near = nearestLines(content, old);
        assert.ok(near.length <= NEAREST_LINES_MAX);
        for (const { line, text } of near) {
          const real = (lines[line - 1] ?? "").replace(/\r$/, "");
          assert.ok(text === real || (text.endsWith("…") && real.startsWith(text.slice(0, -1))));
          assert.ok(text.length <= 160);
        }
        assert.ok(utf8Length(JSON.stringify(near)) <= NEAREST_LINES_MAX * (160 * 4 + 32));
      },
    ),
  );
});

test("nearest paths name only paths that exist (files, or folders holding them), at most twelve", () => {
  const segment = fc.constantFrom("a", "b", "src", "lib", "x.ts", "y.js", "README.md");
  const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("/"));
  fc.assert(
    fc.property(fc.uniqueArray(path, { maxLength: 40 }), path, (files, missing) => {
      const near = nearestPaths(files, missing);
      assert.ok(near.length <= NEAREST_PATHS_MAX);
      assert.equal(new Set(near).size, near.length);
      for (const shown of near) {
        assert.ok(
          shown.endsWith("/") ? files.some((f) => f.startsWith(shown)) : files.includes(shown),
          `${shown} exists`,
        );
      }
    }),
  );
});

test("a refusal's hints are advice, not an effect: replay compares a refusal without them", () => {
  const plain = { kind: "refusal" as const, step: 3, code: "not_found", reason: 'Path "x" does not exist' };
  const hinted = { ...plain, existing_paths: ["src/"], nearest_lines: [{ line: 1, text: "a" }] };
  assert.deepEqual(comparableReport(hinted), comparableReport(plain));
});
