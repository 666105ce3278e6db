// The tiered live suite (evals/live-tiers.jsonc) and the per-tier live table of bench/RESULTS.md (bench/live.ts,
// bench/live-markdown.ts): the suite's checks are honest and its tiers as documented; a recording tells refusals by
// code, whether the model finished and when its tests first passed; the table has a row per protocol, tier and policy
// with those figures.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { main } from "../main.ts";
import { parseSuite } from "../lib/eval/suite.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { liveCells, type LiveRun, recordingFacts, renderLive, tierOf } from "../bench/live-markdown.ts";
import type { EvalRow } from "../lib/eval/eval-file.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

test("the tiered suite: 32 tasks, 12 one-step, 12 few-step, 8 long-output, in Python, Node and shell", () => {
  const text = readFileSync(join(root, "evals/live-tiers.jsonc"), "utf8");
  const suite = parseSuite(text, { file: "evals/live-tiers.jsonc" });
  const count = (tag: string) => suite.tasks.filter((t) => t.tags?.includes(tag)).length;
  assert.equal(suite.tasks.length, 32);
  assert.deepEqual([count("one-step"), count("few-step"), count("long-output")], [12, 12, 8]);
  for (const lang of ["python", "node", "shell"]) assert.ok(count(lang) >= 6, lang);
  for (const task of suite.tasks) assert.notEqual(tierOf(task.tags), "all", task.id);
  // a success claimed on failing or untested code is refused, as the live recordings asked
  assert.equal(suite.defaults?.require_passing_tests, true);
});

test("loom eval validate proves the tiered suite's 32 checks honest", { timeout: 900_000 }, async () => {
  const { io, out } = fakeIo({ cwd: root, env: { PATH: process.env.PATH } });
  const code = await main(["eval", "validate", "evals/live-tiers.jsonc", "--jobs", "2"], io);
  assert.equal(code, 0, out.stdout + out.stderr);
  assert.match(out.stdout, /^32\/32 tasks valid$/m);
});

const line = (entry: object) => JSON.stringify(entry);

test("a recording's facts: refusals by code, whether the model finished, the first step whose tests passed", () => {
  const recording = [
    line({ type: "header" }),
    line({ type: "answer", phase: "selection", step: 1 }),
    line({ type: "execution", step: 1, action: "edit_file", report: { kind: "refusal", code: "edit_no_match" } }),
    line({ type: "answer", phase: "selection", step: 2 }),
    line({ type: "execution", step: 2, action: "edit_file", report: { kind: "refusal", code: "edit_no_match" } }),
    line({ type: "answer", phase: "selection", step: 3 }),
    line({ type: "execution", step: 3, action: "run_tests", report: { kind: "test", exit_code: 1 } }),
    line({ type: "answer", phase: "selection", step: 4 }),
    line({ type: "execution", step: 4, action: "read_file", report: { kind: "refusal", code: "path_not_found" } }),
    line({ type: "answer", phase: "selection", step: 5 }),
    line({ type: "execution", step: 5, action: "run_tests", report: { kind: "test", exit_code: 0 } }),
    line({ type: "answer", phase: "selection", step: 6 }),
    line({ type: "execution", step: 6, action: "run_tests", report: { kind: "test", exit_code: 0 } }),
    line({ type: "answer", phase: "selection", step: 7 }),
  ].join("\n");
  const facts = recordingFacts(recording);
  assert.deepEqual(facts.refusals, { edit_no_match: 2, path_not_found: 1 });
  assert.equal(facts.finished, false);
  assert.equal(facts.tests_passed_step, 5);
  assert.equal(facts.invalid_answers, 1, "step 7 was answered and nothing ran");
  const finished = recordingFacts(
    `${recording}\n${line({ type: "execution", step: 7, action: "finish", report: {} })}`,
  );
  assert.equal(finished.finished, true);
  assert.equal(finished.invalid_answers, 0);
});

function row(task: string, policy: "legacy" | "bounded", solved: boolean, outcome: EvalRow["outcome"]): EvalRow {
  return {
    id: `${task}.m.${policy}.r1`,
    task,
    model: "openai-compatible/m",
    policy,
    repeat: 1,
    attempt: 1,
    counted: true,
    order: 0,
    outcome,
    error_code: null,
    check: { passed: solved, exit_code: solved ? 0 : 1, timed_out: false, skipped_tests: false, duration_ms: 1 },
    class: solved ? "solved" : "wrong_change",
    steps: 4,
    model_calls: 4,
    usage: { input: 100, output: 10, cache_read: 50, cache_write: 0 },
    cost: null,
    sandbox: { mode: "off", active: false },
    wall_ms: 8000,
    overhead_ms: 1,
    checkpoints: 0,
    lookups: 0,
    request_bytes: 1000,
  } as EvalRow;
}

test("the live table has a row per protocol, tier and policy, with refusals by code and unfinished solves", () => {
  const facts = (over: Partial<LiveRun["facts"]> = {}) => ({
    invalid_answers: 0,
    refusals: {},
    finished: true,
    tests_passed_step: null,
    ...over,
  });
  const runs: LiveRun[] = [
    { protocol: "single-call", tier: "one-step", row: row("a", "legacy", true, "completed"), facts: facts() },
    {
      protocol: "single-call",
      tier: "one-step",
      row: row("a", "bounded", true, "step_limit"),
      facts: facts({ finished: false, tests_passed_step: 2, refusals: { edit_no_match: 3 } }),
    },
    { protocol: "single-call", tier: "long-output", row: row("b", "legacy", false, "failed"), facts: facts() },
  ];
  const cells = liveCells(runs);
  assert.deepEqual(cells.map((c) => `${c.tier}/${c.policy}`), [
    "one-step/legacy",
    "one-step/bounded",
    "long-output/legacy",
  ]);
  const bounded = cells[1];
  assert.equal(bounded?.solved_unfinished, 1);
  assert.equal(bounded?.passed_then_limit, 1);
  assert.deepEqual(bounded?.refusals, { edit_no_match: 3 });
  const text = renderLive(cells, [{ protocol: "single-call", tier: "one-step", pair: null, runs: 2, stopped: null }], {
    date: "2026-12-06",
    minutes_budget: 35,
    minutes_used: 30,
    loom_commit: "abc",
    server_commit: "de3ff815ea7d559ee917f063901b8986f038abc6",
    model: "qwen2.5-coder-1.5b",
    weights_file: "q.gguf",
    weights_sha256: "cc32",
    context: 16384,
    threads: 2,
    cores: 2,
    suite: "evals/live-tiers.jsonc",
    tasks: ["a", "b"],
    tiers: { "one-step": 1, "long-output": 1 },
  });
  assert.match(
    text,
    /^\| single-call \| one-step \| bounded \| 1 \| 1 \| 100 % \|.* \| edit_no_match 3 \| 0 \| 1 \| 1 \|$/m,
  );
  assert.match(text, /^\| single-call \| long-output \| legacy \| 1 \| 0 \| 0 % \|/m);
  assert.match(text, /2 tasks \(1 one-step, 1 long-output\)/);
  assert.match(text, /- \*\*single-call, one-step\*\*: no pair finished, no verdict\./);
});
