// A suite task may name a catalog slice: its instructions, actions, test, limits and commands come from the slice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadSuiteFile } from "../lib/eval/run/eval-suite-file.ts";
import { ROOT } from "./helpers/binary.ts";

test("a task that names a catalog slice takes the slice's settings; an unknown slice names the task and the field", () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-eval-slice-"));
  try {
    const task = (name: string) => ({
      id: "from-slice",
      intent: "Fix slugify",
      workspace: resolve(ROOT, "testdata/example-project"),
      slice: { catalog: resolve(ROOT, "testdata/catalog/example.jsonc"), name },
      check: { command: ["node", "test.mjs"], timeout_ms: 10_000 },
    });
    writeFileSync(join(dir, "suite.json"), JSON.stringify({ tasks: [task("fix-tests")] }));
    const [resolved] = loadSuiteFile("suite.json", { cwd: dir, allowOutside: true }).tasks;
    assert.match(resolved.instructions, /^You work on a small Node library/);
    assert.deepEqual(resolved.actions, [
      "read_file",
      "list_files",
      "search",
      "edit_file",
      "run_tests",
      "run_command",
      "finish",
    ]);
    assert.equal(resolved.max_steps, 20);
    assert.deepEqual(resolved.commands, [["node", "--version"]]);
    assert.deepEqual(resolved.test, { command: ["node", "test.mjs"], timeout_ms: 30000 });

    writeFileSync(join(dir, "bad.json"), JSON.stringify({ tasks: [task("fix-test")] }));
    assert.throws(
      () => loadSuiteFile("bad.json", { cwd: dir, allowOutside: true }),
      /Invalid suite "bad.json": task "from-slice": slice.name: no slice "fix-test" in/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
