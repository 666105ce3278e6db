// What a run cost, as its outputs say it: a replay's cost is marked recorded in --json and stream-json (issue 43), and
// a run without a price (a local model) says its time and tokens in its terminal summary (issues 43 and 44).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { renderResultText, type ResultSummary } from "../commands/reporter.ts";
import { RunEvent, RunResultEvent } from "../lib/run-events.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { ROOT } from "./helpers/binary.ts";
import { startLlamaCppStandIn } from "./helpers/local-server-stand-ins.ts";

/** The shipped fix-bug recording with usage counters on every answer, so its model's price gives it a cost. */
function pricedRecording(dir: string): string {
  const lines = readFileSync(join(ROOT, "testdata", "workflows", "fix-bug.jsonl"), "utf8").trimEnd().split("\n");
  const priced = lines.map((line) => {
    const entry = JSON.parse(line);
    if (entry.type === "answer") entry.usage = { input: 1200, cache_read: 0, cache_write: 0, output: 80 };
    return JSON.stringify(entry);
  });
  const path = join(dir, "priced.jsonl");
  writeFileSync(path, `${priced.join("\n")}\n`);
  return path;
}

async function replay(args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "loom-run-time-cost-"));
  try {
    const { io, out } = fakeIo({ cwd: ROOT });
    const code = await main(["replay", pricedRecording(dir), "--quiet", ...args], io);
    return { code, ...out };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("loom replay --json marks its cost recorded: the recorded run's calls, not money spent now", async () => {
  const { code, stdout, stderr } = await replay(["--json"]);
  assert.equal(code, 0, stderr);
  const result = RunResultEvent.parse(JSON.parse(stdout));
  assert.ok(result.cost);
  assert.ok(result.cost.total > 0);
  assert.equal(result.cost.recorded, true);
});

test("loom replay --output-format stream-json marks the cost of run-ended and result recorded", async () => {
  const { code, stdout, stderr } = await replay(["--output-format", "stream-json"]);
  assert.equal(code, 0, stderr);
  const events = stdout.trim().split("\n").map((line) => JSON.parse(line));
  const ended = RunEvent.parse(events.find((e) => e.type === "run-ended"));
  assert.ok(ended.type === "run-ended");
  const result = RunResultEvent.parse(events.find((e) => e.type === "result"));
  assert.equal(ended.cost?.recorded, true);
  assert.equal(result.cost?.recorded, true);
});

const summary = (over: Partial<ResultSummary>): ResultSummary => ({
  type: "result",
  format_version: 1,
  outcome: "completed",
  exit_code: 0,
  slice: null,
  status: "success",
  summary: null,
  steps: 3,
  revision: "r1",
  last_test: null,
  tests_current: false,
  verified: false,
  printed: [],
  error: null,
  model_calls: 3,
  request_bytes: { total: 30, max: 10 },
  usage: { input: 9120, cache_read: 4000, cache_write: null, output: 310 },
  duration_ms: 23_456,
  report_path: null,
  cost: null,
  ...over,
});

test("a run without a price says its time and tokens in the terminal summary", () => {
  const text = renderResultText(summary({}), { label: "loom run" });
  assert.match(
    text,
    /^ {2}time: 23\.5 s; tokens: 9,120 input, 4,000 read from the cache, 310 output \(no price: the cost is the time\)$/m,
  );
});

test("a priced run says its cost, not its time; a replay never says the replay's time as a cost", () => {
  const cost = {
    currency: "USD" as const,
    input: 0.01,
    cache_read: 0,
    cache_write: 0,
    output: 0.0052,
    total: 0.0152,
    prices: { source: "built-in", date: "2026-12-01" },
  };
  assert.doesNotMatch(renderResultText(summary({ cost }), { label: "loom run" }), /time:/);
  assert.doesNotMatch(renderResultText(summary({}), { label: "replay r.jsonl", recorded: true }), /time:/);
});

test("loom run against a local server (no price) ends with its time and tokens in the text summary", async () => {
  const server = await startLlamaCppStandIn({
    contextSize: 16_384,
    answer: () => ({ answer: { action: "finish", args: { status: "failure", summary: "looked only" } } }),
  });
  const dir = mkdtempSync(join(tmpdir(), "loom-run-time-"));
  try {
    mkdirSync(join(dir, "ws"));
    writeFileSync(join(dir, "ws", "a.txt"), "a\n");
    const { io, out } = fakeIo({ cwd: dir });
    const code = await main([
      "run",
      "Look at a.txt",
      "--model",
      "openai-compatible/local",
      "--base-url",
      server.baseUrl,
      "--workspace",
      "ws",
      "--test-command",
      "node -e 0",
      "--step-protocol",
      "single-call",
      "--max-steps",
      "2",
      "--quiet",
    ], io);
    assert.equal(code, 0, out.stderr);
    assert.match(
      out.stdout,
      /^ {2}time: \d+\.\d+ s; tokens: [\d,]+ input, [\d,]+ output \(no price: the cost is the time\)$/m,
    );
    assert.doesNotMatch(out.stdout, /cost:/);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
