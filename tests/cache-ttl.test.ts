// cache_ttl: auto chooses the prompt cache's lifetime from the run's own pace (lib/providers/anthropic/choose-cache-ttl.ts);
// the HTTP adapters describe each body to the run's cache explanation and key OpenAI's cache by run.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { CacheTtlChooser } from "../lib/providers/anthropic/choose-cache-ttl.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import type { AnthropicRequestBody } from "../lib/providers/anthropic/convert-to-anthropic-request.ts";
import {
  anthropicAnswer,
  openAIAnswer,
  SAMPLE_MARKERS,
  sampleTurnRequest,
  startAnthropicServer,
  startOpenAIServer,
  withFakeServer,
} from "./helpers/fake-provider-servers.ts";

const usage = (read: number, write: number) => ({ input: 50, cache_read: read, cache_write: write, output: 10 });
const MIN = 60_000;

function chooserAfter(gapsMs: number[], u = usage(20_000, 1_000)) {
  const chooser = new CacheTtlChooser();
  let at = 0;
  chooser.observe({ at, usage: u });
  for (const gap of gapsMs) chooser.observe({ at: at += gap, usage: u });
  return chooser;
}

test("cache_ttl auto: 5 minutes while calls come quickly or too few were seen", () => {
  assert.equal(chooserAfter([]).ttl(), "5m");
  assert.equal(chooserAfter([10 * MIN, 10 * MIN]).ttl(), "5m", "two gaps are not a pace yet");
  assert.equal(chooserAfter(Array(20).fill(20_000)).ttl(), "5m");
});

test("cache_ttl auto: 1 hour when gaps over five minutes make rewriting the prefix cost more than the premium", () => {
  // One gap in four over five minutes; 20,000 tokens read and 1,000 written a call: 0.25 * 1.15 * 20,000 > 0.75 * 1,000.
  assert.equal(chooserAfter([20_000, 20_000, 20_000, 7 * MIN, 20_000, 20_000, 20_000, 7 * MIN]).ttl(), "1h");
  // Gaps over an hour expire a 1-hour entry too: they do not count for it.
  assert.equal(chooserAfter([90 * MIN, 90 * MIN, 90 * MIN, 90 * MIN]).ttl(), "5m");
});

test("cache_ttl auto (property): 1 hour exactly when f * 1.15 * read > 0.75 * written", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1_000, max: 40 * MIN }), { minLength: 3, maxLength: 30 }),
      fc.integer({ min: 0, max: 50_000 }),
      fc.integer({ min: 0, max: 50_000 }),
      (gaps, read, written) => {
        const slow = gaps.filter((g) => g > 5 * MIN).length / gaps.length;
        const n = gaps.length + 1;
        const expected = slow * 1.15 * read * n > 0.75 * written * n ? "1h" : "5m";
        assert.equal(chooserAfter(gaps, usage(read, written)).ttl(), expected);
      },
    ),
  );
});

test("cache_ttl auto: the adapter asks for a 1-hour cache once its calls have come slowly", async () => {
  let t = 0;
  const answer = anthropicAnswer({ action: "finish" }, {
    usage: { input_tokens: 40, cache_creation_input_tokens: 500, cache_read_input_tokens: 30_000, output_tokens: 9 },
  });
  await withFakeServer(startAnthropicServer, () => answer, async (server) => {
    const provider = createProvider(
      { kind: "anthropic", model: "claude-sonnet-5-5", base_url: server.baseUrl, cache_ttl: "auto" },
      { env: { ANTHROPIC_API_KEY: "sk-ant-test-0123456789" }, now: () => t },
    );
    for (let i = 0; i < 6; i++) {
      await provider.complete(sampleTurnRequest(), { model: "claude-sonnet-5-5" });
      t += 6 * MIN;
    }
    const ttls = server.requests.map((r) =>
      ((r.body as AnthropicRequestBody).system ?? []).at(-1)?.cache_control?.ttl ?? "5m"
    );
    assert.deepEqual(ttls, ["5m", "5m", "5m", "5m", "1h", "1h"]);
  });
});

test("the Anthropic and OpenAI adapters describe each body they send to the run's cache explanation, without its text", async () => {
  const answer = anthropicAnswer({ action: "finish" });
  await withFakeServer(startAnthropicServer, () => answer, async (server) => {
    const provider = createProvider(
      { kind: "anthropic", model: "claude-sonnet-5-5", base_url: server.baseUrl },
      { env: { ANTHROPIC_API_KEY: "sk-ant-test-0123456789" } },
    );
    const got = await provider.complete(sampleTurnRequest(), { model: "claude-sonnet-5-5" });
    const body = server.requests[0].body as AnthropicRequestBody;
    const marked = [...(body.system ?? []), ...body.messages[0].content].filter((b) => b.cache_control).length;
    assert.equal(got.cache?.mode, "breakpoints");
    assert.equal(got.cache!.blocks.filter((b) => b.breakpoint).length, marked);
    assert.equal(got.cache!.blocks.reduce((n, b) => n + b.bytes, 0) > 0, true);
    assert.ok(!JSON.stringify(got.cache).includes(SAMPLE_MARKERS.intent));
  });
  await withFakeServer(startOpenAIServer, () => openAIAnswer({ action: "finish" }), async (server) => {
    const provider = createProvider(
      { kind: "openai", model: "gpt-4.1", base_url: server.baseUrl },
      { env: { OPENAI_API_KEY: "sk-test-0123456789" } },
    );
    const got = await provider.complete(sampleTurnRequest(), { model: "gpt-4.1" });
    await provider.complete(sampleTurnRequest(), { model: "gpt-4.1" });
    assert.equal(got.cache?.mode, "automatic");
    const keys = server.requests.map((r) => (r.body as { prompt_cache_key?: string }).prompt_cache_key);
    assert.ok(keys[0]?.startsWith("loom-"));
    assert.equal(keys[1], keys[0], "one key for the run's requests");
  });
});
