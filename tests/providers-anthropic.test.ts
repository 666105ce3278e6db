// The Anthropic adapter over real HTTP against a local server speaking the Messages API wire format.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createProvider } from "../lib/adapters/providers/create-provider.ts";
import { InterruptedError, ProviderError } from "../lib/errors.ts";
import type { Provider } from "../lib/turn.ts";
import {
  anthropicAnswer,
  anthropicError,
  anthropicText,
  SAMPLE_MARKERS,
  sampleTurnRequest,
  startAnthropicServer,
  type FakeProviderServer,
  type Script,
} from "./helpers/fake-provider-servers.ts";

const KEY = "sk-ant-test-0123456789abcdef";
const MODEL = "claude-sonnet-4-5";

async function withServer(script: Script, run: (server: FakeProviderServer) => Promise<void>): Promise<void> {
  const server = await startAnthropicServer(script);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

function provider(server: FakeProviderServer, { sleeps = [] as number[], timeoutMs = 5_000, maxAttempts = 4 } = {}): Provider {
  return createProvider(
    { kind: "anthropic", model: MODEL, base_url: server.baseUrl },
    {
      env: { ANTHROPIC_API_KEY: KEY },
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
      timeoutMs,
      maxAttempts,
    },
  );
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected the call to fail");
}

test("anthropic: a forced-tool answer is unwrapped and all four usage counters map", async () => {
  await withServer([anthropicAnswer({ action: "read_file", reason: "look first" })], async (server) => {
    const answer = await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { action: "read_file", reason: "look first" });
    assert.deepEqual(answer.usage, { input: 2095, cache_read: 8192, cache_write: 1024, output: 503 });
    assert.equal(answer.stop_reason, "tool_use");
    assert.equal((answer.raw as { id: string }).id.startsWith("msg_"), true);
  });
});

test("anthropic: the request carries the key, the API version and JSON to /v1/messages", async () => {
  await withServer([anthropicAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    const [request] = server.requests;
    assert.equal(request.path, "/v1/messages");
    assert.equal(request.headers["x-api-key"], KEY);
    assert.equal(request.headers["anthropic-version"], "2023-06-01");
    assert.match(request.headers["content-type"], /^application\/json/);
    assert.equal(request.headers.authorization, undefined);
  });
});

test("anthropic: the prefix is the system blocks with one cache breakpoint, on the last prefix block", async () => {
  await withServer([anthropicAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    const body = server.requests[0].body as {
      model: string;
      max_tokens: number;
      system: { type: string; text: string; cache_control?: unknown }[];
      messages: { role: string; content: { type: string; text: string; cache_control?: unknown }[] }[];
    };
    assert.equal(body.model, MODEL);
    assert.equal(body.max_tokens, 8192);
    assert.equal(body.system.length, 3);
    assert.ok(body.system[0].text.includes(SAMPLE_MARKERS.instructions));
    assert.ok(body.system[1].text.includes(SAMPLE_MARKERS.intent));
    assert.ok(body.system[2].text.includes(SAMPLE_MARKERS.checkpoint));
    assert.deepEqual(
      body.system.map((block) => block.cache_control ?? null),
      [null, null, { type: "ephemeral" }],
    );
    assert.equal(body.messages.length, 1);
    assert.equal(body.messages[0].role, "user");
    assert.equal(body.messages[0].content.length, 4, "events, working state, candidates, lookups");
    assert.ok(body.messages[0].content.every((block) => block.cache_control === undefined));
  });
});

test("anthropic: without a checkpoint the breakpoint moves to the intent block", async () => {
  await withServer([anthropicAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest({ checkpoint: false }), { model: MODEL });
    const body = server.requests[0].body as { system: { text: string; cache_control?: unknown }[] };
    assert.equal(body.system.length, 2);
    assert.ok(body.system[1].text.includes(SAMPLE_MARKERS.intent));
    assert.deepEqual(body.system[1].cache_control, { type: "ephemeral" });
    assert.equal(body.system[0].cache_control, undefined);
  });
});

test("anthropic: no section content is sent twice", async () => {
  await withServer([anthropicAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    const raw = server.requests[0].rawBody;
    for (const marker of Object.values(SAMPLE_MARKERS)) {
      assert.equal(raw.split(marker).length - 1, 1, `${marker} occurs once`);
    }
  });
});

