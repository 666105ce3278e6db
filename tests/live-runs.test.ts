// Runs against the real llama-server (tests/helpers/live-server.ts). What is asserted is what Loom guarantees, never
// what a 135M model decides: the reports are valid and count exactly what the server reported; every bounded request
// fits the server's context; a transcript that outgrows it ends legacy with provider_context_exceeded (report written,
// edits kept) while bounded runs on. Steps are few and each call's output is capped, so the file stays within minutes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runWithOptions } from "../api.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import { ContextReport } from "../lib/report/context-report.ts";
import type { SliceRequest } from "../lib/slice.ts";
import {
  capturing,
  LIVE_SKIP_REASON,
  LIVE_TEST_TIMEOUT_MS,
  type LiveServer,
  liveServer,
  serverUsageOf,
} from "./helpers/live-server.ts";
import type { TurnRequest } from "../lib/vocabulary/turn.ts";

const live = liveServer();
if (!live) console.log(`live-runs.test.ts: skipping — ${LIVE_SKIP_REASON}`);
const options = { skip: live === null, timeout: LIVE_TEST_TIMEOUT_MS };

const project = fileURLToPath(new URL("../testdata/example-project", import.meta.url));

function providerOf(server: LiveServer) {
  return createProvider({ kind: "openai-compatible", model: server.model, base_url: server.baseUrl }, { env: {} });
}

function request(server: LiveServer, workspace: string, overrides: Partial<SliceRequest> = {}): SliceRequest {
  return {
    intent: "Make the tests pass.",
    instructions: "Work in small steps. Read the failing test's output, then fix the code.",
    workspace,
    actions: ["read_file", "list_files", "edit_file", "run_tests"],
    test: { command: ["node", "test.mjs"], timeout_ms: 60_000 },
    model: `openai-compatible/${server.model}`,
    limits: { max_steps: 1 },
    ...overrides,
  };
}

/** The report's calls that the server answered are, in order, exactly what it reported. */
function assertCountsAreTheServers(report: ContextReport, answers: { raw: unknown }[]) {
  const answered = report.calls.filter((c) => c.usage.input !== null);
  assert.equal(answered.length, answers.length);
  answered.forEach((call, i) => {
    const server = serverUsageOf(answers[i]?.raw);
    assert.equal((call.usage.input ?? 0) + (call.usage.cache_read ?? 0), server.prompt_tokens, `call ${i + 1}`);
    assert.equal(call.usage.cache_read, server.cached_tokens, `call ${i + 1}`);
    assert.equal(call.usage.output, server.completion_tokens, `call ${i + 1}`);
    assert.equal(call.timings?.cache_n, server.cached_tokens, `call ${i + 1}`);
  });
  assert.equal(report.cost, null, "a local run's cost is tokens and seconds, never dollars");
}

test("a short task, bounded and legacy: valid reports whose counters are the server's usage", options, async () => {
  if (!live) return;
  const dir = mkdtempSync(join(tmpdir(), "loom-live-short-"));
  try {
    for (const policy of ["bounded", "legacy"] as const) {
      const ws = join(dir, policy);
      cpSync(project, ws, { recursive: true });
      const { provider, answers } = capturing(providerOf(live));
      const reportPath = join(dir, `${policy}.json`);
      const result = await runWithOptions(request(live, ws), {
        contextPolicy: policy,
        contextReport: reportPath,
        provider,
        sandbox: "off",
      });
      const report = ContextReport.parse(JSON.parse(readFileSync(reportPath, "utf8")));
      assert.equal(report.outcome, result.outcome);
      assert.notEqual(report.error?.code, "provider_context_exceeded");
      assert.ok(report.model_calls >= 1);
      assertCountsAreTheServers(report, answers);
      if (policy === "bounded") {
        const budget = report.context_budget;
        assert.ok(budget, "an 8K-context server sizes the bounded budget");
        for (const call of report.calls) assert.ok(call.request_bytes <= budget.ceiling_bytes);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A test whose output is about 36 KB of different text on every run (some 9,000 tokens), and that fails: one run_tests
 * step puts that in a legacy transcript, which then outgrows an 8,192-token context; bounded shows 8 KiB of it.
 */
const NOISY_TEST = "const run = Date.now();\n" +
  "for (let i = 0; i < 480; i++) console.log(`check ${i} of run ${run}: expected the loom to weave step ${i}, " +
  "got a dropped thread`);\nprocess.exit(1);\n";

/** The decisions of the long task: write note.txt once, then run the tests on every step. */
function steer() {
  let selections = 0;
  return (request: TurnRequest, _value: unknown) => {
    if (request.phase === "arguments") return { path: "note.txt", content: "kept\n" };
    selections += 1;
    return selections === 1 ? { action: "write_file" } : { action: "run_tests" };
  };
}

test(
  "a long task: legacy outgrows the server's context and ends provider_context_exceeded, report written and edits " +
    "kept; bounded runs on, every request within the context",
  options,
  async () => {
    if (!live) return;
    const dir = mkdtempSync(join(tmpdir(), "loom-live-long-"));
    try {
      const run = async (policy: "legacy" | "bounded", maxSteps: number) => {
        const ws = join(dir, policy);
        cpSync(project, ws, { recursive: true });
        writeFileSync(join(ws, "test.mjs"), NOISY_TEST);
        // The server answers every request for real; only the decision is the test's, so the transcript grows the
        // same way whatever the model picks.
        const { provider, answers } = capturing(providerOf(live), { steer: steer() });
        const reportPath = join(dir, `${policy}.json`);
        await runWithOptions(
          request(live, ws, { actions: ["write_file", "run_tests"], limits: { max_steps: maxSteps } }),
          { contextPolicy: policy, contextReport: reportPath, provider, sandbox: "off" },
        );
        const report = ContextReport.parse(JSON.parse(readFileSync(reportPath, "utf8")));
        return { report, answers, note: readFileSync(join(ws, "note.txt"), "utf8") };
      };
      // Step 1 writes note.txt, step 2 runs the tests, step 3's first call carries their whole output.
      const legacy = await run("legacy", 3);
      assert.equal(legacy.report.outcome, "failed");
      assert.equal(legacy.report.error?.code, "provider_context_exceeded");
      assert.equal(legacy.note, "kept\n", "the edit made before the overflow is kept");
      assertCountsAreTheServers(legacy.report, legacy.answers);

      assert.equal(legacy.report.steps, 3, "the call that outgrew the context was step 3's");
      // Bounded makes the call legacy could not, every request within the context.
      const bounded = await run("bounded", 3);
      assert.equal(bounded.report.outcome, "step_limit", JSON.stringify(bounded.report.error));
      assert.equal(bounded.note, "kept\n");
      const budget = bounded.report.context_budget;
      assert.ok(budget);
      for (const call of bounded.report.calls) assert.ok(call.request_bytes <= budget.ceiling_bytes);
      for (const { raw } of bounded.answers) {
        const server = serverUsageOf(raw);
        assert.ok(server.prompt_tokens + budget.output_tokens <= budget.context_tokens, "prompt and answer fit");
      }
      assertCountsAreTheServers(bounded.report, bounded.answers);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
