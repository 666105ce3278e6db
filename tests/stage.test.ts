// The stage (ask, validate, lookups, re-ask), recording as wrappers around the provider and the executor, and the
// calls a report counts: a sent call that failed, and a catalog run's classification call, recorded and replayed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { runPlan } from "../lib/run/run-plan.ts";
import { resolveSettings } from "../lib/settings/settings.ts";
import { ProviderError } from "../lib/errors.ts";
import type { Executor } from "../lib/vocabulary/executor.ts";
import { RecordingExecutor, RecordingProvider } from "../lib/recording/recorder.ts";
import { parseRecording, type RecordingEntry } from "../lib/recording/recording.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { ResultStore } from "../lib/context/store.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../lib/vocabulary/turn.ts";
import { openAIAnswer, startOpenAIServer } from "./helpers/fake-provider-servers.ts";
import { answer, give, pick, runLoopReported, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";

const finish = [pick("finish"), give({ status: "success", summary: "done" })];

function loop(
  provider: Provider,
  store = new ResultStore(),
  executor: Executor = new ScriptedExecutor(store, ["out"]),
) {
  let t = 0;
  return runLoopReported(sliceRequest(), {
    policy: "bounded",
    provider,
    executor,
    store,
    now: () => (t += 1),
    version: "test",
  });
}

test("an answer cut at max_tokens refuses the step as answer_truncated, without a re-ask", async () => {
  const cut = { ...answer("arguments", '{"path": "src/'), stop_reason: "max_tokens" as const };
  const provider = new ScriptedProvider([pick("read_file"), cut, ...finish], { keepRequests: true });
  const result = await loop(provider);
  assert.equal(result.outcome, "completed");
  const refusal = result.reports[0];
  assert.equal(refusal.kind, "refusal");
  assert.equal(refusal.kind === "refusal" && refusal.code, "answer_truncated");
  assert.match(refusal.kind === "refusal" ? refusal.reason : "", /max_tokens/);
  // selection, the cut arguments answer, then the next step: no second arguments request.
  assert.deepEqual(provider.requests.map((r) => r.phase), ["selection", "arguments", "selection", "arguments"]);
});

test("an invalid answer that was not cut is re-asked once, then refused as invalid_answer", async () => {
  const provider = new ScriptedProvider([pick("read_file"), give({}), give({}), ...finish]);
  const result = await loop(provider);
  const refusal = result.reports[0];
  assert.equal(refusal.kind === "refusal" && refusal.code, "invalid_answer");
});

test("a call that was sent and failed counts in the report: bytes and elapsed, no usage", async () => {
  const failing: Provider = {
    name: "failing",
    capabilities: { prompt_caching: false, schema_enforcement: false },
    complete: () => Promise.reject(new ProviderError("Server error 500", { code: "provider_server_error" })),
  };
  const result = await loop(failing);
  assert.equal(result.outcome, "failed");
  assert.equal(result.report.model_calls, 1);
  assert.ok(result.report.calls[0].request_bytes > 0);
  assert.ok(result.report.calls[0].elapsed_ms > 0);
  assert.deepEqual(result.report.partial_usage, { input: null, cache_read: null, cache_write: null, output: null });
});

test("recording wraps the provider and the executor: every answer and execution, with its bulk, in order", async () => {
  const store = new ResultStore();
  const entries: RecordingEntry[] = [];
  const sink = (entry: RecordingEntry) => entries.push(entry);
  const provider = new RecordingProvider(new ScriptedProvider([pick("run_tests"), ...finish]), sink);
  const executor = new RecordingExecutor(new ScriptedExecutor(store, ["3 passed"]), sink, { store });
  const result = await loop(provider, store, executor);
  assert.equal(result.outcome, "completed");
  assert.deepEqual(entries.map((e) => `${e.type}:${"step" in e ? e.step : ""}`), [
    "answer:1",
    "execution:1",
    "answer:2",
    "answer:2",
    "execution:2",
  ]);
  const test = entries[1];
  assert.ok(test.type === "execution" && Object.values(test.results).includes("3 passed"));
});

test("a recorded answer keeps a stop reason other than end, and replay hands it back", async () => {
  const entries: RecordingEntry[] = [];
  const inner: Provider = {
    name: "cut",
    capabilities: { prompt_caching: false, schema_enforcement: false },
    complete: (_request: TurnRequest, _options: CompleteOptions): Promise<ModelAnswer> =>
      Promise.resolve({ value: "{", usage: answer("selection", null).usage, stop_reason: "max_tokens" }),
  };
  const recording = new RecordingProvider(inner, (e) => entries.push(e));
  await recording.complete({ phase: "selection", response_schema: {}, sections: [] }, { model: "m", step: 3 });
  const [entry] = entries;
  assert.ok(entry.type === "answer");
  assert.equal(entry.stop_reason, "max_tokens");
  assert.equal(entry.step, 3);
  const replayed = await new ScriptedProvider([entry]).complete(
    { phase: "selection", response_schema: {}, sections: [] },
    { model: "m" },
  );
  assert.equal(replayed.stop_reason, "max_tokens");
});

test("a catalog run's recording keeps its classification call, and its replay reports it", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-stage-"));
  const server = await startOpenAIServer([
    openAIAnswer({ slice: "explain" }),
    openAIAnswer({ action: "finish" }),
    openAIAnswer({ status: "success", summary: "explained" }),
  ]);
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  cpSync(join(import.meta.dirname!, "..", "testdata", "example-project"), join(dir, "ws"), { recursive: true });
  const slice = (description: string) => ({
    description,
    intent: "{{request}}",
    instructions: "Answer.",
    actions: ["read_file", "finish"],
    test: { command: ["node", "test.mjs"], timeout_ms: 30_000 },
    model: "gpt",
    limits: { max_steps: 5 },
  });
  writeFileSync(
    join(dir, "catalog.json"),
    JSON.stringify({
      models: {
        gpt: { kind: "openai", model: "gpt-4.1-mini", base_url: server.baseUrl, api_key_env: "TEST_OPENAI_API_KEY" },
      },
      defaults: { workspace: "ws" },
      slices: { fix: slice("Fix things"), explain: slice("Explain things") },
      routes: { classification: { model: "gpt" } },
    }),
  );
  const recordPath = join(dir, "run.jsonl");
  // --allow-key-env is the user's word: a run takes it in its settings plan.
  const env = { TEST_OPENAI_API_KEY: "test-key" };
  const userLevel = resolveSettings({ env, flags: { allow_key_env: ["TEST_OPENAI_API_KEY"] } });
  assert.ok(userLevel.ok);
  const run = await startRun(
    { catalog: { file: join(dir, "catalog.json"), name: "catalog.json", text: "What does it do?" } },
    runPlan(userLevel.plan, { record: recordPath }),
    { env },
  );
  assert.equal(run.outcome, "completed", run.error?.message);
  assert.equal(run.report.phases.classification.requests, 1);
  const recording = parseRecording(readFileSync(recordPath, "utf8"));
  assert.equal(recording.header.slice_name, "explain");
  const [classification] = recording.answers;
  assert.equal(classification.phase, "classification");
  assert.equal(classification.request_bytes, run.report.calls[0].request_bytes);

  const replay = await startRun({ request: { ...recording.header.slice, workspace: "." } }, libraryPlan(), {
    replay: { recording, execute: false },
  });
  assert.equal(replay.outcome, "completed", replay.error?.message);
  assert.equal(replay.report.slice, "explain");
  assert.deepEqual(replay.report.phases.classification.request_bytes, run.report.phases.classification.request_bytes);
  assert.deepEqual(
    replay.report.calls.map((c) => [c.phase, c.request_bytes, c.usage]),
    run.report.calls.map((c) => [
      c.phase,
      c.request_bytes,
      c.usage,
    ]),
  );
});
