// Seconds are the cost of a local model (issue 44): without a price, loom eval's summary, verdict line and HTML give
// seconds and tokens per run and per solved task, and a seconds ratio with its interval (the cost ratio's statistic,
// held to its nominal error rates by simulation here); an interrupted evaluation says what its uncounted runs spent
// (issue 43) in the summary, the HTML and the last progress line.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildEvalFile, type EvalBase } from "../lib/eval/assemble.ts";
import type { EvalFile, EvalRow } from "../lib/eval/eval-file.ts";
import { seededRandom, seedOf } from "../lib/eval/matrix.ts";
import { renderEvalHtml } from "../lib/eval/render-html.ts";
import { renderEvalText } from "../lib/eval/render.ts";
import { summarize } from "../lib/eval/summary.ts";
import { allowance, BOUNDS, COST_MARGIN, MARGIN } from "../bench/eval-stats-sim.ts";
import { main } from "../main.ts";
import { type EvalAgent, startEvalAgent, SUITE_DIR } from "./helpers/eval-agent.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { ROOT } from "./helpers/binary.ts";

const POLICIES = ["legacy", "bounded"] as const;
type Policy = (typeof POLICIES)[number];

function row(
  task: string,
  policy: Policy,
  { solved = true, seconds = 20, repeat = 1, counted = true, cost = null as number | null, calls = 8 } = {},
): EvalRow {
  return {
    id: `${task}.local.${policy}.r${repeat}`,
    task,
    model: "llama-cpp/qwen2.5-coder-1.5b",
    policy,
    repeat,
    attempt: 1,
    counted,
    order: 0,
    outcome: "completed",
    error_code: null,
    check: null,
    class: solved ? "solved" : "unsolved",
    steps: 4,
    model_calls: calls,
    usage: { input: 3000, output: 200, cache_read: 1000, cache_write: null },
    cost: cost === null ? null : {
      currency: "USD",
      input: cost,
      output: 0,
      cache_read: 0,
      cache_write: 0,
      total: cost,
      prices: { source: "test", date: "2026-12-01" },
    },
    sandbox: { mode: "required", active: true },
    wall_ms: seconds * 1000,
    overhead_ms: 100,
    checkpoints: 0,
    lookups: 0,
    request_bytes: 1000,
  };
}

const TASKS = Array.from({ length: 12 }, (_, i) => `t${i}`);

function evalFile(rows: EvalRow[], { tasks = TASKS, stopped = null as string | null } = {}): EvalFile {
  const hash = `sha256:${"0".repeat(64)}`;
  const base: EvalBase = {
    suite: { name: "local", path: "suite.json", tasks, tags: {} },
    key: { suite: hash, tasks: {}, checks: {}, prices: hash, loom_version: "test", settings: hash },
    settings: {
      models: ["llama-cpp/qwen2.5-coder-1.5b"],
      policies: [...POLICIES],
      repeats: 1,
      seed: "s",
      margin: 0.05,
      cost_margin: 0.05,
      retries: 1,
      run_timeout_ms: 600_000,
      step_protocol: "single-call",
      previews: "balanced",
      sandbox: { mode: "required", active: true },
      cache_marker: true,
    },
    shard: null,
    complete: stopped === null,
    stopped,
    rescore: null,
  };
  return buildEvalFile(base, { rows, dropped: [], version: "test" });
}

/** Twelve tasks both policies solve except two bounded loses; bounded takes half the seconds on every task. */
function localRows(): EvalRow[] {
  return TASKS.flatMap((task, i) => [
    row(task, "legacy", { seconds: 20 + i, solved: i !== 0 }),
    row(task, "bounded", { seconds: (20 + i) / 2, solved: i > 1 }),
  ]);
}

