// Retry, backoff and HTTP error classification for provider calls.
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { createAnthropicProvider } from "../lib/providers/anthropic/anthropic-provider.ts";
import { sleep, withRetry } from "../lib/providers/http/retry.ts";
import { InterruptedError, ProviderError } from "../lib/errors.ts";
import { backoffDelayMs, parseRetryAfterMs } from "../lib/providers/http/backoff.ts";
import { classifyHttpError, errorDetail } from "../lib/providers/http/classify-http-error.ts";
import { anthropicError, startAnthropicServer } from "./helpers/fake-provider-servers.ts";
import { ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";

const headers = (values: Record<string, string> = {}) => new Headers(values);

function classify(status: number, { body = "{}", retryAfter }: { body?: string; retryAfter?: string } = {}) {
  return classifyHttpError({
    status,
    headers: headers(retryAfter ? { "retry-after": retryAfter } : {}),
    bodyText: body,
    provider: "Test API",
    keyEnv: "TEST_KEY",
    secret: "secret-value-1234",
    now: 0,
  });
}

test("backoffDelayMs (property): full jitter stays below an exponential cap bounded by maxMs", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 30 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, draw) => {
        const delay = backoffDelayMs(attempt, { random: () => draw, baseMs: 500, maxMs: 8000 });
        const cap = Math.min(8000, 500 * 2 ** (attempt - 1));
        assert.ok(delay >= 0 && delay < cap, `${delay} in [0, ${cap})`);
      },
    ),
  );
  assert.equal(backoffDelayMs(1, { random: () => 0.999 }), 499);
  assert.equal(backoffDelayMs(3, { random: () => 0.5 }), 1000);
  assert.equal(backoffDelayMs(20, { random: () => 0.5 }), 4000);
});

test("parseRetryAfterMs reads retry-after-ms, seconds, and HTTP dates", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");
  assert.equal(parseRetryAfterMs(headers({ "retry-after-ms": "250.5" }), { now }), 251);
  assert.equal(parseRetryAfterMs(headers({ "retry-after": "3" }), { now }), 3000);
  assert.equal(parseRetryAfterMs(headers({ "retry-after": "0.5" }), { now }), 500);
  assert.equal(parseRetryAfterMs(headers({ "retry-after": "Wed, 01 Jan 2025 00:00:10 GMT" }), { now }), 10_000);
  assert.equal(
    parseRetryAfterMs(headers({ "retry-after": "Tue, 31 Dec 2024 23:59:00 GMT" }), { now }),
    0,
    "a past date means now",
  );
  assert.equal(parseRetryAfterMs(headers({ "retry-after": "soon" }), { now }), null);
  assert.equal(parseRetryAfterMs(headers({ "retry-after-ms": "x", "retry-after": "1" }), { now }), 1000);
  assert.equal(parseRetryAfterMs(headers(), { now }), null);
});

test("classifyHttpError: which statuses are retried, and under which code", () => {
  const table: [number, string, boolean][] = [
    [400, "provider_bad_request", false],
    [401, "provider_auth", false],
    [403, "provider_auth", false],
    [404, "provider_bad_request", false],
    [409, "provider_error", false],
    [413, "provider_bad_request", false],
    [422, "provider_bad_request", false],
    [408, "provider_server_error", true],
    [429, "provider_rate_limited", true],
    [500, "provider_server_error", true],
    [501, "provider_server_error", false],
    [502, "provider_server_error", true],
    [503, "provider_overloaded", true],
    [504, "provider_server_error", true],
    [529, "provider_overloaded", true],
  ];
  for (const [status, code, retryable] of table) {
    const error = classify(status);
    assert.equal(error.code, code, `HTTP ${status}`);
    assert.equal(error.retryable, retryable, `HTTP ${status}`);
    assert.equal(error.status, status);
  }
  assert.equal(classify(429, { retryAfter: "4" }).retryAfterMs, 4000);
});

test("classifyHttpError: a model the API does not serve is model_not_found with a hint (loom models, --models FILE)", () => {
  const anthropic = classify(404, {
    body: JSON.stringify({ type: "error", error: { type: "not_found_error", message: "model: claude-sonnet-4-5" } }),
  });
  assert.equal(anthropic.code, "model_not_found");
  assert.equal(anthropic.retryable, false);
  assert.equal(
    anthropic.message,
    "Test API does not serve this model (HTTP 404): model: claude-sonnet-4-5; see loom models for the ids Loom " +
      "knows, or describe the model in a models file (--models FILE)",
  );
  const openai = classify(404, {
    body: JSON.stringify({ error: { code: "model_not_found", message: "The model `gpt-5-codex` does not exist" } }),
  });
  assert.equal(openai.code, "model_not_found");
  // A 404 that says nothing of a model (a wrong base URL path) stays a bad request.
  assert.equal(classify(404, { body: "Not Found" }).code, "provider_bad_request");
});

test("classifyHttpError: auth failures show no server text; other messages are one redacted line", () => {
  const auth = classify(401, {
    body: JSON.stringify({ error: { message: "Incorrect API key provided: secret-value-1234" } }),
  });
  assert.equal(auth.message, "Test API rejected the API key from TEST_KEY (HTTP 401)");
  const bad = classify(400, { body: JSON.stringify({ error: { message: "bad\n  field  secret-value-1234" } }) });
  assert.equal(bad.message, "Test API rejected the request (HTTP 400): bad field [redacted]");
});

