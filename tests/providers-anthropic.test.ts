// The Anthropic adapter over real HTTP against a local server speaking the Messages API wire format.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadWorkload, replayRecording } from "../bench/workloads.ts";
import { argumentsResponseSchema, runResponseSchema, selectionResponseSchema } from "../lib/vocabulary/answer.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import { InterruptedError, ProviderError } from "../lib/errors.ts";
import { endingOf } from "../lib/ending.ts";
import {
  type AnthropicRequestBody,
  type AnthropicTool,
  convertToAnthropicRequest,
  MAX_CACHE_BREAKPOINTS,
} from "../lib/providers/anthropic/convert-to-anthropic-request.ts";
import { encodePropertyKeys } from "../lib/providers/anthropic/encode-property-keys.ts";
import { renderSection } from "../lib/providers/render-sections.ts";
import { wrapResponseSchema } from "../lib/providers/wrap-response-schema.ts";
import type { CompleteOptions, Provider, Section, TurnRequest } from "../lib/vocabulary/turn.ts";
import { workload, workloadTests } from "./helpers/workloads.ts";
import {
  anthropicAnswer,
  anthropicError,
  anthropicText,
  type FakeProviderServer,
  rejection,
  SAMPLE_MARKERS,
  sampleTurnRequest,
  type Script,
  startAnthropicServer,
  withFakeServer,
} from "./helpers/fake-provider-servers.ts";

const workloadTest = workloadTests(import.meta.url);

const KEY = "sk-ant-test-0123456789abcdef";
const MODEL = "claude-haiku-4-5";

const withServer = (script: Script, run: (server: FakeProviderServer) => Promise<void>) =>
  withFakeServer(startAnthropicServer, script, run);

