// The OpenAI and OpenAI-compatible adapters over real HTTP against a local server speaking Chat Completions.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createProvider } from "../lib/run/create-provider.ts";
import { InterruptedError, ProviderError } from "../lib/errors.ts";
import type { ProviderConfig } from "../lib/settings/provider-config.ts";
import type { Provider } from "../lib/vocabulary/turn.ts";
import {
  type FakeProviderServer,
  openAIAnswer,
  openAIError,
  openAIText,
  rejection,
  SAMPLE_MARKERS,
  sampleTurnRequest,
  type Script,
  startOpenAIServer,
  withFakeServer,
} from "./helpers/fake-provider-servers.ts";

const KEY = "sk-proj-test-abcdef0123456789";
const MODEL = "gpt-4o-2024-08-06";

type Body = {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; strict: boolean; schema: Record<string, any> } };
  max_tokens?: number;
  max_completion_tokens?: number;
};

const withServer = (script: Script, run: (server: FakeProviderServer) => Promise<void>) =>
  withFakeServer(startOpenAIServer, script, run);

function provider(
  server: FakeProviderServer,
  { sleeps = [] as number[], timeoutMs = 5_000, maxAttempts = 4, config = {} as Partial<ProviderConfig> } = {},
): Provider {
  return createProvider(
    { kind: "openai", model: MODEL, base_url: server.baseUrl, ...config },
    {
      env: { OPENAI_API_KEY: KEY },
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
      random: () => 0.5,
      timeoutMs,
      maxAttempts,
    },
  );
}

test("openai: a json_schema answer is unwrapped and usage maps, cache writes null", async () => {
  await withServer([openAIAnswer({ action: "read_file", reason: "look first" })], async (server) => {
    const answer = await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { action: "read_file", reason: "look first" });
    assert.deepEqual(answer.usage, { input: 86, cache_read: 1920, cache_write: null, output: 300 });
    assert.equal(answer.stop_reason, "end");
  });
});

test("openai: the request goes to /v1/chat/completions with a bearer key", async () => {
  await withServer([openAIAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    const [request] = server.requests;
    assert.equal(request.path, "/v1/chat/completions");
    assert.equal(request.headers.authorization, `Bearer ${KEY}`);
    assert.match(request.headers["content-type"], /^application\/json/);
    assert.equal(request.headers["x-api-key"], undefined);
  });
});

test("openai: the prefix is the system message, the rest one user message, each section once", async () => {
  await withServer([openAIAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    const body = server.requests[0].body as Body;
    assert.equal(body.model, MODEL);
    assert.deepEqual(
      body.messages.map((m) => m.role),
      ["system", "user"],
    );
    const [system, user] = body.messages;
    for (const marker of [SAMPLE_MARKERS.instructions, SAMPLE_MARKERS.intent, SAMPLE_MARKERS.checkpoint]) {
      assert.ok(system.content.includes(marker));
    }
    for (const marker of [SAMPLE_MARKERS.events, SAMPLE_MARKERS.working_state, SAMPLE_MARKERS.lookups]) {
      assert.ok(user.content.includes(marker));
    }
    assert.ok(system.content.indexOf(SAMPLE_MARKERS.instructions) < system.content.indexOf(SAMPLE_MARKERS.intent));
    assert.ok(system.content.indexOf(SAMPLE_MARKERS.intent) < system.content.indexOf(SAMPLE_MARKERS.checkpoint));
    assert.ok(user.content.indexOf(SAMPLE_MARKERS.events) < user.content.indexOf(SAMPLE_MARKERS.lookups));
    for (const marker of Object.values(SAMPLE_MARKERS)) {
      assert.equal(server.requests[0].rawBody.split(marker).length - 1, 1, `${marker} occurs once`);
    }
    assert.equal(body.max_completion_tokens, undefined, "no output limit unless configured");
  });
});

test("openai: the system message is byte-identical between calls that share a prefix", async () => {
  await withServer([openAIAnswer({ action: "finish" }), openAIAnswer({ action: "finish" })], async (server) => {
    const p = provider(server);
    await p.complete(sampleTurnRequest(), { model: MODEL });
    await p.complete(sampleTurnRequest({ lookups: false }), { model: MODEL });
    const [a, b] = server.requests.map((r) => (r.body as Body).messages[0].content);
    assert.equal(a, b);
  });
});