test("without a price the summary gives seconds and tokens per run and per solved run, and a seconds ratio", () => {
  const file = evalFile(localRows());
  const [legacy, bounded] = file.summary.policies;
  assert.ok(legacy && bounded);
  assert.equal(legacy.cost, null);
  const legacySeconds = TASKS.reduce((s, _, i) => s + 20 + i, 0);
  assert.equal(legacy.seconds_per_run, legacySeconds / 12);
  assert.equal(legacy.seconds_per_solved, legacySeconds / 11);
  assert.equal(bounded.seconds_per_solved, legacySeconds / 2 / 10);
  assert.equal(legacy.tokens_per_run, 4200);
  assert.equal(bounded.tokens_per_solved, (4200 * 12) / 10);
  const [pair] = file.summary.pairs;
  assert.ok(pair);
  assert.equal(pair.cost_ratio, null);
  assert.equal(pair.cost_basis, "seconds");
  assert.ok(pair.seconds_ratio);
  assert.ok(Math.abs(pair.seconds_ratio.estimate - 0.5) < 1e-12);
  assert.ok(pair.seconds_ratio.low <= 0.5 && (pair.seconds_ratio.high ?? Infinity) >= 0.5);
  assert.deepEqual(file.summary.per_task[0]?.policies.bounded?.mean_seconds, 10);
  assert.match(pair.sentence, /no price: time 0\.50× legacy \(95 % CI [\d.]+–[\d.]+; seconds per task/);
  assert.doesNotMatch(pair.sentence, /cost ratio n\/a/);
});

test("the verdict weighs seconds when there is no price: non-inferior and cheaper in time, said so", () => {
  const rows = TASKS.flatMap((task, i) => [
    row(task, "legacy", { seconds: 20 + i }),
    row(task, "bounded", { seconds: (20 + i) / 2 }),
  ]);
  // Every run solved: too easy to compare; one unsolved each on different tasks keeps it comparable.
  rows[0] = row("t0", "legacy", { seconds: 20, solved: false });
  rows[3] = row("t1", "bounded", { seconds: 10.5, solved: false });
  const tasks = Array.from({ length: 400 }, (_, i) => `t${i}`);
  const many = tasks.flatMap((task, i) => [
    row(task, "legacy", { seconds: 20 + (i % 7), solved: i % 9 !== 0 }),
    row(task, "bounded", { seconds: (20 + (i % 7)) / 2, solved: i % 9 !== 0 }),
  ]);
  const [pair] = evalFile(many, { tasks }).summary.pairs;
  assert.ok(pair);
  assert.equal(pair.verdict, "non_inferior_and_cheaper");
  assert.match(pair.reason, /cheaper in time \(no price: time is the cost\): the seconds ratio's upper bound/);
  const [few] = evalFile(rows).summary.pairs;
  assert.ok(few);
  assert.equal(few.cost_basis, "seconds");
});

test("the text summary and the HTML of an unpriced evaluation show time and tokens, not cost n/a", () => {
  const file = evalFile(localRows());
  const text = renderEvalText(file, { dir: "out" });
  assert.match(
    text,
    /legacy {3}solved 11\/12 runs; .*; time 25\.5 s per run, 27\.8 s per solved; tokens 4,200 per run, /,
  );
  assert.match(
    text,
    /bounded {2}solved 10\/12 runs; .*; time 12\.8 s per run, 15\.3 s per solved; tokens 4,200 per run, 5,040 per solved/,
  );
  assert.match(text, /legacy solved \/ time \/ steps/);
  assert.match(text, /\nt0 +0\/1 {2}20\.0 s {2}4 +0\/1 {2}10\.0 s {2}4\n/);
  assert.doesNotMatch(text, /cost n\/a|\$|no priced runs/);
  const html = renderEvalHtml(file, { dir: "out" });
  assert.match(html, /<th>time per run<\/th><th>per solved<\/th>/);
  assert.match(html, /<td>25\.5 s · 4200 tokens<\/td><td>27\.8 s · 4582 tokens<\/td>/);
  assert.match(html, /no price: time ratio \(seconds per task, the cost of a local model\) 0\.50×/);
  assert.match(html, /<th>mean time<\/th>/);
  assert.doesNotMatch(html, /n\/a \(no priced runs\)/);
});

test("a priced evaluation keeps its cost figures and cost ratio", () => {
  const rows = TASKS.flatMap((task, i) => [
    row(task, "legacy", { seconds: 20, cost: 0.01 * (i + 1), solved: i !== 0 }),
    row(task, "bounded", { seconds: 10, cost: 0.008 * (i + 1), solved: i > 1 }),
  ]);
  const file = evalFile(rows);
  const [pair] = file.summary.pairs;
  assert.ok(pair);
  assert.equal(pair.cost_basis, "usd");
  assert.match(pair.sentence, /cost 0\.80× legacy/);
  assert.match(renderEvalText(file, { dir: "out" }), /legacy {3}solved 11\/12 runs; .*; cost \$0\.7800; per solved/);
});

test("an interrupted evaluation's summary and HTML say what its uncounted runs spent, never 'no priced runs'", () => {
  const rows = [
    row("t0", "legacy", { counted: false, cost: 0.0101, calls: 11 }),
    row("t0", "bounded", { counted: false, cost: 0.0037, calls: 6, seconds: 3 }),
  ];
  const file = evalFile(rows, { stopped: "interrupted" });
  assert.deepEqual(file.summary.uncounted, { runs: 2, cost: 0.0101 + 0.0037, model_calls: 17, seconds: 23 });
  const text = renderEvalText(file, { dir: "out" });
  assert.match(
    text,
    /not counted: 2 runs \(interrupted, or re-run after an infra failure\) spent \$0\.0138 in 17 calls/,
  );
  assert.doesNotMatch(text, /no priced runs/);
  // A priced evaluation with nothing counted yet is not taken for a local one.
  assert.match(text, /legacy {3}solved 0\/0 runs; .*; cost n\/a; per solved n\/a/);
  assert.doesNotMatch(text, /time n\/a/);
  const html = renderEvalHtml(file, { dir: "out" });
  assert.match(
    html,
    /not counted: 2 runs \(interrupted, or re-run after an infra failure\) spent \$0\.0138 in 17 calls/,
  );
  assert.doesNotMatch(html, /no priced runs/);
});

/**
 * Simulated local evaluations whose true seconds ratio is exactly 1 − cost margin: a task's base time ~ lognormal
 * (σ 1), each run's × lognormal (σ 0.3), the candidate's × a per-task lognormal (σ 0.2) factor of mean 1 × the ratio.
 * The seconds ratio's interval must hold the truth at the nominal rate, and "cheaper in time" (false here) stay rare.
 */
function simulateSeconds({ tasks, repeats, sims }: { tasks: number; repeats: number; sims: number }) {
  const uniform = seededRandom(seedOf(`seconds:${tasks}:${repeats}`));
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  const ratio = 1 - COST_MARGIN;
  const ids = Array.from({ length: tasks }, (_, i) => `t${i}`);
  let covered = 0, cheaper = 0;
  for (let n = 0; n < sims; n++) {
    const rows: EvalRow[] = [];
    for (const task of ids) {
      const base = 30 * Math.exp(normal() - 0.5);
      const factor = Math.exp(0.2 * normal() - 0.02);
      for (let r = 1; r <= repeats; r++) {
        for (const [policy, scale] of [["legacy", 1], ["bounded", factor * ratio]] as const) {
          const seconds = base * scale * Math.exp(0.3 * normal() - 0.045);
          rows.push(row(task, policy, { seconds, repeat: r, solved: uniform() < 0.5 }));
        }
      }
    }
    const [pair] = summarize(rows, {
      tasks: ids,
      policies: [...POLICIES],
      repeats,
      margin: MARGIN,
      costMargin: COST_MARGIN,
      seed: `sim:${n}`,
      droppedPairs: [],
      resamples: 400,
    }).pairs;
    const r = pair?.seconds_ratio;
    if (r && r.low <= ratio && (r.high === null || ratio <= r.high)) covered++;
    if (r && r.high !== null && r.high < ratio) cheaper++;
  }
  return { coverage: covered / sims, cheaper: cheaper / sims };
}

test("the seconds ratio's interval keeps its nominal coverage, and a false 'cheaper in time' stays rare", {
  timeout: 600_000,
}, () => {
  const sims = 160;
  for (const cell of [{ tasks: 4, repeats: 3 }, { tasks: 12, repeats: 1 }, { tasks: 30, repeats: 2 }]) {
    const r = simulateSeconds({ ...cell, sims });
    const label = `${JSON.stringify(cell)}: coverage ${r.coverage}, cheaper ${r.cheaper}`;
    assert.ok(r.coverage >= BOUNDS.coverage - allowance(BOUNDS.coverage, sims), label);
    assert.ok(r.cheaper <= BOUNDS.false_cheaper + allowance(BOUNDS.false_cheaper, sims), label);
  }
});

// --- An interrupted evaluation through the command: the last progress line counts the run in flight ---

const MODEL = "anthropic/claude-sonnet-5-5";

test("an interrupted loom eval's last progress line and summary count what the run in flight spent", {
  timeout: 600_000,
}, async () => {
  const agent: EvalAgent = await startEvalAgent({});
  const dir = mkdtempSync(join(tmpdir(), "loom-eval-seconds-"));
  try {
    // The first run_tests writes the flag and waits to be killed.
    const flag = join(dir, "in-tests");
    const wait =
      `const fs = require("fs"); const f = ${JSON.stringify(flag)}; if (fs.existsSync(f)) process.exit(0); ` +
      `fs.writeFileSync(f, ""); setTimeout(() => {}, 600000);`;
    const suite = join(dir, "suite");
    mkdirSync(join(suite, "tasks"), { recursive: true });
    cpSync(join(SUITE_DIR, "tasks", "range-off-by-one"), join(suite, "tasks", "range-off-by-one"), {
      recursive: true,
    });
    const shipped = JSON.parse(readFileSync(join(SUITE_DIR, "suite.jsonc"), "utf8").replace(/^\/\/.*\n/, ""));
    shipped.tasks = shipped.tasks.filter((t: { id: string }) => t.id === "range-off-by-one");
    shipped.tasks[0].test = { command: ["node", "-e", wait], timeout_ms: 600_000 };
    writeFileSync(join(suite, "suite.json"), JSON.stringify(shipped));
    const out = join(dir, "out");
    const controller = new AbortController();
    const watching = setInterval(() => existsSync(flag) && controller.abort(), 5);
    const { io, out: printed } = fakeIo({
      cwd: ROOT,
      signal: controller.signal,
      env: { PATH: process.env.PATH, ANTHROPIC_BASE_URL: agent.server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-eval-test" },
    });
    const code = await main(
      ["eval", suite, "--model", MODEL, "--policies", "legacy,bounded", "--sandbox", "off", "--out", out],
      io,
    );
    clearInterval(watching);
    assert.equal(code, 130, printed.stderr);
    const file = JSON.parse(readFileSync(join(out, "eval.json"), "utf8")) as EvalFile;
    const spent = file.rows.reduce((s, r) => s + (r.cost?.total ?? 0), 0);
    assert.ok(spent > 0);
    const progress = printed.stderr.split("\n").filter((line) => line.startsWith("eval: "));
    assert.match(progress.at(-1) ?? "", new RegExp(`\\$${spent.toFixed(4).replace(".", "\\.")} spent`));
    assert.match(printed.stdout, /not counted: 1 run \(interrupted, or re-run after an infra failure\) spent \$/);
    assert.doesNotMatch(printed.stdout, /no priced runs/);
  } finally {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
