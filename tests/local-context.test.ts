// A local server's context and speed, against the llama.cpp stand-in (tests/helpers/local-server-stand-ins.ts, which
// behaves as the real llama-server was seen to): Loom reads the context the server says, sizes a bounded run's
// ceiling, trigger and target to it, caps each call's output to what its answer needs, keeps the server's timings in
// the report, and ends a legacy run whose transcript outgrows the context with provider_context_exceeded (report
// written, edits kept). tests/live-*.test.ts check the same against the real server.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runWithOptions } from "../api.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import { runDoctor } from "../lib/doctor/run-doctor.ts";
import { budgetForContext, CEILING_BYTES, DEFAULT_BUDGET } from "../lib/context/budget.ts";
import { modelFacts } from "../lib/doctor/doctor.ts";
import { renderDoctor } from "../lib/doctor/render-doctor.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { resolveModel } from "../lib/models/models.ts";
import { OUTPUT_CAP_MAX, OUTPUT_CAPS, outputCapOf } from "../lib/providers/openai/output-cap.ts";
import { contextOfModels, contextOfProps } from "../lib/providers/openai/server-context.ts";
import { ContextReport } from "../lib/report/context-report.ts";
import { summarizeReports } from "../lib/report/summary.ts";
import { renderSummaryText } from "../lib/report/summary-text.ts";
import { runResponseSchema, stepResponseSchema } from "../lib/vocabulary/answer.ts";
import { ACTION_NAMES } from "../lib/vocabulary/actions.ts";
import type { Provider, TurnRequest } from "../lib/vocabulary/turn.ts";
import { sampleTurnRequest } from "./helpers/fake-provider-servers.ts";
import { type Received, startLlamaCppStandIn, startOllamaStandIn } from "./helpers/local-server-stand-ins.ts";
import { give, pick, runLoopReported, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { ResultStore } from "../lib/context/store.ts";
import { utf8Length } from "../lib/text/digest.ts";

const FAST = { sleep: async () => {}, maxAttempts: 1 };

const local = (baseUrl: string, maxTokens?: number) =>
  createProvider({
    kind: "openai-compatible",
    model: "local",
    base_url: baseUrl,
    ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
  }, { env: {}, ...FAST });

test("a local server's model is local in the model table: no price, its context and cache the server's", () => {
  for (const kind of ["openai-compatible", "ollama"] as const) {
    const { entry, known } = resolveModel(BUILT_IN_MODELS, kind, "smollm2-135m");
    assert.equal(known, false);
    assert.equal(entry.local, true);
    assert.equal(entry.prices, null);
  }
  assert.equal(resolveModel(BUILT_IN_MODELS, "openai", "some-new-model").entry.local, undefined);
});

test("the server's context: /props default_generation_settings.n_ctx, else /v1/models meta.n_ctx, never n_ctx_train", () => {
  assert.equal(contextOfProps({ default_generation_settings: { n_ctx: 8192 }, total_slots: 1 }), 8192);
  assert.equal(contextOfProps({ n_ctx: 4096 }), 4096);
  assert.equal(contextOfProps({ default_generation_settings: {} }), null);
  assert.equal(contextOfProps("<html>"), null);
  const models = { data: [{ id: "a", meta: { n_ctx: 2048, n_ctx_train: 8192 } }, { id: "b", meta: { n_ctx: 1024 } }] };
  assert.equal(contextOfModels(models, "b"), 1024);
  assert.equal(contextOfModels(models, "c"), null, "several models and none named: no guess");
  assert.equal(contextOfModels({ data: [{ id: "x", meta: { n_ctx_train: 8192 } }] }, "y"), null);
  assert.equal(contextOfModels({ data: [{ id: "x", meta: { n_ctx: 8192 } }] }, "y"), 8192);
});

test("serverContext asks /props once; a server that answers neither endpoint has no size", async () => {
  const server = await startLlamaCppStandIn({ contextSize: 8192, alias: "smollm2-135m" });
  try {
    const provider = local(server.baseUrl);
    const context = await provider.serverContext?.();
    assert.deepEqual(context, { context_tokens: 8192, output_tokens: OUTPUT_CAP_MAX, source: "/props" });
    assert.deepEqual(await provider.serverContext?.(), context);
    // max_tokens on the model is the most any call produces: it is what a request keeps for the answer.
    assert.equal((await local(server.baseUrl, 1000).serverContext?.())?.output_tokens, 1000);
  } finally {
    await server.close();
  }
  // Nothing listens there any more: no size, and no failure (the first call says what is wrong, in its own words).
  assert.equal(await local(server.baseUrl).serverContext?.(), null);
});

test("Ollama: the model's context from /api/show sizes a bounded run too, with its 4,096 tokens kept for the answer", async () => {
  const server = await startOllamaStandIn({ models: { "qwen2.5-coder:1.5b": { context_length: 8192 } } });
  try {
    const provider = createProvider({ kind: "ollama", model: "qwen2.5-coder:1.5b", base_url: server.baseUrl }, {
      env: {},
      ...FAST,
    });
    assert.deepEqual(await provider.serverContext?.(), {
      context_tokens: 8192,
      output_tokens: 4096,
      source: "/api/show",
    });
  } finally {
    await server.close();
  }
});

test("budgetForContext: the default when 64 KiB fits, else a ceiling the context holds, trigger and target at 3/4 and 1/2", () => {
  assert.equal(budgetForContext({ contextTokens: 32768, outputTokens: 2048 }), null);
  fc.assert(
    fc.property(fc.integer({ min: 1024, max: 40_000 }), fc.integer({ min: 0, max: 4096 }), (context, output) => {
      const budget = budgetForContext({ contextTokens: context, outputTokens: output });
      if (budget === null) return (context - output) * 3 >= CEILING_BYTES;
      return budget.ceiling < CEILING_BYTES && budget.ceiling >= 8192 &&
        (budget.ceiling === 8192 || budget.ceiling <= (context - output) * 3) &&
        budget.trigger === Math.floor(budget.ceiling * 3 / 4) && budget.target === Math.floor(budget.ceiling / 2);
    }),
  );
  assert.deepEqual(DEFAULT_BUDGET, { ceiling: 65536, trigger: 49152, target: 32768 });
});

test("output caps: a selection 256 tokens, arguments and single-call answers 2,048, the caller's own below both", () => {
  const actions = [...ACTION_NAMES];
  const of = (phase: TurnRequest["phase"], schema: Record<string, unknown>): TurnRequest => ({
    phase,
    response_schema: schema,
    sections: [],
  });
  assert.equal(outputCapOf(of("selection", runResponseSchema(actions).json)), OUTPUT_CAPS.selection);
  assert.equal(outputCapOf(of("arguments", runResponseSchema(actions).json)), OUTPUT_CAPS.arguments);
  assert.equal(outputCapOf(of("selection", stepResponseSchema(actions).json)), OUTPUT_CAPS.arguments);
  assert.equal(outputCapOf(of("classification", { type: "object" })), OUTPUT_CAPS.classification);
  assert.equal(outputCapOf(of("selection", runResponseSchema(actions).json), { needs: 64 }), 64);
  // A configured max_tokens is the arguments cap and the most any call gets.
  assert.equal(outputCapOf(of("arguments", runResponseSchema(actions).json), { configured: 8000 }), 8000);
  assert.equal(outputCapOf(of("selection", runResponseSchema(actions).json), { configured: 100 }), 100);
});

test("a local call sends its cap as max_tokens; an answer looping inside a string stops there, as max_tokens", async () => {
  const looping = () => ({ answer: { action: "finish", reason: "and ".repeat(5000) } });
  const server = await startLlamaCppStandIn({ contextSize: 8192, answer: looping });
  try {
    const provider = local(server.baseUrl);
    const answer = await provider.complete(sampleTurnRequest(), { model: "local" });
    assert.equal(server.requests[0]?.body.max_tokens, OUTPUT_CAPS.selection);
    assert.equal(answer.stop_reason, "max_tokens");
    assert.equal(answer.usage.output, OUTPUT_CAPS.selection);
    await provider.complete(sampleTurnRequest(), { model: "local", maxOutputTokens: 64 });
    assert.equal(server.requests[1]?.body.max_tokens, 64);
  } finally {
    await server.close();
  }
});

test("doctor on a llama.cpp server: the context from /props, a structured answer at a 64-token cap, the cache read", async () => {
  const server = await startLlamaCppStandIn({
    contextSize: 8192,
    alias: "smollm2-135m",
    // A model that reads the request: the word asked for (the task quotes it).
    answer: (request) => {
      const asked = /last word of the instructions \(\W*(\w+)/.exec(JSON.stringify(request.body));
      return { answer: { status: "ok", word: asked?.[1] ?? "" } };
    },
  });
  try {
    const model = "openai-compatible/smollm2-135m";
    const result = await runDoctor({
      model,
      env: {},
      baseUrl: server.baseUrl,
      http: FAST,
      facts: modelFacts(BUILT_IN_MODELS, model, { today: "2026-12-03" }),
      nonce: "n0nce",
    });
    const check = (name: string) => result.checks.find((c) => c.check === name);
    assert.equal(result.exit_code, 0, JSON.stringify(result.checks));
    assert.equal(check("context")?.status, "pass");
    assert.match(
      check("context")?.detail ?? "",
      /^8,192 tokens per request \(\/props\): bounded requests held to 18,432 bytes/,
    );
    assert.equal(check("structured_answer")?.status, "pass");
    assert.equal(check("cache_read")?.status, "pass");
    assert.equal(check("cache_write")?.status, "skip", "llama.cpp reports no cache writes");
    const chats = server.requests.filter((r) => r.path === "/v1/chat/completions");
    assert.deepEqual(chats.map((r) => r.body.max_tokens), [64, 64]);
    assert.equal(result.cost_usd, null, "a local model has no price");
    // Its cost is said in tokens and seconds, from the server's timings.
    assert.ok(result.calls.every((c) => c.timings !== undefined));
    assert.match(renderDoctor(result), /the server took \d+\.\d s for \d+ prompt tokens \(\d+ reused\)/);
  } finally {
    await server.close();
  }
});

/** A workspace of `files` files of `kib` KiB each, distinct text, and a test that passes. */
function workspace(dir: string, { files, kib }: { files: number; kib: number }): string {
  const ws = mkdtempSync(join(dir, "ws-"));
  for (let i = 0; i < files; i++) {
    const line = `file ${i}: the loom weaves one bounded step at a time, line after line.\n`;
    writeFileSync(join(ws, `part${i}.txt`), line.repeat(Math.ceil((kib * 1024) / line.length)));
  }
  writeFileSync(join(ws, "test.mjs"), "process.exit(0)\n");
  return ws;
}

/** A model that writes note.txt once, then reads part0, part1, … in turn (single-call answers). */
function reader(files: number) {
  let call = 0;
  return (_: Received) => {
    call += 1;
    if (call === 1) return { answer: { action: "write_file", args: { path: "note.txt", content: "kept\n" } } };
    return { answer: { action: "read_file", args: { path: `part${(call - 2) % files}.txt` } } };
  };
}

test("legacy outgrows an 8K server context: provider_context_exceeded, report written, edits kept; bounded runs on", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-local-context-"));
  try {
    for (const policy of ["legacy", "bounded"] as const) {
      const server = await startLlamaCppStandIn({ contextSize: 8192, answer: reader(8) });
      try {
        const ws = workspace(dir, { files: 8, kib: 4 });
        const reportPath = join(dir, `${policy}.json`);
        const result = await runWithOptions(
          sliceRequest({ workspace: ws, model: "openai-compatible/local", limits: { max_steps: 14 } }),
          {
            contextPolicy: policy,
            contextReport: reportPath,
            stepProtocol: "single-call",
            provider: local(server.baseUrl),
            sandbox: "off",
          },
        );
        const report = ContextReport.parse(JSON.parse(readFileSync(reportPath, "utf8")));
        assert.equal(readFileSync(join(ws, "note.txt"), "utf8"), "kept\n", "the edit is kept");
        const statuses = server.requests.length;
        if (policy === "legacy") {
          assert.equal(result.outcome, "failed");
          assert.equal(report.error?.code, "provider_context_exceeded");
          assert.equal(report.context_budget, undefined);
          assert.ok(report.steps < 14 && statuses === report.model_calls, "the refused call counts, once");
        } else {
          assert.equal(result.outcome, "step_limit", JSON.stringify(report.error));
          const budget = report.context_budget;
          assert.ok(budget, "the report says the budget was sized to the server");
          assert.equal(budget.context_tokens, 8192);
          assert.ok(budget.ceiling_bytes < CEILING_BYTES);
          assert.ok(report.checkpoints > 0, "bounded retired events to stay under the smaller ceiling");
          for (const call of report.calls) assert.ok(call.request_bytes <= budget.ceiling_bytes);
          // Every request fitted the server's context: it refused none.
          assert.ok(report.calls.every((c) => c.usage.input !== null));
          // loom report says so, and what the run cost in the server's time.
          const text = renderSummaryText(summarizeReports([{ file: "bounded.json", kind: "run", report }]));
          assert.match(text, /context budget +sized to the server's 8,192-token context \(\/props\): ceiling 18/);
          assert.match(text, /server time +[\d,]+ prompt tokens evaluated in /);
          assert.match(text, /cost +n\/a — a local model: its cost is tokens and seconds/);
        }
        // The report keeps the server's timings per call, and their sum; its counters are the server's usage.
        const answered = report.calls.filter((c) => c.usage.input !== null);
        assert.ok(answered.every((c) => c.timings && c.timings.cache_n === c.usage.cache_read));
        assert.equal(report.server_timings?.prompt_n, answered.reduce((s, c) => s + (c.timings?.prompt_n ?? 0), 0));
        assert.equal(report.cost, null, "a local run's cost is tokens and seconds, never dollars");
      } finally {
        await server.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("property: on a server of any context, every bounded request is within the ceiling sized to it, the report says which", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 5_000, max: 30_000 }),
      fc.array(fc.integer({ min: 100, max: 40_000 }), { minLength: 1, maxLength: 24 }),
      async (contextTokens, sizes) => {
        const store = new ResultStore();
        const outputs = sizes.map((size, i) => `output ${i} `.repeat(Math.ceil(size / 10)).slice(0, size));
        const answers = [
          ...sizes.flatMap((_, i) => [pick("read_file"), give({ path: `f${i}.txt` })]),
          pick("finish"),
          give({ status: "success", summary: "done" }),
        ];
        const scripted = new ScriptedProvider(answers, { keepRequests: true });
        const provider: Provider = {
          name: scripted.name,
          capabilities: scripted.capabilities,
          complete: (request, options) => scripted.complete(request, options),
          serverContext: () =>
            Promise.resolve({ context_tokens: contextTokens, output_tokens: OUTPUT_CAP_MAX, source: "/props" }),
        };
        const result = await runLoopReported(sliceRequest(), {
          policy: "bounded",
          provider,
          executor: new ScriptedExecutor(store, outputs),
          store,
          now: () => 0,
        });
        const budget = budgetForContext({ contextTokens, outputTokens: OUTPUT_CAP_MAX });
        const ceiling = budget?.ceiling ?? CEILING_BYTES;
        assert.equal(result.report.context_budget?.ceiling_bytes, budget?.ceiling);
        assert.ok(
          result.outcome === "completed" || result.error?.code === "context_ceiling_exceeded",
          JSON.stringify(result.error),
        );
        for (const request of scripted.requests) assert.ok(utf8Length(JSON.stringify(request)) <= ceiling);
      },
    ),
    { numRuns: 30 },
  );
});