test("openai: the response schema is enforced strictly: object root, closed objects, every property required", async () => {
  await withServer([openAIAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    const format = (server.requests[0].body as Body).response_format;
    assert.equal(format?.type, "json_schema");
    assert.equal(format?.json_schema?.name, "answer");
    assert.equal(format?.json_schema?.strict, true);
    const schema = format!.json_schema!.schema;
    assert.equal(schema.type, "object");
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required, ["answer"]);
    const [decision, result] = schema.properties.answer.anyOf;
    assert.deepEqual(decision.required, ["action", "reason"]);
    assert.deepEqual(
      decision.properties.reason.type,
      ["string", "null"],
      "the optional reason is required but nullable",
    );
    assert.equal(decision.additionalProperties, false);
    assert.deepEqual(result.required, ["$result"]);
  });
});

test("openai: nulls standing for omitted optional properties are dropped from the answer", async () => {
  await withServer([openAIAnswer({ action: "finish", reason: null })], async (server) => {
    const answer = await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { action: "finish" });
  });
});

test("openai: a configured max_tokens is sent as max_completion_tokens", async () => {
  await withServer([openAIAnswer({ action: "finish" })], async (server) => {
    await provider(server, { config: { max_tokens: 1000 } }).complete(sampleTurnRequest(), { model: MODEL });
    const body = server.requests[0].body as Body;
    assert.equal(body.max_completion_tokens, 1000);
    assert.equal(body.max_tokens, undefined);
  });
});

test("openai: usage fields the API did not send are null, never 0", async () => {
  await withServer(
    [
      openAIAnswer({ action: "finish" }, { usage: null }),
      openAIAnswer({ action: "finish" }, { usage: { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 } }),
    ],
    async (server) => {
      const p = provider(server);
      const none = await p.complete(sampleTurnRequest(), { model: MODEL });
      assert.deepEqual(none.usage, { input: null, cache_read: null, cache_write: null, output: null });
      const partial = await p.complete(sampleTurnRequest(), { model: MODEL });
      assert.deepEqual(partial.usage, { input: 40, cache_read: null, cache_write: null, output: 5 });
    },
  );
});

test("openai: a refusal becomes the answer text with stop reason refusal", async () => {
  const refusal = {
    body: {
      id: "chatcmpl-r",
      object: "chat.completion",
      created: 1,
      model: MODEL,
      choices: [{
        index: 0,
        message: { role: "assistant", content: null, refusal: "I can't help with that." },
        finish_reason: "stop",
      }],
    },
  };
  await withServer([refusal], async (server) => {
    const answer = await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    assert.equal(answer.value, "I can't help with that.");
    assert.equal(answer.stop_reason, "refusal");
  });
});

test("openai: 429 with retry-after (seconds) waits that long, then succeeds", async () => {
  const script = [
    openAIError(429, {
      type: "requests",
      code: "rate_limit_exceeded",
      message: "Rate limit reached for requests",
      headers: { "retry-after": "2" },
    }),
    openAIAnswer({ action: "finish" }),
  ];
  await withServer(script, async (server) => {
    const sleeps: number[] = [];
    const answer = await provider(server, { sleeps }).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { action: "finish" });
    assert.deepEqual(sleeps, [2000]);
    assert.equal(server.requests.length, 2);
  });
});

test("openai: 500 and 503 are retried with backoff, then succeed", async () => {
  const script = [
    openAIError(500),
    openAIError(503, { message: "The engine is currently overloaded" }),
    openAIAnswer({ action: "finish" }),
  ];
  await withServer(script, async (server) => {
    const sleeps: number[] = [];
    const answer = await provider(server, { sleeps }).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { action: "finish" });
    assert.deepEqual(sleeps, [250, 500]);
    assert.equal(server.requests.length, 3);
  });
});

