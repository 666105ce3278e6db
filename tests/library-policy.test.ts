// The library's policy (SPEC §10): run() is legacy, and runWithOptions() runs the policy its options name, else
// legacy. A library call reads neither LOOM_CONTEXT_POLICY nor the user's config file: a program's runs do not change
// with the shell that starts it. (The commands do read both: tests/config.test.ts.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { run, runWithOptions } from "../api.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { give, pick, sliceRequest } from "./helpers/loop-builders.ts";

const finished = () => new ScriptedProvider([pick("finish"), give({ status: "success", summary: "done" })]);

test("run() is legacy and runWithOptions() without a policy is legacy, even with LOOM_CONTEXT_POLICY=bounded set", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-library-policy-"));
  const saved = process.env.LOOM_CONTEXT_POLICY;
  process.env.LOOM_CONTEXT_POLICY = "bounded";
  try {
    const request = sliceRequest({ workspace: dir });
    const plain = await run(request, { provider: finished() });
    assert.equal(plain.outcome, "completed", plain.error?.message);
    assert.equal(plain.report.policy, "legacy", "run() is legacy (SPEC §10)");
    const unnamed = await runWithOptions(request, { provider: finished(), sandbox: "off", warn: () => {} });
    assert.equal(unnamed.report.policy, "legacy", "no policy in the options: legacy, not the environment's");
    const named = await runWithOptions(request, {
      provider: finished(),
      sandbox: "off",
      warn: () => {},
      contextPolicy: "bounded",
    });
    assert.equal(named.report.policy, "bounded", "the options' policy is run");
    // A JavaScript caller's stray option does not reach run(): it stays legacy.
    const stray = await run(request, { provider: finished(), contextPolicy: "bounded" } as never);
    assert.equal(stray.report.policy, "legacy");
  } finally {
    if (saved === undefined) delete process.env.LOOM_CONTEXT_POLICY;
    else process.env.LOOM_CONTEXT_POLICY = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});
