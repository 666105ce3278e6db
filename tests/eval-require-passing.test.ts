// A suite may ask that a finish with status success needs passing tests (require_passing_tests, as loom run's flag):
// the live recordings showed a small model claiming success right after a failing test run, under both policies, and
// Loom's refusal tells it why. The setting reaches each run's request (its recording's header), and only where asked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { parseSuite, resolveTask } from "../lib/eval/suite.ts";
import { startEvalAgent, SUITE_DIR } from "./helpers/eval-agent.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const CHECK = { command: ["true"], timeout_ms: 1_000 };

test("require_passing_tests: off unless asked; the suite's default, a task's own over it", () => {
  const suite = parseSuite(
    JSON.stringify({
      name: "s",
      defaults: { require_passing_tests: true },
      tasks: [
        { id: "a", intent: "x", workspace: "w", check: CHECK },
        { id: "b", intent: "x", workspace: "w", check: CHECK, require_passing_tests: false },
      ],
    }),
    { file: "s.jsonc" },
  );
  assert.deepEqual(suite.tasks.map((task) => resolveTask(suite, task).require_passing_tests), [true, false]);
  const plain = parseSuite(
    JSON.stringify({ name: "s", tasks: [{ id: "a", intent: "x", workspace: "w", check: CHECK }] }),
    { file: "s.jsonc" },
  );
  assert.equal(resolveTask(plain, plain.tasks[0]!).require_passing_tests, false);
});

test("an eval whose suite asks for passing tests sends each run a request that requires them", {
  timeout: 600_000,
}, async () => {
  const agent = await startEvalAgent();
  const dir = mkdtempSync(join(tmpdir(), "loom-eval-require-"));
  try {
    cpSync(SUITE_DIR, join(dir, "evals"), { recursive: true });
    const suitePath = join(dir, "evals", "suite.jsonc");
    const source = readFileSync(suitePath, "utf8");
    const header = (out: string) => {
      const runs = join(out, "runs");
      return readdirSync(runs).map((run) => {
        const first = readFileSync(join(runs, run, "attempt-1", "recording.jsonl"), "utf8").split("\n")[0]!;
        return JSON.parse(first).slice.require_passing_tests;
      });
    };
    const evaluate = async (out: string) => {
      const { io, out: printed } = fakeIo({
        cwd: dir,
        env: { PATH: process.env.PATH, ANTHROPIC_BASE_URL: agent.server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-require" },
      });
      const args = [
        "eval",
        "evals/suite.jsonc",
        "--model",
        "anthropic/claude-sonnet-5-5",
        "--task",
        "range-off-by-one",
      ];
      const code = await main([...args, "--out", out, "--quiet"], io);
      assert.equal(code, 0, printed.stderr);
    };
    await evaluate(join(dir, "plain"));
    assert.deepEqual(header(join(dir, "plain")), [undefined, undefined]);
    assert.ok(source.includes('"defaults": {'), "suite.jsonc has defaults");
    writeFileSync(suitePath, source.replace('"defaults": {', '"defaults": {\n    "require_passing_tests": true,'));
    await evaluate(join(dir, "required"));
    assert.deepEqual(header(join(dir, "required")), [true, true]);
  } finally {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