test("anthropic: the response schema is enforced by one forced tool whose input wraps it as `answer`", async () => {
  await withServer([anthropicAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    const body = server.requests[0].body as {
      tools: { name: string; input_schema: { type: string; properties: { answer: { anyOf: unknown[] } }; required: string[] } }[];
      tool_choice: unknown;
    };
    assert.equal(body.tools.length, 1);
    assert.equal(body.tools[0].name, "answer");
    assert.deepEqual(body.tool_choice, { type: "tool", name: "answer" });
    const schema = body.tools[0].input_schema;
    assert.equal(schema.type, "object");
    assert.deepEqual(schema.required, ["answer"]);
    assert.equal(schema.properties.answer.anyOf.length, 4);
    // Anthropic accepts property keys matching ^[a-zA-Z0-9_.-]{1,64}$ only; "$result" is sent as an alias.
    const keys = JSON.stringify(schema).match(/"\$[a-z_]+"\s*:/g);
    assert.equal(keys, null, "no $-prefixed property key is sent");
    assert.ok(JSON.stringify(schema).includes('"_result"'));
  });
});

test("anthropic: a lookup answered under its alias comes back under its own key", async () => {
  await withServer([anthropicAnswer({ _result: "sha256:abc#lines=1-5" })], async (server) => {
    const answer = await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { $result: "sha256:abc#lines=1-5" });
  });
});

test("anthropic: usage fields the API did not send are null, never 0", async () => {
  await withServer(
    [anthropicAnswer({ action: "finish" }, { usage: null }), anthropicAnswer({ action: "finish" }, { usage: { input_tokens: 12, output_tokens: 3 } })],
    async (server) => {
      const p = provider(server);
      const none = await p.complete(sampleTurnRequest(), { model: MODEL });
      assert.deepEqual(none.usage, { input: null, cache_read: null, cache_write: null, output: null });
      const partial = await p.complete(sampleTurnRequest(), { model: MODEL });
      assert.deepEqual(partial.usage, { input: 12, cache_read: null, cache_write: null, output: 3 });
    },
  );
});

test("anthropic: a text reply without the tool is parsed as JSON when it is JSON, kept as text otherwise", async () => {
  await withServer([anthropicText('```json\n{"action":"finish"}\n```'), anthropicText("I cannot decide.")], async (server) => {
    const p = provider(server);
    const json = await p.complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(json.value, { action: "finish" });
    assert.equal(json.stop_reason, "end");
    const text = await p.complete(sampleTurnRequest(), { model: MODEL });
    assert.equal(text.value, "I cannot decide.");
  });
});

test("anthropic: 429 with retry-after waits what the server asked, then succeeds", async () => {
  const script = [
    anthropicError(429, { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit", headers: { "retry-after": "7" } }),
    anthropicAnswer({ action: "finish" }),
  ];
  await withServer(script, async (server) => {
    const sleeps: number[] = [];
    const answer = await provider(server, { sleeps }).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { action: "finish" });
    assert.deepEqual(sleeps, [7000]);
    assert.equal(server.requests.length, 2);
    assert.deepEqual(server.requests[0].body, server.requests[1].body, "the retry sends the same request");
  });
});

test("anthropic: retry-after-ms takes precedence over retry-after", async () => {
  const script = [anthropicError(429, { type: "rate_limit_error", headers: { "retry-after-ms": "1500", "retry-after": "2" } }), anthropicAnswer({ action: "finish" })];
  await withServer(script, async (server) => {
    const sleeps: number[] = [];
    await provider(server, { sleeps }).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(sleeps, [1500]);
  });
});

test("anthropic: 500 and 529 are retried with jittered exponential backoff, then succeed", async () => {
  const script = [anthropicError(500), anthropicError(529, { type: "overloaded_error", message: "Overloaded" }), anthropicAnswer({ action: "finish" })];
  await withServer(script, async (server) => {
    const sleeps: number[] = [];
    const answer = await provider(server, { sleeps }).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { action: "finish" });
    assert.equal(server.requests.length, 3);
    // random() = 0.5: half of the 500 ms and 1000 ms caps.
    assert.deepEqual(sleeps, [250, 500]);
  });
});