test("openai: a malformed body is reported as such and not retried", async () => {
  await withServer(
    [{ rawBody: "<html>502 Bad Gateway</html>" }, { body: { object: "chat.completion", choices: [] } }],
    async (server) => {
      const p = provider(server);
      const html = await rejection(p.complete(sampleTurnRequest(), { model: MODEL }));
      assert.ok(html instanceof ProviderError);
      assert.equal(html.code, "provider_malformed_response");
      const empty = await rejection(p.complete(sampleTurnRequest(), { model: MODEL }));
      assert.ok(empty instanceof ProviderError);
      assert.equal(empty.code, "provider_malformed_response");
      assert.equal(server.requests.length, 2);
    },
  );
});

test("openai: a server that hangs past the timeout gives provider_timeout", async () => {
  await withServer([{ hang: true }], async (server) => {
    const error = await rejection(
      provider(server, { timeoutMs: 100, maxAttempts: 1 }).complete(sampleTurnRequest(), { model: MODEL }),
    );
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "provider_timeout");
  });
});

test("openai: 401 fails at once, names OPENAI_API_KEY and never echoes the key", async () => {
  const script = [
    openAIError(401, {
      type: "invalid_request_error",
      code: "invalid_api_key",
      message: `Incorrect API key provided: ${KEY}.`,
    }),
    openAIAnswer({ action: "finish" }),
  ];
  await withServer(script, async (server) => {
    const error = await rejection(provider(server).complete(sampleTurnRequest(), { model: MODEL }));
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "provider_auth");
    assert.match(error.message, /OPENAI_API_KEY/);
    assert.ok(!error.message.includes(KEY));
    assert.equal(server.requests.length, 1);
  });
});

test("openai: a 404 model_not_found and a 422 fail at once (model_not_found, a bad request), the key redacted from the server's text", async () => {
  const script = [
    openAIError(404, {
      type: "invalid_request_error",
      code: "model_not_found",
      message: "The model `gpt-9` does not exist",
    }),
    openAIError(422, { type: "invalid_request_error", message: `Bad schema near ${KEY}` }),
  ];
  await withServer(script, async (server) => {
    const p = provider(server, { config: { model: "gpt-9" } });
    // the call names the model as a slice does ("PROVIDER/MODEL"); the adapter's configured id is what is sent
    const missing = await rejection(p.complete(sampleTurnRequest(), { model: "openai/gpt-9" }));
    assert.ok(missing instanceof ProviderError);
    assert.equal(missing.code, "model_not_found");
    assert.equal(missing.retryable, false);
    assert.match(missing.message, /gpt-9.*loom models/);
    assert.equal((server.requests[0].body as Body).model, "gpt-9", "the configured model wins over the call's");
    const invalid = await rejection(p.complete(sampleTurnRequest(), { model: MODEL }));
    assert.ok(invalid instanceof ProviderError);
    assert.equal(invalid.code, "provider_bad_request");
    assert.ok(!invalid.message.includes(KEY));
    assert.match(invalid.message, /\[redacted\]/);
    assert.equal(server.requests.length, 2);
  });
});

test("openai: an abort during the backoff sleep interrupts without another request", async () => {
  await withServer([openAIError(500), openAIAnswer({ action: "finish" })], async (server) => {
    const controller = new AbortController();
    const p = createProvider(
      { kind: "openai", model: MODEL, base_url: server.baseUrl },
      {
        env: { OPENAI_API_KEY: KEY },
        sleep: () => {
          controller.abort();
          return Promise.resolve();
        },
      },
    );
    const error = await rejection(p.complete(sampleTurnRequest(), { model: MODEL, signal: controller.signal }));
    assert.ok(error instanceof InterruptedError);
    assert.equal(server.requests.length, 1);
  });
});

// ---- OpenAI-compatible local servers (Ollama, vLLM, llama.cpp) ----

function local(server: FakeProviderServer, config: Partial<ProviderConfig> = {}): Provider {
  return createProvider({ kind: "openai-compatible", model: "qwen2.5-coder:7b", base_url: server.baseUrl, ...config }, {
    env: {},
    random: () => 0,
  });
}

