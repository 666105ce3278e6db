// loom doctor against the real llama-server (tests/helpers/live-server.ts): it passes honestly — the context from
// the server, a structured answer within its 64-token cap, a cache read on the identical second call — and what Loom
// counts is what the server reported.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createProvider } from "../lib/run/create-provider.ts";
import { runDoctor } from "../lib/doctor/run-doctor.ts";
import { DOCTOR_OUTPUT_TOKENS, doctorRequest, modelFacts } from "../lib/doctor/doctor.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { LIVE_SKIP_REASON, LIVE_TEST_TIMEOUT_MS, liveServer, serverUsageOf } from "./helpers/live-server.ts";

const live = liveServer();
if (!live) console.log(`live-doctor.test.ts: skipping — ${LIVE_SKIP_REASON}`);
const options = { skip: live === null, timeout: LIVE_TEST_TIMEOUT_MS };

test("loom doctor passes against the live server: context, structured answer, cache read", options, async () => {
  if (!live) return;
  const model = `openai-compatible/${live.model}`;
  const result = await runDoctor({
    model,
    env: {},
    baseUrl: live.baseUrl,
    facts: modelFacts(BUILT_IN_MODELS, model, { today: new Date().toISOString().slice(0, 10) }),
    nonce: crypto.randomUUID().slice(0, 8),
  });
  const check = (name: string) => result.checks.find((c) => c.check === name);
  assert.equal(result.exit_code, 0, JSON.stringify(result.checks, null, 1));
  assert.equal(check("context")?.status, "pass");
  assert.match(check("context")?.detail ?? "", /tokens per request \((\/props|\/v1\/models)\)/);
  // The answer kept the schema; a small model may send back another word than the one asked for, which doctor says
  // as a warning (the word it got) and still passes (Qwen2.5-Coder-0.5B does: issue 44).
  const answer = check("structured_answer");
  assert.ok(answer?.status === "pass" || answer?.status === "warn", JSON.stringify(answer));
  if (answer?.status === "warn") {
    assert.match(answer.detail, /matches the schema, but the word came back .*, not ".+" as asked$/);
  }
  assert.equal(check("cache_read")?.status, "pass");
  assert.equal(result.calls.length, 2);
  for (const call of result.calls) assert.ok((call.usage.output ?? Infinity) <= DOCTOR_OUTPUT_TOKENS);
  assert.equal(result.cost_usd, null, "a local model's cost is tokens and seconds, never dollars");
});

test(
  "the live server's usage is Loom's usage: input + cache_read = prompt_tokens, cache_read = cached_tokens",
  options,
  async () => {
    if (!live) return;
    const provider = createProvider({ kind: "openai-compatible", model: live.model, base_url: live.baseUrl }, {
      env: {},
    });
    const { request } = doctorRequest({ minCacheTokens: 256, nonce: crypto.randomUUID().slice(0, 8) });
    const options = { model: live.model, maxOutputTokens: DOCTOR_OUTPUT_TOKENS };
    const answers = [await provider.complete(request, options), await provider.complete(request, options)];
    for (const answer of answers) {
      const server = serverUsageOf(answer.raw);
      assert.equal((answer.usage.input ?? -1) + (answer.usage.cache_read ?? -1), server.prompt_tokens);
      assert.equal(answer.usage.cache_read, server.cached_tokens);
      assert.equal(answer.usage.output, server.completion_tokens);
      assert.ok(answer.timings, "llama-server sends its timings");
      assert.equal(answer.timings.cache_n, server.cached_tokens);
      assert.equal(answer.timings.prompt_n + answer.timings.cache_n, server.prompt_tokens);
    }
    const [first, second] = answers;
    assert.ok(
      (second?.usage.cache_read ?? 0) > (first?.usage.cache_read ?? 0),
      "the identical second call reused more",
    );
  },
);