test("anthropic: an overload that persists fails after the bounded number of attempts", async () => {
  const overloaded = anthropicError(529, { type: "overloaded_error", message: "Overloaded" });
  await withServer([overloaded, overloaded, overloaded, overloaded, overloaded], async (server) => {
    const error = await rejection(provider(server).complete(sampleTurnRequest(), { model: MODEL }));
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "provider_overloaded");
    assert.equal(error.status, 529);
    assert.equal(error.retryable, true);
    assert.match(error.message, /Overloaded.*gave up after 4 attempts/);
    assert.equal(server.requests.length, 4);
  });
});

test("anthropic: a body that is not JSON, or not a message, is a malformed response and is not retried", async () => {
  await withServer([{ rawBody: "{not json" }, { body: { type: "message", role: "assistant" } }], async (server) => {
    const p = provider(server);
    const notJson = await rejection(p.complete(sampleTurnRequest(), { model: MODEL }));
    assert.ok(notJson instanceof ProviderError);
    assert.equal(notJson.code, "provider_malformed_response");
    const wrongShape = await rejection(p.complete(sampleTurnRequest(), { model: MODEL }));
    assert.ok(wrongShape instanceof ProviderError);
    assert.equal(wrongShape.code, "provider_malformed_response");
    assert.match(wrongShape.message, /content/);
    assert.equal(server.requests.length, 2);
  });
});

test("anthropic: a server that hangs past the timeout gives provider_timeout", async () => {
  await withServer([{ hang: true }], async (server) => {
    const error = await rejection(provider(server, { timeoutMs: 100, maxAttempts: 1 }).complete(sampleTurnRequest(), { model: MODEL }));
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "provider_timeout");
    assert.equal(error.retryable, true);
  });
});

test("anthropic: a timed-out call is retried", async () => {
  await withServer([{ hang: true }, anthropicAnswer({ action: "finish" })], async (server) => {
    const sleeps: number[] = [];
    const answer = await provider(server, { sleeps, timeoutMs: 100 }).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { action: "finish" });
    assert.equal(server.requests.length, 2);
    assert.equal(sleeps.length, 1);
  });
});

test("anthropic: 401 fails at once with one line naming the variable, never the key", async () => {
  const script = [anthropicError(401, { type: "authentication_error", message: `invalid x-api-key ${KEY}` }), anthropicAnswer({ action: "finish" })];
  await withServer(script, async (server) => {
    const error = await rejection(provider(server).complete(sampleTurnRequest(), { model: MODEL }));
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "provider_auth");
    assert.equal(error.retryable, false);
    assert.equal(error.status, 401);
    assert.match(error.message, /ANTHROPIC_API_KEY/);
    assert.ok(!error.message.includes(KEY));
    assert.ok(!error.message.includes(KEY.slice(0, 12)));
    assert.ok(!error.message.includes("\n"));
    assert.equal(server.requests.length, 1);
  });
});

test("anthropic: 400 fails at once as a bad request with the API's message", async () => {
  await withServer([anthropicError(400, { type: "invalid_request_error", message: "max_tokens: Field required" })], async (server) => {
    const error = await rejection(provider(server).complete(sampleTurnRequest(), { model: MODEL }));
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "provider_bad_request");
    assert.match(error.message, /HTTP 400.*max_tokens: Field required/);
    assert.equal(server.requests.length, 1);
  });
});

test("anthropic: aborting the signal while the call hangs interrupts it", async () => {
  await withServer([{ hang: true }], async (server) => {
    const controller = new AbortController();
    const call = provider(server, { timeoutMs: 60_000 }).complete(sampleTurnRequest(), { model: MODEL, signal: controller.signal });
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await rejection(call);
    assert.ok(error instanceof InterruptedError);
    assert.equal(error.exitCode, 130);
  });
});

test("anthropic: an unreachable server is retried, then reported with its address", async () => {
  const server = await startAnthropicServer([]);
  await server.close();
  const sleeps: number[] = [];
  const error = await rejection(provider(server, { sleeps }).complete(sampleTurnRequest(), { model: MODEL }));
  assert.ok(error instanceof ProviderError);
  assert.equal(error.code, "provider_unreachable");
  assert.ok(error.message.includes(server.origin));
  assert.equal(sleeps.length, 3);
});