test("errorDetail reads the usual error body shapes and skips HTML pages", () => {
  assert.equal(
    errorDetail(JSON.stringify({ type: "error", error: { type: "x", message: "anthropic style" } })),
    "anthropic style",
  );
  assert.equal(errorDetail(JSON.stringify({ error: "ollama style" })), "ollama style");
  assert.equal(errorDetail(JSON.stringify({ object: "error", message: "vllm style" })), "vllm style");
  assert.equal(
    errorDetail(JSON.stringify({ detail: [{ loc: ["body"], msg: "fastapi style" }] })),
    '[{"loc":["body"],"msg":"fastapi style"}]',
  );
  assert.equal(errorDetail("<html><body>502</body></html>"), null);
  assert.equal(errorDetail("upstream connect error"), "upstream connect error");
  assert.equal(errorDetail("x".repeat(1000))?.length, 301);
});

const retryable = (code = "provider_server_error", retryAfterMs: number | null = null) =>
  new ProviderError("Boom", { code, retryable: true, status: 500, retryAfterMs });

test("withRetry: retries retryable errors up to maxAttempts, then gives up saying so", async () => {
  const sleeps: number[] = [];
  let calls = 0;
  await assert.rejects(
    withRetry(
      () => {
        calls++;
        return Promise.reject(retryable());
      },
      { maxAttempts: 3, sleep: (ms) => Promise.resolve(void sleeps.push(ms)), random: () => 0 },
    ),
    (error: unknown) =>
      error instanceof ProviderError && error.code === "provider_server_error" &&
      /gave up after 3 attempts/.test(error.message),
  );
  assert.equal(calls, 3);
  assert.deepEqual(sleeps, [0, 0]);
});

test("withRetry: errors that are not retryable fail on the first attempt", async () => {
  for (const thrown of [new ProviderError("No", { code: "provider_auth" }), new TypeError("bug")]) {
    let calls = 0;
    await assert.rejects(
      withRetry(
        () => {
          calls++;
          return Promise.reject(thrown);
        },
        { sleep: () => assert.fail("no sleep") },
      ),
      (error: unknown) => error === thrown,
    );
    assert.equal(calls, 1);
  }
});

test("withRetry: a retry-after beyond the limit fails now instead of stalling the run", async () => {
  let calls = 0;
  await assert.rejects(
    withRetry(
      () => {
        calls++;
        return Promise.reject(retryable("provider_rate_limited", 3_600_000));
      },
      { sleep: () => assert.fail("no sleep"), maxRetryAfterMs: 60_000 },
    ),
    (error: unknown) => error instanceof ProviderError && /retry after 3600 s/.test(error.message),
  );
  assert.equal(calls, 1);
});

test("withRetry: returns the first success and passes the attempt number", async () => {
  const seen: number[] = [];
  const result = await withRetry(
    (n) => {
      seen.push(n);
      return n < 3 ? Promise.reject(retryable()) : Promise.resolve("ok");
    },
    { sleep: () => Promise.resolve(), random: () => 0 },
  );
  assert.equal(result, "ok");
  assert.deepEqual(seen, [1, 2, 3]);
});

test("the default sleep rejects with InterruptedError as soon as the signal aborts", async () => {
  const controller = new AbortController();
  const pending = sleep(3_600_000, controller.signal);
  controller.abort();
  await assert.rejects(pending, (error: unknown) => error instanceof InterruptedError);
  await assert.rejects(sleep(10, controller.signal), (error: unknown) => error instanceof InterruptedError);
  await sleep(1);
});

test("withRetry: giving up keeps the report message free of the server's text", async () => {
  const quoting = (retryAfterMs: number | null) =>
    new ProviderError("Test API failed (HTTP 500): echo of the prompt", {
      code: "provider_server_error",
      retryable: true,
      status: 500,
      retryAfterMs,
      reportMessage: "Test API failed (HTTP 500)",
    });
  for (
    const [thrown, why] of [[quoting(null), "gave up after 2 attempts"], [
      quoting(5000),
      "the server asked to retry after 5 s",
    ]] as const
  ) {
    await assert.rejects(
      withRetry(() => Promise.reject(thrown), {
        maxAttempts: 2,
        maxRetryAfterMs: 1000,
        sleep: async () => {},
        random: () => 0,
      }),
      (error: unknown) => {
        assert.ok(error instanceof ProviderError);
        assert.equal(error.message, `Test API failed (HTTP 500): echo of the prompt (${why})`);
        assert.equal(error.reportMessage, `Test API failed (HTTP 500) (${why})`);
        return true;
      },
    );
  }
});

test("a server failing every attempt with the prompt in its error body: the context report never quotes it", async (t) => {
  const canary = "CANARY-prompt-echo-5e7b1d";
  const server = await startAnthropicServer(() => anthropicError(500, { message: `Upstream failed on: ${canary}` }));
  const dir = mkdtempSync(join(tmpdir(), "loom-retry-"));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const provider = createAnthropicProvider(
    { apiKey: "test-key-0000", keyEnv: "TEST_KEY", baseUrl: server.baseUrl, model: "claude-test", maxTokens: 1024 },
    { sleep: async () => {}, random: () => 0 },
  );
  const reportPath = join(dir, "report.json");
  const plan = libraryPlan({ contextReport: reportPath });
  const result = await startRun({ request: sliceRequest({ intent: `Fix it. ${canary}` }) }, plan, {
    provider,
    executor: (store) => new ScriptedExecutor(store),
  });
  assert.equal(server.requests.length, 4, "four attempts");
  assert.equal(result.outcome, "failed");
  // The user's own stderr line may show the server's text; the report may not.
  assert.match(result.error!.message, /gave up after 4 attempts/);
  const text = readFileSync(reportPath, "utf8");
  assert.ok(!text.includes(canary), `the report quotes the server: ${text}`);
  const report = JSON.parse(text);
  assert.equal(report.error.code, "provider_server_error");
  assert.equal(report.error.message, "Anthropic API failed (HTTP 500) (gave up after 4 attempts)");
});
