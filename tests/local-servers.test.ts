// Each row of docs/providers.md's local-server table, against a stand-in that behaves as that server is documented
// to behave (tests/helpers/local-server-stand-ins.ts): what Loom sends, what the server accepts or rejects, and what
// Loom makes of the answer.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { createProvider } from "../lib/run/create-provider.ts";
import { providerForModel } from "../lib/run/provider-for-model.ts";
import { resolveSettings } from "../lib/settings/settings.ts";

/** A "PROVIDER/MODEL" run's provider settings with --base-url URL, as a run resolves them. */
function settingsOf(model: string, baseUrl: string, env: Record<string, string | undefined>) {
  const resolved = resolveSettings({ flags: { model, base_url: baseUrl }, env });
  if (!resolved.ok) throw new Error(resolved.message);
  return resolved.settings.provider;
}
import { ProviderError } from "../lib/errors.ts";
import { numCtxFor } from "../lib/providers/ollama/ollama-context.ts";
import { classifyHttpError } from "../lib/providers/http/classify-http-error.ts";
import type { TurnRequest } from "../lib/vocabulary/turn.ts";
import { rejection, sampleTurnRequest } from "./helpers/fake-provider-servers.ts";
import {
  type StandIn,
  startLlamaCppStandIn,
  startLmStudioStandIn,
  startOllamaStandIn,
  startOpenRouterStandIn,
  startVllmStandIn,
  tokensOf,
} from "./helpers/local-server-stand-ins.ts";

const FAST = { sleep: async () => {}, maxAttempts: 1 };

async function using(server: Promise<StandIn>, run: (s: StandIn) => Promise<void>): Promise<void> {
  const s = await server;
  try {
    await run(s);
  } finally {
    await s.close();
  }
}

/** A request whose prefix is about `kib` KiB: Loom's first requests are 6-8 KiB, bounded ones up to 64 KiB. */
function requestOf(kib: number): TurnRequest {
  const base = sampleTurnRequest();
  const filler = "the loom weaves one bounded step at a time. ".repeat(Math.ceil((kib * 1024) / 44));
  return { ...base, sections: [{ section: "instructions", text: filler }, ...base.sections.slice(1)] };
}

const errorOf = async (promise: Promise<unknown>) => {
  const error = await rejection(promise);
  assert.ok(error instanceof ProviderError, `expected a ProviderError, got ${error}`);
  return error;
};

test("ollama: the native /api/chat with options.num_ctx sized from the request, the schema as format, usage from the counts", async () => {
  await using(startOllamaStandIn({ models: { "qwen2.5-coder:7b": { context_length: 32768 } } }), async (server) => {
    const provider = createProvider({ kind: "ollama", model: "qwen2.5-coder:7b", base_url: server.baseUrl }, {
      env: {},
      ...FAST,
    });
    const request = requestOf(8);
    const answer = await provider.complete(request, { model: "qwen2.5-coder:7b" });
    assert.deepEqual(answer.value, { action: "finish" });
    assert.deepEqual(server.requests.map((r) => r.path), ["/api/show", "/api/chat"]);
    const body = server.requests[1].body as {
      stream: boolean;
      format: { type: string; properties: { answer: unknown } };
      options: { num_ctx: number };
      messages: unknown;
    };
    assert.equal(body.stream, false);
    assert.equal(body.format.type, "object");
    assert.deepEqual(body.format.properties.answer, request.response_schema);
    const sent = tokensOf(body.messages);
    assert.ok(
      body.options.num_ctx >= sent + 4096,
      `num_ctx ${body.options.num_ctx} holds ${sent} tokens and the answer`,
    );
    assert.ok(body.options.num_ctx <= 32768);
    // Nothing was dropped: the server read every token sent.
    assert.equal(answer.usage.input, sent);
    assert.equal(answer.usage.cache_read, null);
    assert.equal(answer.usage.cache_write, null);
    assert.ok((answer.usage.output ?? 0) > 0);
    // The model is described once per provider, not once per call.
    await provider.complete(request, { model: "qwen2.5-coder:7b" });
    assert.deepEqual(server.requests.map((r) => r.path), ["/api/show", "/api/chat", "/api/chat"]);
  });
});

test("ollama: the OpenAI-compatible endpoint Loom used before runs at the 2,048-token default and drops the rest silently", async () => {
  await using(startOllamaStandIn({ models: { "qwen2.5-coder:7b": { context_length: 32768 } } }), async (server) => {
    const provider = createProvider(
      { kind: "openai-compatible", model: "qwen2.5-coder:7b", base_url: `${server.baseUrl}/v1` },
      { env: {}, ...FAST },
    );
    const answer = await provider.complete(requestOf(8), { model: "qwen2.5-coder:7b" });
    const sent = tokensOf(server.requests[0].body.messages);
    assert.ok((answer.usage.input ?? 0) < sent, `HTTP 200, yet only ${answer.usage.input} of ${sent} tokens read`);
  });
});