test("openai-compatible: no key is needed and no authorization header is sent", async () => {
  await withServer([
    openAIAnswer({ action: "finish" }, { usage: { prompt_tokens: 310, completion_tokens: 12, total_tokens: 322 } }),
  ], async (server) => {
    const p = local(server);
    // A local server's model: its prefix cache is the server's own, read from its counters when it reports them.
    assert.deepEqual(p.capabilities, { prompt_caching: true, schema_enforcement: true });
    const answer = await p.complete(sampleTurnRequest(), { model: "qwen2.5-coder:7b" });
    assert.deepEqual(answer.value, { action: "finish" });
    assert.deepEqual(answer.usage, { input: 310, cache_read: null, cache_write: null, output: 12 });
    assert.equal(server.requests[0].headers.authorization, undefined);
    assert.equal((server.requests[0].body as Body).response_format?.type, "json_schema");
  });
});

test("openai-compatible: max_tokens is sent under its classic name", async () => {
  await withServer([openAIAnswer({ action: "finish" })], async (server) => {
    await local(server, { max_tokens: 512 }).complete(sampleTurnRequest(), { model: "m" });
    const body = server.requests[0].body as Body;
    // A selection's own cap (256 tokens), under the configured 512 (lib/providers/openai/output-cap.ts).
    assert.equal(body.max_tokens, 256);
    assert.equal(body.max_completion_tokens, undefined);
  });
});

test("openai-compatible: json_object mode asks for JSON and shows the schema once, in the user message", async () => {
  await withServer([openAIAnswer({ action: "finish" }, { wrapped: false })], async (server) => {
    const p = local(server, { response_format: "json_object" });
    assert.equal(p.capabilities.schema_enforcement, false);
    const answer = await p.complete(sampleTurnRequest(), { model: "m" });
    assert.deepEqual(answer.value, { action: "finish" });
    const body = server.requests[0].body as Body;
    assert.deepEqual(body.response_format, { type: "json_object" });
    assert.match(body.messages[1].content, /JSON Schema/);
    assert.equal(server.requests[0].rawBody.split("Digest of an archived event").length - 1, 1);
    assert.ok(!body.messages[0].content.includes("JSON Schema"), "the schema stays out of the cacheable prefix");
  });
});

test("openai-compatible: with no response format the text is parsed when it is JSON and kept otherwise", async () => {
  await withServer(
    [openAIText('```json\n{"$result": "sha256:ab"}\n```'), openAIText("Sure! I will read the file.")],
    async (server) => {
      const p = local(server, { response_format: "none" });
      const json = await p.complete(sampleTurnRequest(), { model: "m" });
      assert.deepEqual(json.value, { $result: "sha256:ab" });
      const text = await p.complete(sampleTurnRequest(), { model: "m" });
      assert.equal(text.value, "Sure! I will read the file.");
      assert.equal((server.requests[0].body as Body).response_format, undefined);
    },
  );
});

test("openai-compatible: llama.cpp-style cached prompt tokens are read as cache reads", async () => {
  const usage = {
    prompt_tokens: 900,
    completion_tokens: 20,
    total_tokens: 920,
    prompt_tokens_details: { cached_tokens: 850 },
  };
  await withServer([openAIAnswer({ action: "finish" }, { usage })], async (server) => {
    const answer = await local(server).complete(sampleTurnRequest(), { model: "m" });
    assert.deepEqual(answer.usage, { input: 50, cache_read: 850, cache_write: null, output: 20 });
  });
});

test("openai-compatible: 401 from a server that wants a key says how to give it one", async () => {
  await withServer([openAIError(401, { message: "Invalid API Key" })], async (server) => {
    const error = await rejection(local(server).complete(sampleTurnRequest(), { model: "m" }));
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "provider_auth");
    assert.match(error.message, /api_key_env/);
  });
});

test("openai-compatible: a key named by api_key_env is sent as a bearer token", async () => {
  await withServer([openAIAnswer({ action: "finish" })], async (server) => {
    const p = createProvider(
      { kind: "openai-compatible", model: "m", base_url: server.baseUrl, api_key_env: "VLLM_API_KEY" },
      { env: { VLLM_API_KEY: "local-secret-key" } },
    );
    await p.complete(sampleTurnRequest(), { model: "m" });
    assert.equal(server.requests[0].headers.authorization, "Bearer local-secret-key");
  });
});
