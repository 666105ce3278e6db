// loom eval's pre-flight line says what it can: the most model calls the matrix can send, and a cost estimate only
// for the models with a price. A model without one (a local server's) is said to be not estimated, never "$0.00",
// and the progress line shows no money for it either. The evaluation is interrupted before its first run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

async function preflight(model: string): Promise<{ code: number; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), "loom-preflight-"));
  try {
    const stopped = new AbortController();
    stopped.abort();
    const { io, out } = fakeIo({
      cwd: ROOT,
      signal: stopped.signal,
      env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: "sk-ant-preflight-test" },
    });
    const args = ["evals/", "--task", "range-off-by-one", "--model", model, "--sandbox", "off", "--out", dir];
    const code = await main(["eval", ...args], io);
    return { code, stderr: out.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("pre-flight: a priced model gets an estimate; a local model is not estimated and shows no money", async () => {
  const priced = await preflight("anthropic/claude-sonnet-5-5");
  const [line] = priced.stderr.split("\n");
  // One task, two policies, one repeat: 2 runs; its step limit × 2 calls per step × 2 policies.
  assert.match(line ?? "", /≈ 2 runs, at most \d+ model calls/);
  assert.match(line ?? "", /pre-flight cost estimate ≤ \$\d+\.\d\d \(/);
  assert.doesNotMatch(line ?? "", /no price/);
  assert.match(priced.stderr, /^eval: 0\/2 runs · 0 solved · 0 infra · \$0\.0000 spent/m);

  const local = await preflight("openai-compatible/my-local-model");
  const [first] = local.stderr.split("\n");
  assert.match(first ?? "", /≈ 2 runs, at most \d+ model calls/);
  assert.doesNotMatch(local.stderr, /\$0\.00/, "no money is claimed for a model without a price");
  assert.match(
    first ?? "",
    /no price for openai-compatible\/my-local-model: not estimated \(cost: null; a local server/,
  );
  assert.match(local.stderr, /^eval: 0\/2 runs · 0 solved · 0 infra · no price · /m);
  // The interrupted evaluation ends as one (130), the same for both.
  assert.equal(priced.code, local.code);
});
