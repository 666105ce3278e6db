// loom doctor against stand-ins that answer as the real APIs do, documented rejections included: every check's pass
// and its failure (bad key, retired or unknown model, structured output rejected, cache never read, a server over
// its context), the money spent, and the exit codes from endingOf's table.
import assert from "node:assert/strict";
import { test } from "node:test";
import { main } from "../main.ts";
import { runDoctor } from "../lib/doctor/run-doctor.ts";
import { DoctorResult, type ModelFacts, modelFacts } from "../lib/doctor/doctor.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { mergeModels, type ModelTable } from "../lib/models/models.ts";
import { EXIT_CODES } from "../lib/outcome.ts";
import {
  anthropicError,
  type FakeProviderServer,
  type Script,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";
import { anthropicCaching, doctorAnswer, openAICaching } from "./helpers/caching-stand-ins.ts";
import { startOllamaStandIn } from "./helpers/local-server-stand-ins.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const FAST = { sleep: async () => {}, maxAttempts: 1 };
const OK = doctorAnswer;
const TODAY = { today: "2026-12-01" };
/** What the built-in table says of a model, as loom doctor asks it. */
const factsOf = (model: string, table: ModelTable = BUILT_IN_MODELS): ModelFacts => modelFacts(table, model, TODAY);
const FACTS = factsOf("anthropic/claude-sonnet-5-5");

async function withServer(
  start: (script: Script) => Promise<FakeProviderServer>,
  script: Script,
  run: (server: FakeProviderServer) => Promise<void>,
) {
  const server = await start(script);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

/** doctor on `model` against the Anthropic stand-in `server`. */
const anthropicDoctor = (
  server: FakeProviderServer,
  { model = "anthropic/claude-sonnet-5-5", key = "sk-ant-test-0000", facts = FACTS, nonce = "n", models }: {
    model?: string;
    key?: string;
    facts?: ModelFacts;
    nonce?: string;
    models?: ModelTable;
  } = {},
) =>
  runDoctor({
    model,
    env: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.baseUrl },
    http: FAST,
    models,
    facts,
    nonce,
  });

const statuses = (result: DoctorResult) => Object.fromEntries(result.checks.map((c) => [c.check, c.status]));

test("doctor: a working Anthropic model passes every check in two identical calls, a cache write then a read, under a cent", async () => {
  await withServer(startAnthropicServer, anthropicCaching({ answer: OK, minTokens: 512 }), async (server) => {
    const result = await anthropicDoctor(server, {
      model: "anthropic/claude-sonnet-5-5",
      key: "sk-ant-test-0000",
      facts: FACTS,
      nonce: "n0nce1",
    });
    assert.deepEqual(statuses(result), {
      model: "pass",
      key: "pass",
      context: "skip",
      structured_answer: "pass",
      cache_write: "pass",
      cache_read: "pass",
    });
    assert.equal(result.exit_code, 0);
    assert.equal(server.requests.length, 2);
    assert.equal(server.requests[0].rawBody, server.requests[1].rawBody, "the two requests are identical");
    assert.match(server.requests[0].rawBody, /n0nce1/);
    // Sonnet 5.5 caches from 512 tokens (the model table): the prefix is just over it, and so is what was cached.
    assert.equal(FACTS.min_cache_tokens, 512);
    assert.ok((result.usage.cache_write ?? 0) >= 512 && result.usage.cache_read === result.usage.cache_write);
    assert.ok(result.cost_usd !== null && result.cost_usd > 0 && result.cost_usd < 0.01, `spent $${result.cost_usd}`);
    DoctorResult.parse(result);
  });
});

test("doctor: a bad key is the API's 401: the key check fails naming the variable, never the key (exit 1)", async () => {
  await withServer(startAnthropicServer, [
    anthropicError(401, { type: "authentication_error", message: "invalid x-api-key" }),
  ], async (server) => {
    const result = await anthropicDoctor(server, {
      model: "anthropic/claude-sonnet-5-5",
      key: "sk-ant-wrong-9999",
      facts: FACTS,
      nonce: "n",
    });
    const key = result.checks.find((c) => c.check === "key")!;
    assert.equal(key.status, "fail");
    assert.equal(key.code, "provider_auth");
    assert.match(key.detail, /ANTHROPIC_API_KEY/);
    assert.ok(!JSON.stringify(result).includes("sk-ant-wrong-9999"));
    assert.equal(result.exit_code, EXIT_CODES.failed);
    assert.equal(statuses(result).cache_read, "skip");
  });
});

test("doctor: no key at all stops before any call (startup_failed, exit 3)", async () => {
  const result = await runDoctor({ model: "openai/gpt-5.6", env: {}, facts: factsOf("openai/gpt-5.6"), nonce: "n" });
  assert.equal(result.checks.find((c) => c.check === "key")!.code, "missing_credential");
  assert.equal(result.exit_code, EXIT_CODES.startup_failed);
  assert.equal(result.calls.length, 0);
  assert.equal(result.cost_usd, 0);
});

test("doctor: a model the API has retired and the table does not know is its 404 (model_not_found, exit 1)", async () => {
  await withServer(startAnthropicServer, [
    anthropicError(404, { type: "not_found_error", message: "model: claude-3-haiku-20240307" }),
  ], async (server) => {
    const model = "anthropic/claude-3-haiku-20240307";
    const result = await anthropicDoctor(server, { model, facts: factsOf(model) });
    const check = result.checks.find((c) => c.check === "model")!;
    assert.equal(check.code, "model_not_found");
    assert.match(check.detail, /claude-3-haiku-20240307 is not served there \(it may be retired or misspelt\)/);
    assert.equal(statuses(result).key, "pass", "a 404 got past authentication");
    assert.equal(result.exit_code, EXIT_CODES.failed);
  });
});

test("doctor: a model the table marks retired stops before any call with the replacement (model_retired, exit 3)", async () => {
  await withServer(startAnthropicServer, [], async (server) => {
    const model = "anthropic/claude-sonnet-4-5";
    const result = await anthropicDoctor(server, { model, facts: factsOf(model) });
    assert.equal(server.requests.length, 0);
    assert.equal(result.checks[0].detail, "claude-sonnet-4-5 was retired on 2026-11-30; use claude-sonnet-5-5");
    assert.equal(result.error_code, "model_retired");
    assert.equal(result.exit_code, EXIT_CODES.startup_failed);
    // Facts that miss the retirement (a stale caller) still stop at the provider, which reads the same table.
    const stale = await anthropicDoctor(server, { model, facts: { ...factsOf(model), retired: null } });
    assert.equal(stale.error_code, "model_retired");
    assert.equal(server.requests.length, 0);
  });
});

test("doctor: structured output the model rejects (a stale table forcing a tool on Sonnet 5.5) is its 400 (exit 1)", async () => {
  // A models file written before the 5.5 models: forced tool use, which they answer with HTTP 400.
  const entry = BUILT_IN_MODELS.models["anthropic/claude-sonnet-5-5"];
  const stale = mergeModels(BUILT_IN_MODELS, {
    ...BUILT_IN_MODELS,
    models: { "anthropic/claude-sonnet-5-5": { ...entry, structured_output: "forced_tool" } },
  });
  await withServer(startAnthropicServer, anthropicCaching({ answer: OK, minTokens: 512 }), async (server) => {
    const result = await anthropicDoctor(server, { models: stale });
    const check = result.checks.find((c) => c.check === "structured_answer")!;
    assert.equal(check.status, "fail");
    assert.equal(check.code, "structured_output_rejected");
    assert.match(check.detail, /forced tool use is not supported by claude-sonnet-5-5/);
    assert.equal(statuses(result).model, "pass");
    assert.equal(result.exit_code, EXIT_CODES.failed);
    // The built-in table sends output_config.format instead, and the same stand-in answers.
    const current = await anthropicDoctor(server, { nonce: "n2" });
    assert.equal(statuses(current).structured_answer, "pass");
  });
});

const openAIDoctor = (server: FakeProviderServer, model: string) =>
  runDoctor({
    model,
    env: { OPENAI_API_KEY: "sk-test-0000", OPENAI_BASE_URL: server.baseUrl },
    http: FAST,
    facts: factsOf(model),
    nonce: "n",
  });

test("doctor: a cache that is never read fails cache_read with the counts (Chat Completions reports no writes: skipped)", async () => {
  await withServer(startOpenAIServer, openAICaching({ answer: OK, neverRead: true }), async (server) => {
    const result = await openAIDoctor(server, "openai/gpt-4.1");
    assert.equal(server.requests[0].path, "/v1/chat/completions");
    assert.equal(statuses(result).cache_write, "skip");
    const read = result.checks.find((c) => c.check === "cache_read")!;
    assert.equal(read.code, "cache_not_read");
    assert.match(read.detail, /read nothing from the cache \(\d+ input tokens at full price/);
    assert.equal(result.exit_code, EXIT_CODES.failed);
    assert.equal(result.calls.length, 2);
  });
  await withServer(startOpenAIServer, openAICaching({ answer: OK }), async (server) => {
    const result = await openAIDoctor(server, "openai/gpt-4.1");
    assert.equal(statuses(result).cache_read, "pass");
    assert.equal(result.exit_code, 0);
  });
});

test("doctor: GPT-5.6 through the Responses API shows its write then its read; the reported no-cache case fails the write", async () => {
  await withServer(startOpenAIServer, openAICaching({ answer: OK, reportsWrites: true }), async (server) => {
    const result = await openAIDoctor(server, "openai/gpt-5.6");
    assert.equal(server.requests[0].path, "/v1/responses");
    assert.equal(statuses(result).cache_write, "pass");
    assert.equal(statuses(result).cache_read, "pass");
    // GPT-5.6 Sol's rates (5 input, 6.25 write, 0.5 read, 30 output per million): about a cent, the price of its writes.
    assert.ok(result.cost_usd !== null && result.cost_usd > 0 && result.cost_usd < 0.015, `spent $${result.cost_usd}`);
  });
  // OpenAI community, 2026-07: strict json_schema on GPT-5.6 prevented cache writes entirely. Doctor measures it.
  await withServer(
    startOpenAIServer,
    openAICaching({ answer: OK, reportsWrites: true, neverRead: true }),
    async (server) => {
      const result = await openAIDoctor(server, "openai/gpt-5.6");
      assert.equal(result.checks.find((c) => c.check === "cache_write")!.code, "cache_not_written");
      assert.equal(result.checks.find((c) => c.check === "cache_read")!.code, "cache_not_read");
      assert.equal(result.error_code, "cache_not_written");
      assert.equal(result.exit_code, EXIT_CODES.failed);
    },
  );
});

test("doctor: an Ollama model whose context cannot hold even a sized-down bounded request fails context before any prompt", async () => {
  const server = await startOllamaStandIn({ models: { "qwen2.5-coder:1.5b": { context_length: 4096 } } });
  try {
    const result = await runDoctor({
      model: "ollama/qwen2.5-coder:1.5b",
      env: {},
      baseUrl: server.baseUrl,
      http: FAST,
      facts: { price: null, min_cache_tokens: 1024, retired: null },
      nonce: "n",
    });
    const context = result.checks.find((c) => c.check === "context")!;
    assert.equal(context.code, "provider_context_exceeded");
    assert.match(
      context.detail,
      /\(8,192 bytes, sized to the model's context\) does not fit: .*holds 4096 tokens of context/,
    );
    assert.deepEqual(server.requests.map((r) => r.path), ["/api/show"]);
    assert.equal(result.exit_code, EXIT_CODES.failed);
  } finally {
    await server.close();
  }
});

test("doctor: an Ollama model of 8K tokens passes context: a bounded run's ceiling is sized down to it", async () => {
  const server = await startOllamaStandIn({ models: { "qwen2.5-coder:1.5b": { context_length: 8192 } } });
  try {
    const result = await runDoctor({
      model: "ollama/qwen2.5-coder:1.5b",
      env: {},
      baseUrl: server.baseUrl,
      http: FAST,
      facts: { price: null, min_cache_tokens: 1024, retired: null },
      nonce: "n",
    });
    const context = result.checks.find((c) => c.check === "context")!;
    assert.equal(context.status, "pass");
    assert.match(
      context.detail,
      /\(12,288 bytes, sized to the model's context\) runs at num_ctx 8192 of the model's 8192/,
    );
  } finally {
    await server.close();
  }
});

test("doctor: an Ollama model that fits passes model, context and answer in one call; no cache to check", async () => {
  const server = await startOllamaStandIn({
    models: { "qwen2.5-coder:7b": { context_length: 32768 } },
    answer: (request) => ({ answer: OK(request) }),
  });
  try {
    const result = await runDoctor({
      model: "ollama/qwen2.5-coder:7b",
      env: {},
      baseUrl: server.baseUrl,
      http: FAST,
      facts: { price: null, min_cache_tokens: 1024, retired: null },
      nonce: "n",
    });
    assert.deepEqual(statuses(result), {
      model: "pass",
      key: "pass",
      context: "pass",
      structured_answer: "pass",
      cache_write: "skip",
      cache_read: "skip",
    });
    assert.equal(result.calls.length, 1);
    assert.equal(result.exit_code, 0);
  } finally {
    await server.close();
  }
});

test("loom doctor: the table on stdout, --json one object of the published shape, the exit code the result's", async () => {
  await withServer(startOpenAIServer, openAICaching({ answer: OK, neverRead: true }), async (server) => {
    const env = { OPENAI_API_KEY: "sk-test-0000", OPENAI_BASE_URL: server.baseUrl };
    const text = fakeIo({ cwd: "/tmp", env });
    assert.equal(await main(["doctor", "-m", "openai/gpt-4.1"], text.io), EXIT_CODES.failed);
    assert.match(text.out.stdout, /^loom doctor openai\/gpt-4\.1\n {2}model +pass {2}gpt-4\.1 answered\n/);
    assert.match(text.out.stdout, / {2}cache read +fail {2}the identical second call read nothing/);
    assert.match(text.out.stdout, /2 calls: .*; spent \$0\.\d{6} \(prices of /);
    assert.match(text.out.stdout, /not ready: cache_not_read \(exit 1\)\n$/);
    const json = fakeIo({ cwd: "/tmp", env });
    assert.equal(await main(["doctor", "--model", "openai/gpt-4.1", "--json"], json.io), EXIT_CODES.failed);
    const result = DoctorResult.parse(JSON.parse(json.out.stdout));
    assert.equal(result.error_code, "cache_not_read");
  });
  const none = fakeIo({ cwd: "/tmp", env: {} });
  assert.equal(await main(["doctor"], none.io), EXIT_CODES.usage);
  assert.match(none.out.stderr, /^loom doctor: A model is needed: -m PROVIDER\/MODEL/);
});