test("ollama: a request over the model's own context fails before the prompt is sent, naming both sizes", async () => {
  await using(startOllamaStandIn({ models: { tiny: { context_length: 4096 } } }), async (server) => {
    const provider = providerForModel("ollama/tiny", settingsOf("ollama/tiny", server.baseUrl, {}), {
      env: {},
      http: FAST,
    });
    const error = await errorOf(provider.complete(requestOf(16), { model: "ollama/tiny" }));
    assert.equal(error.code, "provider_context_exceeded");
    assert.match(error.message, /"tiny" holds 4096 tokens of context; this request needs about \d+/);
    assert.deepEqual(server.requests.map((r) => r.path), ["/api/show"], "no /api/chat was sent");
  });
});

test("ollama: a prompt that filled the whole window fails the call instead of going on with a truncated one", async () => {
  // A tokenizer denser than Loom's 3-bytes-per-token estimate (1.5 bytes per token): the window Loom asked for is too
  // small, the server truncates silently, and only its counts show it.
  const dense = (messages: unknown) => Math.ceil(new TextEncoder().encode(JSON.stringify(messages)).length / 1.5);
  await using(startOllamaStandIn({ models: { m: { context_length: 65536 } }, tokenize: dense }), async (server) => {
    const provider = createProvider({ kind: "ollama", model: "m", base_url: server.baseUrl }, { env: {}, ...FAST });
    const error = await errorOf(provider.complete(requestOf(24), { model: "m" }));
    assert.equal(error.code, "provider_context_exceeded");
    assert.match(error.message, /may have dropped part of the request/);
  });
});

test("ollama: a model the server does not have is its 404, with its words, before any prompt is sent", async () => {
  await using(startOllamaStandIn({ models: {} }), async (server) => {
    const provider = providerForModel("ollama/llama9", settingsOf("ollama/llama9", server.baseUrl, {}), {
      env: {},
      http: FAST,
    });
    const error = await errorOf(provider.complete(requestOf(1), { model: "ollama/llama9" }));
    assert.equal(error.code, "model_not_found");
    assert.equal(error.status, 404);
    assert.match(error.message, /not found/);
    assert.deepEqual(server.requests.map((r) => r.path), ["/api/show"]);
  });
});

test("LM Studio: the default json_schema and 'none' complete; json_object, the old docs' fallback, is its 400", async () => {
  await using(startLmStudioStandIn(), async (server) => {
    const make = (response_format: "json_schema" | "json_object" | "none") =>
      createProvider({ kind: "openai-compatible", model: "qwen3-8b", base_url: server.baseUrl, response_format }, {
        env: {},
        ...FAST,
      });
    assert.deepEqual((await make("json_schema").complete(sampleTurnRequest(), { model: "m" })).value, {
      action: "finish",
    });
    const sent = server.requests[0].body.response_format as { type: string; json_schema: { schema: unknown } };
    assert.equal(sent.type, "json_schema");
    assert.equal(typeof sent.json_schema.schema, "object");
    const error = await errorOf(make("json_object").complete(sampleTurnRequest(), { model: "m" }));
    assert.equal(error.code, "provider_bad_request");
    assert.match(error.message, /'response_format\.type' must be 'json_schema' or 'text'/);
    // With none the schema is in the prompt and the answer parsed from the text.
    const none = await make("none").complete(sampleTurnRequest(), { model: "m" });
    assert.deepEqual(none.value, { answer: { action: "finish" } });
    assert.equal(server.requests[2].body.response_format, undefined);
  });
});

test("llama.cpp: json_schema completes, cached_tokens is the cache read, a prompt over -c is provider_context_exceeded", async () => {
  await using(startLlamaCppStandIn({ contextSize: 4096 }), async (server) => {
    const provider = createProvider({ kind: "openai-compatible", model: "local", base_url: server.baseUrl }, {
      env: {},
      ...FAST,
    });
    const first = await provider.complete(requestOf(2), { model: "local" });
    const second = await provider.complete(requestOf(2), { model: "local" });
    assert.equal(first.usage.cache_read, 0);
    assert.ok((second.usage.cache_read ?? 0) > 0, "the second call read the kept prefix");
    // The four counters never overlap: what was evaluated plus what was reused is the server's prompt_tokens.
    const usage = (second.raw as { usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } } })
      .usage;
    assert.equal((second.usage.input ?? 0) + (second.usage.cache_read ?? 0), usage.prompt_tokens);
    assert.equal(second.usage.cache_read, usage.prompt_tokens_details.cached_tokens);
    assert.equal(second.timings?.cache_n, second.usage.cache_read);
    assert.equal(second.timings?.prompt_n, second.usage.input);
    const error = await errorOf(provider.complete(requestOf(32), { model: "local" }));
    assert.equal(error.code, "provider_context_exceeded");
    assert.equal(error.retryable, false);
    assert.match(error.message, /the prompt is \d+ tokens, the server's context 4096/);
    assert.equal(server.requests.length, 3, "a refused prompt is not retried");
  });
});