function provider(
  server: FakeProviderServer,
  { sleeps = [] as number[], timeoutMs = 5_000, maxAttempts = 4 } = {},
): Provider {
  return createProvider(
    { kind: "anthropic", model: MODEL, base_url: server.baseUrl },
    {
      env: { ANTHROPIC_API_KEY: KEY },
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

test("anthropic: a forced-tool answer is unwrapped and all four usage counters map", async () => {
  await withServer([anthropicAnswer({ action: "read_file", reason: "look first" })], async (server) => {
    const answer = await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { action: "read_file", reason: "look first" });
    assert.deepEqual(answer.usage, { input: 2095, cache_read: 8192, cache_write: 1024, output: 503 });
    assert.equal(answer.stop_reason, "tool_use");
    assert.equal((answer.raw as { id: string }).id.startsWith("msg_"), true);
  });
});

test("anthropic: a model that thinks adaptively by default gets room to think (32,000 max_tokens), an older one 8,192", async () => {
  for (
    const [model, expected] of [["claude-sonnet-5-5", 32_000], ["claude-opus-5-5", 32_000], [MODEL, 8192]] as const
  ) {
    const answer = model === MODEL
      ? anthropicAnswer({ action: "finish" })
      : anthropicText(JSON.stringify({ answer: { action: "finish" } }));
    await withServer([answer], async (server) => {
      const p = createProvider({ kind: "anthropic", model, base_url: server.baseUrl }, {
        env: { ANTHROPIC_API_KEY: KEY },
      });
      await p.complete(sampleTurnRequest(), { model });
      assert.equal((server.requests[0].body as { max_tokens: number }).max_tokens, expected, model);
    });
  }
  // A catalog's max_tokens still wins.
  await withServer([anthropicText(JSON.stringify({ answer: { action: "finish" } }))], async (server) => {
    const p = createProvider({
      kind: "anthropic",
      model: "claude-sonnet-5-5",
      base_url: server.baseUrl,
      max_tokens: 4096,
    }, {
      env: { ANTHROPIC_API_KEY: KEY },
    });
    await p.complete(sampleTurnRequest(), { model: "claude-sonnet-5-5" });
    assert.equal((server.requests[0].body as { max_tokens: number }).max_tokens, 4096);
  });
});

test("anthropic: the request carries the key, the API version and JSON to /v1/messages", async () => {
  await withServer([anthropicAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    const [request] = server.requests;
    assert.equal(request.path, "/v1/messages");
    assert.equal(request.headers["x-api-key"], KEY);
    assert.equal(request.headers["anthropic-version"], "2026-10-21");
    assert.match(request.headers["content-type"], /^application\/json/);
    assert.equal(request.headers.authorization, undefined);
  });
});

test("anthropic: the prefix is the system blocks, with breakpoints on the checkpoint block and on the block before it", async () => {
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
    // The intent block ends what stays the same for the whole run; the checkpoint block, what stays until the next one.
    assert.deepEqual(
      body.system.map((block) => block.cache_control ?? null),
      [null, { type: "ephemeral" }, { type: "ephemeral" }],
    );
    assert.equal(body.messages.length, 1);
    assert.equal(body.messages[0].role, "user");
    assert.equal(body.messages[0].content.length, 5, "one event, closing bracket, working state, candidates, lookups");
    assert.deepEqual(
      body.messages[0].content.map((block) => block.cache_control ?? null),
      [{ type: "ephemeral" }, null, { type: "ephemeral" }, null, null],
      "the last event and the working state end what the step's next call reads",
    );
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
    // The intent block, the last event, the working state.
    assert.equal(server.requests[0].rawBody.split('"cache_control"').length - 1, 3);
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

test("anthropic: the response schema is enforced by the phase's forced tool, whose input wraps it as `answer`", async () => {
  await withServer([anthropicAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    const body = server.requests[0].body as {
      tools: {
        name: string;
        input_schema: { type: string; properties: { answer: { anyOf: unknown[] } }; required: string[] };
      }[];
      tool_choice: unknown;
    };
    assert.equal(body.tools.length, 1, "a first call sends its own tool only");
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

const EVENT_MARKERS = ["EVENT-ONE-3c1e", "EVENT-TWO-77d0", "EVENT-THREE-b52a"];

/** The sample request with `n` events, each carrying its own marker. */
function withEvents(request: TurnRequest, n: number): TurnRequest {
  const events = EVENT_MARKERS.slice(0, n).map((note, i) => ({ seq: 41 + i, kind: "read", note }));
  return {
    ...request,
    sections: request.sections.map((s) => (s.section === "events" ? { section: "events", events } : s)),
  };
}

/** An arguments request of the sample slice for `action`, with the loop's schema for it. */
function argumentsRequest(
  action: "read_file" | "edit_file",
  base: TurnRequest = sampleTurnRequest({ lookups: false }),
): TurnRequest {
  const sections: Section[] = base.sections.map((
    s,
  ) => (s.section === "candidates" ? { section: "candidates", action } : s));
  return { phase: "arguments", response_schema: argumentsResponseSchema(action).json, sections };
}

function selectionRequest(base: TurnRequest = sampleTurnRequest({ lookups: false })): TurnRequest {
  return { ...base, response_schema: selectionResponseSchema(["read_file", "edit_file", "finish"]).json };
}

function markerCount(raw: string): number {
  return raw.split('"cache_control"').length - 1;
}

test("anthropic: each event is one block; the last event and the working state are breakpoints; each event is sent once", async () => {
  await withServer([anthropicAnswer({ action: "finish" })], async (server) => {
    await provider(server).complete(withEvents(sampleTurnRequest(), 3), { model: MODEL });
    const { rawBody } = server.requests[0];
    const body = server.requests[0].body as AnthropicRequestBody;
    const content = body.messages[0].content;
    assert.equal(content.length, 7, "three event blocks, the closing bracket, working state, candidates, lookups");
    assert.deepEqual(EVENT_MARKERS.map((marker) => content.findIndex((block) => block.text.includes(marker))), [
      0,
      1,
      2,
    ]);
    assert.deepEqual(content.map((block) => block.cache_control ?? null), [
      null,
      null,
      { type: "ephemeral" },
      null,
      { type: "ephemeral" },
      null,
      null,
    ]);
    assert.deepEqual(body.system!.at(-1)!.cache_control, { type: "ephemeral" });
    assert.equal(markerCount(rawBody), 4, "intent, checkpoint, last event, working state");
    assert.ok(markerCount(rawBody) <= MAX_CACHE_BREAKPOINTS);
    const { events: _, ...others } = SAMPLE_MARKERS;
    for (const marker of [...Object.values(others), ...EVENT_MARKERS]) {
      assert.equal(rawBody.split(marker).length - 1, 1, `${marker} occurs once`);
    }
    // Split, not changed: the event blocks joined are the events section as one text.
    const events = withEvents(sampleTurnRequest(), 3).sections.find((s) => s.section === "events")!;
    assert.equal(content.slice(0, 4).map((block) => block.text).join(""), renderSection(events));
  });
});

test("anthropic: an arguments request forces the answer tool, whose input wraps the request's schema", async () => {
  await withServer([anthropicAnswer({ path: "src/range.py" })], async (server) => {
    const answer = await provider(server).complete(argumentsRequest("read_file"), { model: MODEL });
    assert.deepEqual(answer.value, { path: "src/range.py" });
    const body = server.requests[0].body as AnthropicRequestBody;
    assert.deepEqual(body.tool_choice, { type: "tool", name: "answer" });
    const forced = body.tools!.find((tool) => tool.name === "answer")!;
    assert.deepEqual(
      forced.input_schema,
      encodePropertyKeys(wrapResponseSchema(argumentsResponseSchema("read_file").json)).schema,
    );
  });
});

test("anthropic: with the loop's one response schema, selection and arguments calls send the same tools and tool_choice", () => {
  const options = { model: MODEL, maxTokens: 1024 };
  const schema = runResponseSchema(["read_file", "edit_file", "finish"]).json;
  const calls = [selectionRequest(), argumentsRequest("read_file"), selectionRequest(), argumentsRequest("edit_file")]
    .map((request) => ({ ...request, response_schema: schema }));
  const sent = calls.map((request) => convertToAnthropicRequest(request, options).body);
  for (const body of sent) {
    assert.equal(JSON.stringify(body.tools), JSON.stringify(sent[0].tools), "the tools never change");
    assert.deepEqual(body.tool_choice, { type: "tool", name: "answer" });
  }
  assert.deepEqual(
    sent[0].tools![0].input_schema,
    encodePropertyKeys(wrapResponseSchema(schema)).schema,
    "the forced tool is the run's schema",
  );
});

test("anthropic: a tool whose schema changed replaces the one sent before under its name, in place", () => {
  const options = { model: MODEL, maxTokens: 1024 };
  const first = convertToAnthropicRequest(selectionRequest(), options).body;
  const withArgs = convertToAnthropicRequest(argumentsRequest("read_file"), { ...options, tools: first.tools }).body;
  // Another slice with other actions on the same adapter: its selection schema differs.
  const other = { ...selectionRequest(), response_schema: selectionResponseSchema(["read_file", "finish"]).json };
  const body = convertToAnthropicRequest(other, { ...options, tools: withArgs.tools }).body;
  assert.deepEqual(body.tools!.map((tool) => tool.name), ["answer"]);
  assert.deepEqual(
    body.tools![0],
    convertToAnthropicRequest(other, options).body.tools![0],
    "the forced tool is this request's schema",
  );
});

test("anthropic: breakpoints never exceed the API's four, and one falls on the last event", () => {
  const options = { model: MODEL, maxTokens: 1024 };
  for (const checkpoint of [false, true]) {
    for (let n = 0; n <= 3; n++) {
      const { body } = convertToAnthropicRequest(withEvents(sampleTurnRequest({ checkpoint }), n), options);
      const raw = JSON.stringify(body);
      assert.ok(markerCount(raw) <= MAX_CACHE_BREAKPOINTS);
      // prefix (intent before a checkpoint, and the checkpoint), the last event, the working state
      assert.equal(
        markerCount(raw),
        (checkpoint ? 2 : 1) + (n >= 1 ? 1 : 0) + 1,
        `checkpoint ${checkpoint}, ${n} events`,
      );
      const content = body.messages[0].content;
      if (n >= 1) assert.ok(content[n - 1].cache_control, "the last event");
      for (let i = 0; i < n - 1; i++) assert.equal(content[i].cache_control, undefined);
    }
  }
});

/** What the cache keys on, in order: the tools, then each system block's text, then each message block's text. */
function cacheBlocks(body: AnthropicRequestBody): string[] {
  return [
    JSON.stringify(body.tools),
    ...[...(body.system ?? []), ...body.messages[0].content].map((block) => block.text),
  ];
}

/** The index in cacheBlocks() of the breakpoint on the last event (the last breakpoint before the closing "]"). */
function lastEventBreakpoint(body: AnthropicRequestBody): number {
  const blocks = [...(body.system ?? []), ...body.messages[0].content];
  const close = blocks.findIndex((block) => block.text === "]");
  if (close === -1) return (body.system ?? []).length; // no events: the end of the system blocks
  return 1 + blocks.slice(0, close).findLastIndex((block) => block.cache_control !== undefined);
}

workloadTest(
  "anthropic: replaying a real trajectory bounded, each call reads the previous call's prefix up to the events",
  async () => {
    const path = workload("mini-swe-agent/django__django-11138.json");
    const { recording } = loadWorkload({
      system: "mini-swe-agent",
      name: "django__django-11138.json",
      path,
      format: "mini-swe-agent",
    });
    const requests: TurnRequest[] = [];
    await replayRecording(recording, "bounded", {
      wrap: (scripted) => ({
        name: scripted.name,
        capabilities: scripted.capabilities,
        complete: (request: TurnRequest, options: CompleteOptions) => {
          requests.push(request);
          return scripted.complete(request, options);
        },
      }),
    });
    assert.ok(requests.length > 200, `${requests.length} calls`);

    let tools: AnthropicTool[] = [];
    const bodies = requests.map((request) => {
      const { body } = convertToAnthropicRequest(request, { model: MODEL, maxTokens: 1024, tools });
      tools = body.tools!;
      return body;
    });
    let total = 0;
    let hit = 0;
    let chained = 0;
    for (const [i, body] of bodies.entries()) {
      const raw = JSON.stringify(body);
      assert.ok(markerCount(raw) <= MAX_CACHE_BREAKPOINTS);
      // Each section once, nothing added: the blocks are the sections' texts.
      const texts = [...(body.system ?? []), ...body.messages[0].content].map((b) => b.text).join("");
      assert.equal(texts, requests[i].sections.map(renderSection).join(""));
      const events = requests[i].sections.find((s) => s.section === "events") as { events: unknown[] };
      const system = body.system ?? [];
      assert.ok(system.at(-1)?.cache_control);
      if (events.events.length >= 1) assert.ok(body.messages[0].content[events.events.length - 1].cache_control);
      // One tool and one tool_choice for the whole run.
      if (i > 0) assert.equal(JSON.stringify(body.tools), JSON.stringify(bodies[i - 1].tools), `call ${i}`);
      assert.equal(body.tool_choice!.name, "answer");

      // While the checkpoint is the same, each call reads the previous call's prefix through its last event.
      const blocks = cacheBlocks(body);
      total += blocks.reduce((sum, block) => sum + block.length, 0);
      const before = i > 0 ? bodies[i - 1] : undefined;
      const same = (key: "system" | "tools") => JSON.stringify(before?.[key]) === JSON.stringify(body[key]);
      if (before && same("system") && same("tools")) {
        const cached = cacheBlocks(before).slice(0, lastEventBreakpoint(before) + 1);
        assert.deepEqual(blocks.slice(0, cached.length), cached, `call ${i} reads call ${i - 1}'s prefix`);
        hit += cached.reduce((sum, block) => sum + block.length, 0);
        // Counted when the reused prefix reaches into the events.
        if (cached.length > 1 + system.length) chained += 1;
      }
    }
    assert.ok(
      chained > 0.9 * bodies.length,
      `${chained} of ${bodies.length} calls reuse the previous call's prefix`,
    );
    assert.ok(hit / total > 0.75, `cache-hit share ${(hit / total).toFixed(3)}`);
  },
);

test("anthropic: a lookup answered under its alias comes back under its own key", async () => {
  await withServer([anthropicAnswer({ _result: "sha256:abc#lines=1-5" })], async (server) => {
    const answer = await provider(server).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(answer.value, { $result: "sha256:abc#lines=1-5" });
  });
});

test("anthropic: usage fields the API did not send are null, never 0", async () => {
  await withServer(
    [
      anthropicAnswer({ action: "finish" }, { usage: null }),
      anthropicAnswer({ action: "finish" }, { usage: { input_tokens: 12, output_tokens: 3 } }),
    ],
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
  await withServer(
    [anthropicText('```json\n{"action":"finish"}\n```'), anthropicText("I cannot decide.")],
    async (server) => {
      const p = provider(server);
      const json = await p.complete(sampleTurnRequest(), { model: MODEL });
      assert.deepEqual(json.value, { action: "finish" });
      assert.equal(json.stop_reason, "end");
      const text = await p.complete(sampleTurnRequest(), { model: MODEL });
      assert.equal(text.value, "I cannot decide.");
    },
  );
});

test("anthropic: 429 with retry-after waits what the server asked, then succeeds", async () => {
  const script = [
    anthropicError(429, {
      type: "rate_limit_error",
      message: "Number of request tokens has exceeded your per-minute rate limit",
      headers: { "retry-after": "7" },
    }),
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
  const script = [
    anthropicError(429, { type: "rate_limit_error", headers: { "retry-after-ms": "1500", "retry-after": "2" } }),
    anthropicAnswer({ action: "finish" }),
  ];
  await withServer(script, async (server) => {
    const sleeps: number[] = [];
    await provider(server, { sleeps }).complete(sampleTurnRequest(), { model: MODEL });
    assert.deepEqual(sleeps, [1500]);
  });
});

test("anthropic: 500 and 529 are retried with jittered exponential backoff, then succeed", async () => {
  const script = [
    anthropicError(500),
    anthropicError(529, { type: "overloaded_error", message: "Overloaded" }),
    anthropicAnswer({ action: "finish" }),
  ];
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
    const error = await rejection(
      provider(server, { timeoutMs: 100, maxAttempts: 1 }).complete(sampleTurnRequest(), { model: MODEL }),
    );
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
  const script = [
    anthropicError(401, { type: "authentication_error", message: `invalid x-api-key ${KEY}` }),
    anthropicAnswer({ action: "finish" }),
  ];
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
  await withServer(
    [anthropicError(400, { type: "invalid_request_error", message: "max_tokens: Field required" })],
    async (server) => {
      const error = await rejection(provider(server).complete(sampleTurnRequest(), { model: MODEL }));
      assert.ok(error instanceof ProviderError);
      assert.equal(error.code, "provider_bad_request");
      assert.match(error.message, /HTTP 400.*max_tokens: Field required/);
      assert.equal(server.requests.length, 1);
    },
  );
});

test("anthropic: aborting the signal while the call hangs interrupts it", async () => {
  await withServer([{ hang: true }], async (server) => {
    const controller = new AbortController();
    const call = provider(server, { timeoutMs: 60_000 }).complete(sampleTurnRequest(), {
      model: MODEL,
      signal: controller.signal,
    });
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await rejection(call);
    assert.ok(error instanceof InterruptedError);
    assert.equal(endingOf({ threw: error }).exitCode, 130);
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
