// An empty argument is a usage error, never "the current folder"; --sandbox takes only its three modes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runLoom } from "./helpers/binary.ts";

test("dist/loom refuses empty path arguments and empty flag values with exit 2", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-empty-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A recording in the current folder: `replay ""` must not find and replay it.
  writeFileSync(join(dir, "a.jsonl"), "");
  for (
    const args of [
      ["replay", ""],
      ["replay", "a.jsonl", "--context-report", ""],
      ["run", ""],
      ["run", "request.json", "--record", ""],
      ["report", ""],
    ]
  ) {
    const run = await runLoom(args, { cwd: dir });
    assert.equal(run.code, 2, `${JSON.stringify(args)}: ${run.stderr}`);
    assert.match(run.stderr, /is empty/, JSON.stringify(args));
  }
});

test("dist/loom --sandbox accepts auto, required and off only", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-sandbox-flag-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const run = await runLoom(["run", "request.json", "--sandbox", "maybe"], { cwd: dir });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /--sandbox "maybe": expected one of auto, required, off/);
});
