// Deeply nested JSON from a recording, a trajectory or a provider is refused as invalid input, never a stack overflow.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonDepth, MAX_JSON_DEPTH } from "../lib/text/json-depth.ts";
import { ROOT, runLoom } from "./helpers/binary.ts";

test("jsonDepth counts brackets outside strings only", () => {
  assert.equal(jsonDepth('{"a":[1,{"b":"[[[{{{\\"]]"}]}'), 3);
  assert.equal(jsonDepth("[]"), 1);
  assert.equal(jsonDepth('"x"'), 0);
});

const NO_USAGE = { input: null, cache_read: null, cache_write: null, output: null };

test("dist/loom replay of an answer nested 60,000 levels deep is a usage error (exit 2), not an internal error", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-deep-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const header = readFileSync(join(ROOT, "testdata/workflows/fix-bug.jsonl"), "utf8").split("\n")[0];
  for (
    const [name, value] of [["arrays", "[".repeat(60_000) + "]".repeat(60_000)], [
      "objects",
      '{"a":'.repeat(60_000) + "1" + "}".repeat(60_000),
    ]]
  ) {
    const answer = `{"type":"answer","phase":"selection","step":1,"value":${value},"usage":${
      JSON.stringify(NO_USAGE)
    }}`;
    writeFileSync(join(dir, `${name}.jsonl`), `${header}\n${answer}\n`);
    const run = await runLoom(["replay", `${name}.jsonl`, "--quiet"], { cwd: dir });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, new RegExp(`nested deeper than ${MAX_JSON_DEPTH} levels`));
  }
});

test("dist/loom replay --from auto of a trajectory nested 60,000 levels deep is a usage error", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-deep-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "traj.json"), `{"messages":${"[".repeat(60_000)}${"]".repeat(60_000)}}`);
  const run = await runLoom(["replay", "--from", "mini-swe-agent", "traj.json", "--quiet"], { cwd: dir });
  assert.equal(run.code, 2, run.stderr);
  assert.doesNotMatch(run.stderr, /internal|call stack/i);
});
