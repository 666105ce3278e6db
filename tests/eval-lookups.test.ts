// The stand-in agent that asks a lookup when its clue is not in view: bounded then solves the task whose clue sits in
// the middle of a long test output, at the price of the lookup's extra call — the trade the policy is built on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import type { EvalFile } from "../lib/eval/eval-file.ts";
import { startEvalAgent } from "./helpers/eval-agent.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { ROOT } from "./helpers/binary.ts";

test("with lookups the stand-in solves clue-in-test-output under bounded too, by reading the output back", {
  timeout: 600_000,
}, async () => {
  const agent = await startEvalAgent({ lookups: true });
  const dir = mkdtempSync(join(tmpdir(), "loom-eval-lookups-"));
  try {
    const { io, out } = fakeIo({
      cwd: ROOT,
      env: { PATH: process.env.PATH, ANTHROPIC_BASE_URL: agent.server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-lookups" },
    });
    const code = await main(
      [
        "eval",
        "evals/",
        "--model",
        "anthropic/claude-sonnet-5-5",
        "--task",
        "clue-in-test-output",
        "--out",
        join(dir, "out"),
        "--quiet",
      ],
      io,
    );
    assert.equal(code, 0, out.stderr);
    const file: EvalFile = JSON.parse(readFileSync(join(dir, "out", "eval.json"), "utf8"));
    const row = (policy: string) => file.rows.find((r) => r.policy === policy)!;
    assert.equal(row("legacy").class, "solved");
    assert.equal(row("legacy").lookups, 0, "legacy shows the whole output: nothing to look up");
    assert.equal(row("bounded").class, "solved");
    // One lookup reads the clue back (the process runner keeps the whole ~29 KB output however loaded the machine).
    assert.equal(row("bounded").lookups, 1);
    assert.ok(row("bounded").model_calls > row("legacy").model_calls, "the lookup is one more call");
    assert.deepEqual(file.summary.pairs[0].disagreements, []);
  } finally {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
