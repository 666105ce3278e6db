// Codex CLI rollouts as recordings: a hand-written rollout shaped like Codex CLI 0.4x's (session_meta, turn_context,
// response_item, event_msg token_count, compacted; shell, apply_patch, exec_command and another tool) and one in the
// first versions' shape (a bare meta line and bare Responses items), in tests/fixtures/codex/.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { UsageError } from "../lib/errors.ts";
import { detectRecordingFormat } from "../lib/recording/format.ts";
import { importSession } from "../lib/recording/importers/index.ts";
import { codexUsage } from "../lib/recording/importers/codex.ts";
import { canonicalJson } from "../lib/text/digest.ts";
import { replayRecording } from "../bench/workloads.ts";

const FIXTURES = new URL("./fixtures/codex/", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, FIXTURES), "utf8");
const ROLLOUT = read("2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl");
const FIRST_VERSION = read("rollout-2025-05-01T10-00-00-7f0c0e2a.jsonl");
const load = (text: string, name = "rollout.jsonl") => importSession(text, { format: "codex", name });

function usageError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, String(error));
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes("\n"), "one line");
    return true;
  });
}

test("codex: shell calls, apply_patch and other tools become steps; the task skips the environment context", () => {
  const { recording } = load(ROLLOUT);
  assert.equal(recording.header.slice.intent, "Fix the off-by-one in pager.py and run the tests.");
  assert.equal(recording.header.slice.model, "gpt-5-codex");
  assert.deepEqual(recording.executions.map((e) => e.action), [
    "run_command",
    "edit_file",
    "run_tests",
    "run_command",
    "finish",
  ]);
  const [rg, patch, tests, plan, finish] = recording.executions;
  // `bash -lc SCRIPT` is the script; the output is what the model saw, the exit code read from it.
  assert.deepEqual(rg?.args, { argv: ["bash", "-c", "rg -n 'page' pager.py"] });
  assert.ok(rg?.report.kind === "command");
  assert.equal(rg.report.exit_code, 0);
  assert.match(rg.results[rg.report.output] ?? "", /^\{"output": "3: {4}return items/);
  assert.deepEqual(patch?.args, {
    path: "pager.py",
    old_text: "    return items[start:start + size - 1]",
    new_text: "    return items[start:start + size]",
  });
  assert.deepEqual(patch?.report.kind === "edit" && patch.report.paths, ["pager.py"]);
  assert.ok(tests?.report.kind === "test");
  assert.equal(tests.report.exit_code, 0);
  assert.equal(tests.report.revision, "r1");
  assert.match(tests.results[tests.report.output] ?? "", /4 passed/);
  assert.deepEqual((plan?.args as { argv: string[] }).argv[0], "update_plan");
  assert.deepEqual(finish?.report, {
    kind: "finish",
    status: "success",
    summary: "Fixed: the page slice now includes its last item; 4 tests pass.",
  });
  assert.deepEqual(recording.answers[2]?.value, {
    action: "edit_file",
    reason: "The slice drops the last item; patching.",
  });
});

test("codex: token counts give each call's usage (cached input apart), a repeated count is not a call", () => {
  const { recording, facts } = load(ROLLOUT);
  assert.deepEqual(facts.usages, [
    { input: 1000, cache_read: 3000, cache_write: null, output: 80 },
    { input: 300, cache_read: 4000, cache_write: null, output: 120 },
    { input: 300, cache_read: 4200, cache_write: null, output: 40 },
    { input: 2000, cache_read: 0, cache_write: null, output: 30 },
    { input: 200, cache_read: 1900, cache_write: null, output: 25 },
  ]);
  assert.deepEqual(facts.call_steps, [1, 2, 3, 4, 5]);
  assert.deepEqual(recording.answers.find((a) => a.step === 1 && a.phase === "selection")?.usage, facts.usages[0]);
  assert.deepEqual(facts.call_models, ["gpt-5-codex", "gpt-5-codex", "gpt-5-codex", "gpt-5-codex", "gpt-5-codex"]);
  const compacted = ROLLOUT.split("\n").findIndex((l) => l.includes('"type": "compacted"')) + 1;
  assert.deepEqual(facts.compactions, [compacted]);
  assert.deepEqual(
    codexUsage({ input_tokens: 10, cached_input_tokens: 4, cache_write_input_tokens: 2, output_tokens: 1 }),
    {
      input: 4,
      cache_read: 4,
      cache_write: 2,
      output: 1,
    },
  );
});

test("codex: the first versions' rollouts (a bare meta line, bare items) import too", () => {
  assert.equal(detectRecordingFormat(FIRST_VERSION, "old.jsonl"), "codex");
  const { recording, facts } = load(FIRST_VERSION);
  assert.equal(recording.header.slice.instructions, "Be terse.");
  assert.deepEqual(recording.executions.map((e) => e.action), ["run_command", "finish"]);
  const ls = recording.executions[0];
  assert.ok(ls?.report.kind === "command");
  assert.equal(ls.report.exit_code, 0);
  assert.equal(facts.model, "unknown");
});

test("codex: --from auto detects rollouts; a line that is not one is refused with its number", () => {
  assert.equal(detectRecordingFormat(ROLLOUT, "r.jsonl"), "codex");
  const lines = ROLLOUT.split("\n");
  const bad = [...lines.slice(0, 3), JSON.stringify({ hello: "world" }), ...lines.slice(3)].join("\n");
  usageError(
    () => load(bad, "r.jsonl"),
    /^r\.jsonl:4: expected a Codex CLI rollout .*, found an object with keys hello$/,
  );
  usageError(
    () => load(`${lines[0]}\n"text"\n`, "r.jsonl"),
    /^r\.jsonl:2: expected a JSON object per line, found a string$/,
  );
  usageError(() => load(`${lines[0]}\n`, "r.jsonl"), /^r\.jsonl: expected a Codex CLI rollout .*: no user prompt/);
});

test("codex: both rollouts replay under both policies with the same execution reports", async () => {
  for (const [name, text] of [["rollout", ROLLOUT], ["first version", FIRST_VERSION]] as const) {
    const { recording } = load(text);
    const reports: string[] = [];
    for (const policy of ["legacy", "bounded"] as const) {
      const result = await replayRecording(recording, policy);
      assert.equal(result.error, null, `${name} ${policy}: ${result.error?.message ?? ""}`);
      assert.equal(result.report.model_calls, recording.answers.length);
      reports.push(canonicalJson(result.reports));
    }
    assert.equal(reports[0], reports[1], name);
  }
});