test("llama.cpp: /v1/messages and /v1/responses ignore the schema (free text back, refused by Loom's own check); their errors are OpenAI-shaped", async () => {
  await using(startLlamaCppStandIn({ contextSize: 8192 }), async (server) => {
    // Pointed at the Anthropic-shaped endpoint, Loom still validates: the free text is no answer of the schema.
    const anthropic = createProvider({ kind: "anthropic", model: "local", base_url: server.origin }, {
      env: { ANTHROPIC_API_KEY: "unused" },
      ...FAST,
    });
    const answer = await anthropic.complete(sampleTurnRequest(), { model: "local" });
    assert.equal(typeof answer.value, "string", "not JSON: the stage re-asks, then refuses the step (invalid_answer)");
    assert.ok(server.requests.some((r) => r.path === "/v1/messages"));
    // Its errors come in the OpenAI shape ({error: {code, message, type}}): Loom reads their message all the same.
    const error = classifyHttpError({
      status: 400,
      headers: new Headers(),
      bodyText: JSON.stringify({
        error: { code: 400, message: "Field 'max_tokens': type must be number", type: "invalid_request_error" },
      }),
      provider: "Anthropic API",
      keyEnv: "ANTHROPIC_API_KEY",
      secret: "unused",
      now: 0,
    });
    assert.equal(error.code, "provider_bad_request");
    assert.match(error.message, /Field 'max_tokens': type must be number/);
    // A local server's model goes through Chat Completions, where response_format is a grammar.
    const local = createProvider({ kind: "openai-compatible", model: "local", base_url: server.baseUrl }, {
      env: {},
      ...FAST,
    });
    assert.deepEqual((await local.complete(sampleTurnRequest(), { model: "local" })).value, { action: "finish" });
    assert.ok(server.requests.every((r) => r.path !== "/v1/responses"), "Loom never calls /v1/responses locally");
  });
});

test("llama.cpp with a Gemma-style template: Loom's one system and one user message pass; a template's refusal is said in its own words", async () => {
  await using(startLlamaCppStandIn({ contextSize: 8192, alternating: true }), async (server) => {
    const provider = createProvider({ kind: "openai-compatible", model: "local", base_url: server.baseUrl }, {
      env: {},
      ...FAST,
    });
    assert.deepEqual((await provider.complete(sampleTurnRequest(), { model: "local" })).value, { action: "finish" });
    const roles = (server.requests[0]?.body.messages as { role: string }[]).map((m) => m.role);
    assert.deepEqual(roles, ["system", "user"]);
    // What the server answers to two user turns in a row: the reason, which comes last in its long message, is kept.
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "local",
        messages: [{ role: "user", content: "a" }, { role: "user", content: "b" }],
      }),
    });
    const error = classifyHttpError({
      status: response.status,
      headers: response.headers,
      bodyText: await response.text(),
      provider: "OpenAI-compatible server",
      keyEnv: null,
      secret: null,
      now: 0,
    });
    assert.equal(error.code, "provider_bad_request");
    assert.match(
      error.message,
      /HTTP 400\): the model's chat template refused it: Conversation roles must alternate user\/assistant/,
    );
  });
});

test("vLLM: the key from api_key_env as a bearer token (401 without), json_schema completes, over max-model-len is 400", async () => {
  await using(startVllmStandIn({ apiKey: "vllm-key-1234", maxModelLen: 4096 }), async (server) => {
    const config = {
      kind: "openai-compatible" as const,
      model: "Qwen/Qwen2.5-Coder-7B-Instruct",
      base_url: server.baseUrl,
    };
    const keyless = createProvider(config, { env: {}, ...FAST });
    const auth = await errorOf(keyless.complete(sampleTurnRequest(), { model: "m" }));
    assert.equal(auth.code, "provider_auth");
    const provider = createProvider({ ...config, api_key_env: "VLLM_API_KEY" }, {
      env: { VLLM_API_KEY: "vllm-key-1234" },
      ...FAST,
    });
    assert.deepEqual((await provider.complete(sampleTurnRequest(), { model: "m" })).value, { action: "finish" });
    const long = await errorOf(provider.complete(requestOf(32), { model: "m" }));
    assert.equal(long.code, "provider_bad_request");
    assert.match(long.message, /maximum context length is 4096 tokens/);
  });
});

