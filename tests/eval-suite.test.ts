// Suites: the schema's errors, and `loom eval validate`, which proves every shipped task's hidden check honest and
// catches checks that are not.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { parseSuite } from "../lib/eval/suite.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { ROOT } from "./helpers/binary.ts";
import { SUITE_DIR } from "./helpers/eval-agent.ts";

const SLOW = { timeout: 600_000 };

async function loom(args: string[], cwd = ROOT) {
  const { io, out } = fakeIo({ cwd, env: { PATH: process.env.PATH } });
  const code = await main(args, io);
  return { code, ...out };
}

test("suite errors name the file, the task and the field", () => {
  const bad = (suite: unknown) => {
    try {
      parseSuite(JSON.stringify(suite), { file: "s.jsonc" });
    } catch (error) {
      return (error as Error).message;
    }
    assert.fail("expected the suite to be refused");
  };
  const task = { id: "a", intent: "x", workspace: "w", check: { command: ["true"], timeout_ms: 1 } };
  assert.match(bad({ tasks: [task, { ...task, id: "b", colour: 1 }] }), /task "b" \(tasks\[1\]\)\.colour: unknown key/);
  assert.match(bad({ tasks: [task, task] }), /task "a" \(tasks\[1\]\)\.id: duplicate task id/);
  assert.match(
    bad({ tasks: [{ ...task, git: { repo: "r", commit: "abc1234" } }] }),
    /expected exactly one of workspace or git/,
  );
  assert.match(
    bad({ tasks: [{ ...task, check: { command: [] } }] }),
    /check\.command: .*; .*check\.timeout_ms: required field missing/,
  );
  assert.match(
    parseSuite('// a comment\n{"tasks": [' + JSON.stringify(task) + ",]}", { file: "s" }).tasks[0].id,
    /^a$/,
  );
});

test(
  "loom eval validate proves every shipped task: its check fails on the start, a do-nothing and a test-only agent, and passes its reference 3 times out of 3",
  SLOW,
  async () => {
    const run = await loom(["eval", "validate", "evals/", "--jobs", "2"]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(run.stdout.split("\n").filter((line) => line.startsWith("ok   ")).length, 12);
    assert.match(run.stdout, /^12\/12 tasks valid$/m);
  },
);

test(
  "loom eval validate catches dishonest checks: one that always passes, one fooled by editing the test, one that skips",
  SLOW,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "loom-validate-test-"));
    try {
      cpSync(join(SUITE_DIR, "tasks", "range-off-by-one"), join(dir, "range"), { recursive: true });
      writeFileSync(join(dir, "range", "check", "always.mjs"), "console.log('fine');\n");
      writeFileSync(join(dir, "range", "check", "skips.mjs"), "console.log('# tests 2\\n# pass 1\\n# skipped 1');\n");
      const base = { workspace: "range/workspace", solution: "range/solution" };
      const check = (command: string[]) => ({ command, timeout_ms: 20_000, files: "range/check" });
      writeFileSync(
        join(dir, "suite.json"),
        JSON.stringify({
          defaults: { test: { command: ["node", "test.mjs"], timeout_ms: 20_000 } },
          tasks: [
            { id: "honest", intent: "fix range", ...base, check: check(["node", "{check}/check.mjs"]) },
            { id: "always", intent: "fix range", ...base, check: check(["node", "{check}/always.mjs"]) },
            {
              id: "test-only",
              intent: "fix range",
              ...base,
              check: { command: ["node", "test.mjs"], timeout_ms: 20_000 },
            },
            { id: "skips", intent: "fix range", ...base, check: check(["node", "{check}/skips.mjs"]) },
          ],
        }),
      );
      const run = await loom(["eval", "validate", join(dir, "suite.json"), "--jobs", "2"]);
      assert.equal(run.code, 1);
      assert.match(run.stdout, /^ok {3}honest$/m);
      assert.match(
        run.stdout,
        /^FAIL always: the check passes on the initial workspace; the check passes on a do-nothing/m,
      );
      assert.match(
        run.stdout,
        /^FAIL test-only: .*the check passes on a workspace whose visible test was edited to pass/m,
      );
      assert.match(run.stdout, /^FAIL skips: the check fails on the reference solution \(skipped tests/m);

      // The hidden check must live outside the workspace.
      writeFileSync(
        join(dir, "inside.json"),
        JSON.stringify({
          defaults: { test: { command: ["node", "test.mjs"], timeout_ms: 20_000 } },
          tasks: [{ id: "inside", intent: "x", ...base, check: { ...check(["true"]), files: "range/workspace/src" } }],
        }),
      );
      const inside = await loom(["eval", "validate", join(dir, "inside.json")]);
      assert.equal(inside.code, 2);
      assert.match(inside.stderr, /task "inside": check\.files: the hidden check must live outside the workspace/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test("a task's workspace can be a commit of a local git repository, checked out without network", SLOW, async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-validate-git-"));
  try {
    const repo = join(dir, "repo");
    mkdirSync(repo);
    cpSync(join(SUITE_DIR, "tasks", "range-off-by-one", "workspace"), repo, { recursive: true });
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
        cwd: repo,
        encoding: "utf8",
      });
    git("init", "-q");
    git("add", ".");
    git("commit", "-qm", "start");
    const commit = git("rev-parse", "HEAD").trim();
    // A later commit that fixes the bug must not be what the task sees.
    cpSync(join(SUITE_DIR, "tasks", "range-off-by-one", "solution"), repo, { recursive: true });
    git("commit", "-qam", "fixed");
    cpSync(join(SUITE_DIR, "tasks", "range-off-by-one", "check"), join(dir, "check"), { recursive: true });
    cpSync(join(SUITE_DIR, "tasks", "range-off-by-one", "solution"), join(dir, "solution"), { recursive: true });
    writeFileSync(
      join(dir, "suite.json"),
      JSON.stringify({
        tasks: [{
          id: "range-from-git",
          intent: "fix range",
          git: { repo: "repo", commit },
          solution: "solution",
          test: { command: ["node", "test.mjs"], timeout_ms: 20_000 },
          check: { command: ["node", "{check}/check.mjs"], timeout_ms: 20_000, files: "check" },
        }],
      }),
    );
    const run = await loom(["eval", "validate", join(dir, "suite.json")]);
    assert.equal(run.code, 0, run.stdout);
    assert.match(run.stdout, /^ok {3}range-from-git$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
