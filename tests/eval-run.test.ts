// loom eval against the stand-in agent (tests/helpers/eval-agent.ts), in-process: real runs in fresh workspace copies,
// hidden checks in fresh sandboxes, eval.json checked against the per-run reports it summarises.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { renderJsonSchema } from "../commands/schema.ts";
import type { EvalFile, EvalRow } from "../lib/eval/eval-file.ts";
import { type AgentOptions, type EvalAgent, startEvalAgent, SUITE_DIR } from "./helpers/eval-agent.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { ROOT } from "./helpers/binary.ts";
import { validateJsonSchema } from "./helpers/validate-json-schema.ts";
import { comparableRow, comparableSummary } from "./helpers/eval-compare.ts";
import { summarize } from "../lib/eval/summary.ts";

const MODEL = "anthropic/claude-sonnet-5-5";
const SLOW = { timeout: 600_000 };

async function withAgent(options: AgentOptions, fn: (agent: EvalAgent, dir: string) => Promise<void>) {
  const agent = await startEvalAgent(options);
  const dir = mkdtempSync(join(tmpdir(), "loom-eval-test-"));
  try {
    await fn(agent, dir);
  } finally {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function loomEval(
  agent: EvalAgent,
  args: string[],
  { signal, cwd = ROOT }: { signal?: AbortSignal; cwd?: string } = {},
) {
  const { io, out } = fakeIo({
    cwd,
    signal,
    env: { PATH: process.env.PATH, ANTHROPIC_BASE_URL: agent.server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-eval-test" },
  });
  const code = await main(["eval", ...args], io);
  return { code, ...out };
}

const readEval = (dir: string): EvalFile => JSON.parse(readFileSync(join(dir, "eval.json"), "utf8"));
const report = (dir: string, row: EvalRow) =>
  JSON.parse(readFileSync(join(dir, "runs", row.id, `attempt-${row.attempt}`, "report.json"), "utf8"));
const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

test(
  "loom eval evals/ --repeats 2: the paired summary adds up to the per-run reports, and the policies really differ",
  SLOW,
  async () => {
    await withAgent({}, async (agent, dir) => {
      const out = join(dir, "out");
      const run = await loomEval(agent, [
        "evals/",
        "--model",
        MODEL,
        "--policies",
        "legacy,bounded",
        "--repeats",
        "2",
        "--jobs",
        "2",
        "--out",
        out,
      ]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(agent.unmarked, 0, "every request starts with its run's marker");
      const file = readEval(out);
      assert.deepEqual(validateJsonSchema(JSON.parse(renderJsonSchema("eval")), file), []);
      assert.equal(file.rows.length, 12 * 2 * 2);
      assert.ok(file.complete);
      // Every figure of the summary is what the per-run reports add up to.
      for (const policy of file.summary.policies) {
        const rows = file.rows.filter((r) => r.policy === policy.policy && r.counted);
        const reports = rows.map((r) => report(out, r));
        assert.equal(policy.runs, reports.length);
        assert.equal(policy.model_calls, sum(reports.map((r) => r.model_calls)));
        assert.equal(policy.cache_read, sum(reports.map((r) => r.usage.cache_read)));
        assert.ok(Math.abs(policy.cost! - sum(reports.map((r) => r.cost.total))) < 1e-9);
        const passed = rows.map((r) => readFileSync(join(out, "runs", r.id, "attempt-1", "check.txt"), "utf8"));
        assert.equal(policy.solved, passed.filter((text) => text.includes("all checks passed")).length);
        for (const [i, r] of rows.entries()) {
          assert.deepEqual(r.usage, reports[i].usage);
          assert.equal(r.checkpoints, reports[i].checkpoints);
        }
      }
      // The clue of clue-in-test-output sits in the middle of 30 KB of test output: legacy shows it, bounded does not.
      // (The process runner keeps the whole output however loaded the machine: tests/process.test.ts.)
      const clue = file.summary.per_task.find((t) => t.task === "clue-in-test-output")!;
      assert.deepEqual([clue.policies.legacy.solved, clue.policies.bounded.solved], [2, 0]);
      const pair = file.summary.pairs[0];
      assert.deepEqual(pair.disagreements.map((d) => d.task), ["clue-in-test-output"]);
      const largeOutput = file.summary.per_tag.find((t) => t.tag === "large-output")!;
      assert.equal(largeOutput.tasks, 2);
      assert.equal(largeOutput.policies.legacy.solve_rate, 1);
      assert.equal(
        largeOutput.policies.bounded.solve_rate,
        0.5,
        "bounded solves the other large-output task, never the clue",
      );
      assert.equal(file.summary.per_tag.find((t) => t.tag === "small")!.policies.bounded.solved, 12);
      assert.ok(pair.difference.estimate < 0);
      assert.equal(pair.verdict, "inconclusive");
      assert.ok(pair.detectable_difference! > 0.05);
      assert.match(
        run.stdout,
        /bounded [\d.]+\/12 tasks vs legacy 12\/12 tasks \(−8 points, 95 % CI −\d+ to \+\d+/,
      );
      assert.match(run.stdout, /inconclusive at a 5-point margin/);
      assert.match(run.stdout, /could detect ≥ \d+ points/);
      assert.match(run.stderr, /pre-flight cost estimate ≤ \$/);
      assert.match(run.stderr, /eval: 48\/48 runs/);
    });
  },
);

test(
  "an infra failure re-runs both halves of its pair; a pair that keeps failing is dropped and counted",
  SLOW,
  async () => {
    // range-off-by-one: the provider is overloaded through every retry of its first call, then recovers.
    // duration-parse: the provider never answers its calls.
    let rangeFailures = 0;
    const failRequests = (_: number, task: string) => {
      if (task === "duration-parse") return 529;
      if (task === "range-off-by-one" && rangeFailures < 4) {
        rangeFailures++;
        return 529;
      }
      return null;
    };
    await withAgent({ failRequests }, async (agent, dir) => {
      const out = join(dir, "out");
      const run = await loomEval(agent, [
        "evals/",
        "--model",
        MODEL,
        "--task",
        "range-off-by-one",
        "--task",
        "duration-parse",
        "--retries",
        "1",
        "--out",
        out,
        "--quiet",
      ]);
      // A dropped pair leaves the evaluation short of what it set out to measure: exit 1, and stderr says why.
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /^loom eval: 1 pair\(s\) dropped after infra failures on every attempt/m);
      const file = readEval(out);
      const range = file.rows.filter((r) => r.task === "range-off-by-one");
      assert.equal(range.length, 4, "both halves ran twice");
      assert.deepEqual(range.filter((r) => r.attempt === 1).map((r) => r.counted), [false, false]);
      assert.ok(range.some((r) => r.attempt === 1 && r.class === "infra" && r.error_code === "provider_overloaded"));
      assert.deepEqual(range.filter((r) => r.attempt === 2).map((r) => [r.counted, r.class]), [[true, "solved"], [
        true,
        "solved",
      ]]);
      assert.deepEqual(file.summary.dropped_pairs, ["duration-parse.anthropic_claude-sonnet-5-5.r1"]);
      assert.ok(file.rows.filter((r) => r.task === "duration-parse").every((r) => !r.counted));
      assert.equal(file.summary.runs, 2);
      assert.equal(file.summary.infra_retries, file.rows.filter((r) => r.attempt === 2).length);
    });
  },
);

test(
  "an interrupted eval keeps what finished; --resume runs only the rest, and refuses once a task's files changed",
  SLOW,
  async () => {
    await withAgent({}, async (agent, dir) => {
      const suite = join(dir, "suite");
      mkdirSync(join(suite, "tasks"), { recursive: true });
      const ids = ["range-off-by-one", "duration-parse", "lru-eviction"];
      for (const id of ids) cpSync(join(SUITE_DIR, "tasks", id), join(suite, "tasks", id), { recursive: true });
      const shipped = JSON.parse(readFileSync(join(SUITE_DIR, "suite.jsonc"), "utf8").replace(/^\/\/.*\n/, ""));
      shipped.tasks = shipped.tasks.filter((t: { id: string }) => ids.includes(t.id));
      writeFileSync(join(suite, "suite.json"), JSON.stringify(shipped));
      const out = join(dir, "out");
      const args = [suite, "--model", MODEL, "--out", out, "--quiet"];

      const controller = new AbortController();
      const watching = setInterval(() => {
        const pairsDone = (() => {
          try {
            return readEval(out).rows.length;
          } catch {
            return 0;
          }
        })();
        if (pairsDone >= 2) controller.abort();
      }, 5);
      const first = await loomEval(agent, args, { signal: controller.signal });
      clearInterval(watching);
      assert.equal(first.code, 130);
      const partial = readEval(out);
      assert.equal(partial.stopped, "interrupted");
      assert.equal(partial.complete, false);
      const countedBefore = partial.rows.filter((r) => r.counted);
      assert.ok(countedBefore.length >= 2 && countedBefore.length < 6, `${countedBefore.length} counted rows`);

      // The interrupted summary's next line is the command to continue; it is run as printed.
      const next = first.stdout.match(/^continue: loom eval (.+) \(with the same --task, --tag and --prices/m);
      assert.ok(next, first.stdout);
      const printed = next[1].split(" ");
      assert.equal(printed.at(-1), "--resume");
      const again = await loomEval(agent, printed);
      assert.equal(again.code, 0, again.stderr);
      const full = readEval(out);
      assert.ok(full.complete);
      assert.equal(full.rows.filter((r) => r.counted).length, 6);
      for (const row of partial.rows) {
        const kept = full.rows.find((r) => r.id === row.id && r.attempt === row.attempt);
        assert.deepEqual(kept, row, `${row.id} attempt ${row.attempt} was kept`);
      }
      for (const row of countedBefore) {
        assert.ok(!full.rows.some((r) => r.id === row.id && r.attempt !== row.attempt), `${row.id} was not run again`);
      }

      const callsBefore = sum([...agent.calls.values()]);
      const resumed = await loomEval(agent, [...args, "--resume"]);
      assert.equal(resumed.code, 0);
      assert.equal(sum([...agent.calls.values()]), callsBefore, "a finished evaluation resumes without a model call");

      writeFileSync(join(suite, "tasks", "lru-eviction", "workspace", "src", "lru.mjs"), "// changed\n");
      const refused = await loomEval(agent, [...args, "--resume"]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /Cannot resume .*: task "lru-eviction" changed/);
    });
  },
);

/** A suite of shipped tasks copied into `dir`, with `edit` applied to its JSON. */
function copySuite(dir: string, ids: string[], edit: (suite: any) => void = () => {}): string {
  const suite = join(dir, "suite");
  mkdirSync(join(suite, "tasks"), { recursive: true });
  for (const id of ids) cpSync(join(SUITE_DIR, "tasks", id), join(suite, "tasks", id), { recursive: true });
  const shipped = JSON.parse(readFileSync(join(SUITE_DIR, "suite.jsonc"), "utf8").replace(/^\/\/.*\n/, ""));
  shipped.tasks = shipped.tasks.filter((t: { id: string }) => ids.includes(t.id));
  edit(shipped);
  writeFileSync(join(suite, "suite.json"), JSON.stringify(shipped, null, 2));
  return suite;
}

test("a check that times out counts as unsolved, with timed_out in its row", SLOW, async () => {
  await withAgent({}, async (agent, dir) => {
    const suite = copySuite(dir, ["range-off-by-one"], (s) => {
      s.tasks[0].check = { command: ["node", "-e", "setTimeout(() => {}, 60000)"], timeout_ms: 300 };
    });
    const out = join(dir, "out");
    const run = await loomEval(agent, [suite, "--model", MODEL, "--policies", "bounded", "--out", out, "--quiet"]);
    assert.equal(run.code, 0, run.stderr);
    const [row] = readEval(out).rows;
    assert.equal(row.outcome, "completed");
    assert.equal(row.class, "unsolved");
    assert.equal(row.check?.timed_out, true);
  });
});

test("a suite with a bad task is refused with one line naming the file, the task and the field", async () => {
  await withAgent({}, async (agent, dir) => {
    const suite = copySuite(dir, ["range-off-by-one", "duration-parse"], (s) => {
      s.tasks[1].check.timeout_ms = "soon";
    });
    const run = await loomEval(agent, [suite, "--model", MODEL, "--out", join(dir, "out")], { cwd: dir });
    assert.equal(run.code, 2);
    assert.match(
      run.stderr,
      /Invalid suite "suite\/suite.json": task "duration-parse" \(tasks\[1\]\)\.check\.timeout_ms: expected number/,
    );
    assert.equal(run.stderr.trim().split("\n").length, 1);
    assert.equal(sum([...agent.calls.values()]), 0);
  });
});

test(
  "a shard re-run with --resume changes nothing; shards merge into the unsharded result; rescore calls no model",
  SLOW,
  async () => {
    await withAgent({}, async (agent, dir) => {
      const tasks = ["--task", "range-off-by-one", "--task", "csv-quoted-fields", "--task", "topo-sort-cycle"];
      const args = (
        out: string,
        ...more: string[]
      ) => ["evals/", "--model", MODEL, ...tasks, "--out", join(dir, out), "--quiet", ...more];
      assert.equal((await loomEval(agent, args("one"))).code, 0);
      assert.equal((await loomEval(agent, args("s1", "--shard", "1/2"))).code, 0);
      assert.equal((await loomEval(agent, args("s2", "--shard", "2/2"))).code, 0);
      const shard1 = readEval(join(dir, "s1"));
      const calls = sum([...agent.calls.values()]);
      assert.equal((await loomEval(agent, args("s1", "--shard", "1/2", "--resume"))).code, 0);
      assert.equal(sum([...agent.calls.values()]), calls, "the re-run of a finished shard calls no model");
      assert.deepEqual(readEval(join(dir, "s1")).rows, shard1.rows);
      assert.equal((await loomEval(agent, args("s1", "--shard", "2/2", "--resume"))).code, 2, "another shard's folder");

      const { io, out } = fakeIo({ cwd: ROOT, env: { PATH: process.env.PATH } });
      const mergedPath = join(dir, "merged.json");
      const code = await main([
        "report",
        "--merge",
        join(dir, "s1", "eval.json"),
        join(dir, "s2", "eval.json"),
        "-o",
        mergedPath,
      ], io);
      assert.equal(code, 0, out.stderr);
      // -o writes only the file, as for a batch's shards: nothing on stdout, one line on stderr.
      assert.equal(out.stdout, "");
      assert.match(out.stderr, /^merged 2 shards \([\d,]+ runs\) into .*merged\.json\n$/);
      const merged: EvalFile = JSON.parse(readFileSync(mergedPath, "utf8"));
      const one = readEval(join(dir, "one"));
      // Exactly the file one process writes from these rows, and the same results as the unsharded run.
      const shardRows = [...readEval(join(dir, "s1")).rows, ...readEval(join(dir, "s2")).rows];
      assert.deepEqual(
        merged.summary,
        summarize(merged.rows, {
          tasks: one.suite.tasks,
          tags: one.suite.tags,
          policies: one.settings.policies,
          repeats: 1,
          margin: one.settings.margin,
          costMargin: one.settings.cost_margin,
          seed: one.settings.seed,
          droppedPairs: [],
        }),
      );
      assert.deepEqual(
        [...merged.rows].sort((a, b) => a.id.localeCompare(b.id)),
        shardRows.sort((a, b) => a.id.localeCompare(b.id)),
      );
      assert.deepEqual(merged.rows.map(comparableRow), one.rows.map(comparableRow));
      assert.deepEqual(comparableSummary(merged.summary), comparableSummary(one.summary));
      assert.equal(merged.shard, null);
      assert.ok(merged.complete);

      // Rescore re-runs each check on the saved changes: a run whose changes are emptied is no longer solved.
      const emptied = one.rows[0];
      writeFileSync(join(dir, "one", "runs", emptied.id, "attempt-1", "changes.json"), '{"files":{}}');
      const before = sum([...agent.calls.values()]);
      const rescored = await main(
        ["eval", "rescore", join(dir, "one")],
        fakeIo({ cwd: ROOT, env: { PATH: process.env.PATH } }).io,
      );
      assert.equal(rescored, 0);
      assert.equal(sum([...agent.calls.values()]), before);
      const after = readEval(join(dir, "one")).rows;
      assert.equal(after[0].class, "unsolved");
      assert.deepEqual(after.slice(1).map((r) => r.class), one.rows.slice(1).map((r) => r.class));
      assert.equal(one.rows[0].class, "solved");
    });
  },
);

test("--max-cost stops starting new pairs once spent: what ran is kept, the file says why, exit 1", SLOW, async () => {
  await withAgent({}, async (agent, dir) => {
    const out = join(dir, "out");
    const tasks = ["--task", "range-off-by-one", "--task", "duration-parse", "--task", "lru-eviction"];
    const run = await loomEval(agent, ["evals/", "--model", MODEL, ...tasks, "--max-cost", "0.001", "--out", out]);
    assert.equal(run.code, 1, run.stderr);
    const file = readEval(out);
    assert.equal(file.rows.length, 2, "one pair ran, then the cap stopped the rest");
    assert.match(file.stopped ?? "", /^--max-cost 0.001 reached \(\$0\.\d+ spent\)$/);
    assert.equal(file.complete, false);
    assert.match(run.stdout, /INCOMPLETE; stopped: --max-cost/);
  });
});

test("a model Loom cannot reach ends loom eval before any run: one line, exit 3, no output folder", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-eval-key-"));
  try {
    const { io, out } = fakeIo({ cwd: ROOT, env: { PATH: process.env.PATH } });
    const code = await main(["eval", "evals/", "-m", "anthropic/claude-sonnet-5-5", "--out", join(dir, "out")], io);
    assert.equal(code, 3);
    assert.match(out.stderr, /^loom eval: .*needs an API key: set the environment variable ANTHROPIC_API_KEY\n$/);
    assert.equal(existsSync(join(dir, "out")), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("loom eval --help lists every flag of its spec; bad flags are one-line usage errors", async () => {
  const { EVAL_SPEC } = await import("../commands/specs.ts");
  const { io, out } = fakeIo({ cwd: ROOT });
  assert.equal(await main(["eval", "--help"], io), 0);
  for (const name of Object.keys(EVAL_SPEC.flags)) assert.ok(out.stdout.includes(`--${name}`), `--${name} in the help`);
  const cases: [string[], RegExp][] = [
    [["evals/"], /Missing --model/],
    [["evals/", "--model", "m/x", "--shard", "3/2"], /--shard "3\/2": expected i\/n/],
    [["evals/", "--model", "m/x", "--policies", "legacy,lean"], /unknown policy "lean"/],
    [["evals/", "--model", "m/x", "--repeats", "0"], /--repeats "0": expected a whole number ≥ 1/],
    [["evals/", "--model", "m/x", "--task", "nope"], /--task "nope": no such task/],
    [["evals/", "--model", "m/x", "--step-protocol", "one-call"], /--step-protocol "one-call": expected two-call or/],
  ];
  for (const [args, pattern] of cases) {
    const bad = fakeIo({ cwd: ROOT });
    assert.equal(await main(["eval", ...args], bad.io), 2, args.join(" "));
    assert.match(bad.out.stderr, pattern);
    assert.equal(bad.out.stderr.trim().split("\n").length, 1);
  }
});

test(
  "--run-timeout caps every run alike: a run stopped at the cap is checked as it is, and the eval goes on",
  SLOW,
  async () => {
    await withAgent({ latencyMs: 400 }, async (agent, dir) => {
      const out = join(dir, "out");
      const run = await loomEval(agent, [
        "evals/",
        "--model",
        MODEL,
        "--task",
        "range-off-by-one",
        "--run-timeout",
        "1",
        "--out",
        out,
        "--quiet",
      ]);
      assert.equal(run.code, 0, run.stderr);
      const rows = readEval(out).rows;
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.deepEqual([row.outcome, row.error_code, row.class, row.counted], [
          "interrupted",
          "run_timeout",
          "unsolved",
          true,
        ]);
        assert.ok(row.wall_ms < 5000, `${row.wall_ms} ms`);
      }
    });
  },
);

test(
  "an interrupt keeps what the run in flight spent: every call the model answered is in eval.json; --resume re-runs it without using up a retry",
  SLOW,
  async () => {
    await withAgent({}, async (agent, dir) => {
      // The first run_tests writes the flag and waits to be killed; once the flag is there, the tests pass at once.
      const flag = join(dir, "in-tests");
      const wait =
        `const fs = require("fs"); const f = ${JSON.stringify(flag)}; if (fs.existsSync(f)) process.exit(0); ` +
        `fs.writeFileSync(f, ""); setTimeout(() => {}, 600000);`;
      const suite = copySuite(dir, ["range-off-by-one"], (s) => {
        s.tasks[0].test = { command: ["node", "-e", wait], timeout_ms: 600_000 };
      });
      const out = join(dir, "out");
      const args = [
        suite,
        "--model",
        MODEL,
        "--policies",
        "legacy,bounded",
        "--sandbox",
        "off",
        "--out",
        out,
        "--quiet",
      ];
      const controller = new AbortController();
      // Interrupted while the first run waits in its tests: no model call is in flight.
      const watching = setInterval(() => existsSync(flag) && controller.abort(), 5);
      const first = await loomEval(agent, args, { signal: controller.signal });
      clearInterval(watching);
      assert.equal(first.code, 130, first.stderr);
      const answered = sum([...agent.calls.values()]);
      const partial = readEval(out);
      assert.equal(partial.stopped, "interrupted");
      const [row, ...rest] = partial.rows;
      assert.equal(rest.length, 0, "one run was in flight, the other half never started");
      assert.ok(row && answered > 0);
      assert.equal(row.outcome, "interrupted");
      assert.equal(row.error_code, "interrupted");
      assert.equal(row.counted, false);
      assert.equal(row.check, null);
      assert.equal(row.model_calls, answered, "every call the model answered is accounted for");
      assert.deepEqual(row.cost, report(out, row).cost);
      assert.ok((row.cost?.total ?? 0) > 0);
      assert.equal(partial.summary.runs, 0);
      assert.equal(partial.summary.attempts, 1);

      // With --retries 0 too, the interrupted attempt used up nothing; the pair runs again as attempt 2 and is counted.
      const again = await loomEval(agent, [...args, "--resume"]);
      assert.equal(again.code, 0, again.stderr);
      const full = readEval(out);
      assert.ok(full.complete);
      assert.deepEqual(full.rows.find((r) => r.attempt === 1), row, "the interrupted run's row is kept");
      assert.deepEqual(full.rows.filter((r) => r.counted).map((r) => r.attempt), [2, 2]);
      assert.equal(full.summary.attempts, 3);
      assert.equal(full.summary.infra_retries, 0, "a re-run after an interrupt is not an infra retry");
      assert.deepEqual(full.summary.dropped_pairs, []);
      assert.equal(sum(full.rows.map((r) => r.model_calls)), sum([...agent.calls.values()]));
    });
  },
);