test("OpenRouter: Claude models get cache markers on the prefix and before the candidates, so the second call reads", async () => {
  await using(startOpenRouterStandIn({ apiKey: "or-key-5678" }), async (server) => {
    const env = { OPENROUTER_API_KEY: "or-key-5678" };
    const claude = providerForModel(
      "openrouter/anthropic/claude-sonnet-5-5",
      settingsOf("openrouter/anthropic/claude-sonnet-5-5", server.baseUrl, env),
      {
        env,
        http: FAST,
      },
    );
    assert.equal(claude.capabilities.prompt_caching, true);
    await claude.complete(requestOf(8), { model: "openrouter/anthropic/claude-sonnet-5-5" });
    const second = await claude.complete(requestOf(8), { model: "openrouter/anthropic/claude-sonnet-5-5" });
    assert.ok((second.usage.cache_read ?? 0) > 2000, `read ${second.usage.cache_read} tokens from the cache`);
    const messages = server.requests[0].body.messages as { role: string; content: { cache_control?: unknown }[] }[];
    assert.equal(server.requests[0].body.model, "anthropic/claude-sonnet-5-5");
    assert.deepEqual(messages[0].content.at(-1)?.cache_control, { type: "ephemeral" });
    assert.deepEqual(messages[1].content[0].cache_control, { type: "ephemeral" });
    assert.equal(messages[1].content.filter((p) => p.cache_control).length, 1);
    // Any other model: plain Chat Completions strings, as before.
    const other = providerForModel(
      "openrouter/openai/gpt-5.6",
      settingsOf("openrouter/openai/gpt-5.6", server.baseUrl, env),
      { env, http: FAST },
    );
    await other.complete(requestOf(1), { model: "openrouter/openai/gpt-5.6" });
    assert.equal(typeof (server.requests[2].body.messages as { content: unknown }[])[0].content, "string");
  });
});

test("OpenRouter: the markers follow the model table, so a Claude id the table does not list gets none and one warning", async () => {
  await using(startOpenRouterStandIn({ apiKey: "or-key-5678" }), async (server) => {
    const warnings: string[] = [];
    const provider = providerForModel(
      "openrouter/anthropic/claude-sonnet-9-9",
      settingsOf("openrouter/anthropic/claude-sonnet-9-9", server.baseUrl, { OPENROUTER_API_KEY: "or-key-5678" }),
      {
        env: { OPENROUTER_API_KEY: "or-key-5678" },
        http: FAST,
        warn: (message) => warnings.push(message),
      },
    );
    assert.equal(provider.capabilities.prompt_caching, false);
    await provider.complete(requestOf(1), { model: "openrouter/anthropic/claude-sonnet-9-9" });
    assert.equal(typeof (server.requests[0].body.messages as { content: unknown }[])[0].content, "string");
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /not in Loom's model table/);
  });
});

test("OpenRouter as a plain OpenAI-compatible server (what Loom could do before): Claude never reads the cache", async () => {
  await using(startOpenRouterStandIn({ apiKey: "or-key-5678" }), async (server) => {
    const provider = createProvider({
      kind: "openai-compatible",
      model: "anthropic/claude-sonnet-5-5",
      base_url: server.baseUrl,
      api_key_env: "OPENROUTER_API_KEY",
    }, { env: { OPENROUTER_API_KEY: "or-key-5678" }, ...FAST });
    await provider.complete(requestOf(8), { model: "m" });
    const second = await provider.complete(requestOf(8), { model: "m" });
    assert.equal(second.usage.cache_read, 0);
  });
});

test("numCtxFor: a power of two of at least 8,192 that holds the estimate and the answer, never over the model's context", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 4_000_000 }),
      fc.option(fc.integer({ min: 1, max: 200_000 }), { nil: undefined }),
      fc.option(fc.integer({ min: 512, max: 2_000_000 }), { nil: null }),
      (promptBytes, maxTokens, contextLength) => {
        const needed = Math.ceil(promptBytes / 3) + (maxTokens ?? 4096);
        let size: number;
        try {
          size = numCtxFor({ promptBytes, maxTokens, contextLength, model: "m" });
        } catch (error) {
          assert.ok(error instanceof ProviderError && error.code === "provider_context_exceeded");
          assert.ok(contextLength !== null && needed > contextLength, "refused only what cannot fit");
          return;
        }
        assert.ok(size >= needed, `${size} holds ${needed}`);
        if (contextLength === null) {
          assert.ok(size >= 8192 && Number.isInteger(Math.log2(size)), `${size} is a power of two`);
        } else {
          assert.ok(size <= contextLength);
          assert.ok(size === contextLength || (size >= 8192 && Number.isInteger(Math.log2(size))));
        }
      },
    ),
  );
});
