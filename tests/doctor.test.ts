// loom doctor against stand-ins that answer as the real APIs do, documented rejections included: every check's pass
// and its failure (bad key, retired or unknown model, structured output rejected, cache never read, a server over
// its context), the money spent, and the exit codes from endingOf's table.
import assert from "node:assert/strict";
import { test } from "node:test";
import { main } from "../main.ts";
import { runDoctor } from "../lib/adapters/run-doctor.ts";
import { DoctorResult, type ModelFacts } from "../lib/doctor/doctor.ts";
import { EXIT_CODES } from "../lib/outcome.ts";
import {
  anthropicError,
  type FakeProviderServer,
  type Script,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";
import { anthropicCaching, openAICaching } from "./helpers/caching-stand-ins.ts";
import { startOllamaStandIn } from "./helpers/local-server-stand-ins.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const FAST = { sleep: async () => {}, maxAttempts: 1 };
const OK = () => ({ status: "ok", word: "people" });
/** Claude Sonnet 5.5 class list prices, as the model table will carry them (the test's own figures). */
const FACTS: ModelFacts = {
  price: {
    input: 3,
    output: 15,
    cache_write_5m: 3.75,
    cache_write_1h: 6,
    cache_read: 0.3,
    source: "https://platform.claude.com/docs/en/about-claude/pricing",
    date: "2026-12-01",
  },
  min_cache_tokens: 1024,
  retired: null,
};

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
  { model = "anthropic/claude-sonnet-5-5", key = "sk-ant-test-0000", facts = FACTS, nonce = "n" } = {},
) =>
  runDoctor({
    model,
    env: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.baseUrl },
    http: FAST,
    facts,
    nonce,
  });

const statuses = (result: DoctorResult) => Object.fromEntries(result.checks.map((c) => [c.check, c.status]));

test("doctor: a working Anthropic model passes every check in two identical calls, a cache write then a read, under a cent", async () => {
  await withServer(startAnthropicServer, anthropicCaching({ answer: OK }), async (server) => {
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
    assert.ok((result.usage.cache_write ?? 0) >= 1024 && result.usage.cache_read === result.usage.cache_write);
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
  const result = await runDoctor({ model: "openai/gpt-5.6", env: {}, facts: FACTS, nonce: "n" });
  assert.equal(result.checks.find((c) => c.check === "key")!.code, "missing_credential");
  assert.equal(result.exit_code, EXIT_CODES.startup_failed);
  assert.equal(result.calls.length, 0);
  assert.equal(result.cost_usd, 0);
});

test("doctor: a retired model is the API's 404 (model_not_found), or, when the table knows it, stops before any call (exit 3)", async () => {
  await withServer(startAnthropicServer, [
    anthropicError(404, { type: "not_found_error", message: "model: claude-sonnet-4-5" }),
  ], async (server) => {
    const result = await anthropicDoctor(server, {
      model: "anthropic/claude-sonnet-4-5",
      key: "sk-ant-test-0000",
      facts: FACTS,
      nonce: "n",
    });
    const check = result.checks.find((c) => c.check === "model")!;
    assert.equal(check.code, "model_not_found");
    assert.match(check.detail, /claude-sonnet-4-5 is not served there \(it may be retired or misspelt\)/);
    assert.equal(result.exit_code, EXIT_CODES.failed);
  });
  await withServer(startAnthropicServer, [], async (server) => {
    const result = await anthropicDoctor(server, {
      model: "anthropic/claude-sonnet-4-5",
      key: "sk-ant-test-0000",
      facts: { ...FACTS, retired: { date: "2026-09-29", replacement: "claude-sonnet-5-5" } },
      nonce: "n",
    });
    assert.equal(server.requests.length, 0);
    assert.equal(
      result.checks[0].detail,
      "claude-sonnet-4-5 was retired on 2026-09-29; use claude-sonnet-5-5",
    );
    assert.equal(result.error_code, "model_retired");
    assert.equal(result.exit_code, EXIT_CODES.startup_failed);
  });
});

test("doctor: structured output rejected with a 400 (forced tool use on the 5.5 models) fails its check (exit 1)", async () => {
  const rejected = anthropicError(400, {
    type: "invalid_request_error",
    message: "Forced tool use is not supported for this model; use output_config.format",
  });
  await withServer(startAnthropicServer, [rejected], async (server) => {
    const result = await anthropicDoctor(server, {
      model: "anthropic/claude-sonnet-5-5",
      key: "sk-ant-test-0000",
      facts: FACTS,
      nonce: "n",
    });
    const check = result.checks.find((c) => c.check === "structured_answer")!;
    assert.equal(check.status, "fail");
    assert.equal(check.code, "structured_output_rejected");
    assert.match(check.detail, /Forced tool use is not supported/);
    assert.equal(result.exit_code, EXIT_CODES.failed);
  });
});

test("doctor: a cache that is never read fails cache_read with the counts (OpenAI reports no writes: skipped)", async () => {
  await withServer(startOpenAIServer, openAICaching({ answer: OK, neverRead: true }), async (server) => {
    const result = await runDoctor({
      model: "openai/gpt-5.6",
      env: { OPENAI_API_KEY: "sk-test-0000", OPENAI_BASE_URL: server.baseUrl },
      http: FAST,
      facts: FACTS,
      nonce: "n",
    });
    assert.equal(statuses(result).cache_write, "skip");
    const read = result.checks.find((c) => c.check === "cache_read")!;
    assert.equal(read.code, "cache_not_read");
    assert.match(read.detail, /read nothing from the cache \(\d+ input tokens at full price/);
    assert.equal(result.exit_code, EXIT_CODES.failed);
    assert.equal(result.calls.length, 2);
  });
  await withServer(startOpenAIServer, openAICaching({ answer: OK }), async (server) => {
    const result = await runDoctor({
      model: "openai/gpt-5.6",
      env: { OPENAI_API_KEY: "sk-test-0000", OPENAI_BASE_URL: server.baseUrl },
      http: FAST,
      facts: FACTS,
      nonce: "n",
    });
    assert.equal(statuses(result).cache_read, "pass");
    assert.equal(result.exit_code, 0);
  });
});

test("doctor: an Ollama model whose context cannot hold a bounded run's 64 KiB request fails context before any prompt", async () => {
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
    assert.equal(context.code, "provider_context_exceeded");
    assert.match(context.detail, /holds 8192 tokens of context/);
    assert.deepEqual(server.requests.map((r) => r.path), ["/api/show"]);
    assert.equal(result.exit_code, EXIT_CODES.failed);
  } finally {
    await server.close();
  }
});

test("doctor: an Ollama model that fits passes model, context and answer in one call; no cache to check", async () => {
  const server = await startOllamaStandIn({
    models: { "qwen2.5-coder:7b": { context_length: 32768 } },
    answer: () => ({ answer: OK() }),
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
  assert.match(none.out.stderr, /loom doctor needs a model/);
});
