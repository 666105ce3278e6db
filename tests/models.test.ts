// Models are data (SPEC §9): the model table decides how each model is called, a retired model stops the run before
// any call, an unknown id runs on conservative defaults with one warning, prices and cache rules come from the table,
// and the stand-ins reject what the real APIs reject — each test here fails on the code before the table.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { ModelProvider, PROVIDER_KINDS } from "../lib/models/provider-kinds.ts";
import { cacheRulesOf, mergeModels, resolveModel } from "../lib/models/models.ts";
import { BUILT_IN_PRICES, costOf, priceOf } from "../lib/prices.ts";
import { convertAnthropicUsage } from "../lib/providers/anthropic/convert-anthropic-usage.ts";
import { convertOpenAIUsage } from "../lib/providers/openai/convert-openai-usage.ts";
import { convertToOpenAIRequest } from "../lib/providers/openai/convert-to-openai-request.ts";
import { runResponseSchema, stepResponseSchema, withoutActionName } from "../lib/vocabulary/answer.ts";
import { ACTION_NAMES, ActionArguments } from "../lib/vocabulary/actions.ts";
import { convertToStrictJsonSchema } from "../lib/providers/openai/convert-to-strict-json-schema.ts";
import { wrapResponseSchema } from "../lib/providers/wrap-response-schema.ts";
import fc from "fast-check";
import { renderModels } from "../commands/models.ts";
import { parseModels } from "../commands/models-table.ts";
import {
  anthropicAnswer,
  anthropicText,
  type FakeProviderServer,
  openAIAnswer,
  openAIText,
  sampleTurnRequest,
  sharedFirstKey,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const FINISH = [{ action: "finish" }, { status: "success", summary: "Nothing to do." }];

async function withDir(run: (dir: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), "loom-models-"));
  try {
    await run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `loom run "Nothing to do" -m MODEL --json` against a stand-in; the server is closed afterwards. */
async function runPrompt(
  server: FakeProviderServer,
  model: string,
  { extra = [], dir }: { extra?: string[]; dir: string },
) {
  const env = model.startsWith("anthropic/")
    ? { ANTHROPIC_BASE_URL: server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-models" }
    : { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-models" };
  const { io, out } = fakeIo({ cwd: dir, env });
  const format = extra.includes("--output-format") ? [] : ["--json"];
  const code = await main(["run", "Nothing to do", "--model", model, ...format, ...extra], io);
  return { code, ...out };
}

test("a retired model stops the run before any call, with one line naming its replacement (exit 3)", async () => {
  await withDir(async (dir) => {
    const server = await startAnthropicServer(() => anthropicAnswer({ action: "finish" }));
    try {
      for (const id of ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929"]) {
        const { io, out } = fakeIo({
          cwd: dir,
          env: { ANTHROPIC_BASE_URL: server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-models" },
        });
        const code = await main(["run", "Nothing to do", "-m", `anthropic/${id}`], io);
        assert.equal(code, 3);
        assert.equal(out.stderr, "loom run: claude-sonnet-4-5 was retired on 2026-11-30; use claude-sonnet-5-5\n");
      }
      assert.equal(server.requests.length + server.rejections.length, 0, "no request was sent");
    } finally {
      await server.close();
    }
  });
});

test("gpt-5-codex (shut down 2026-07-23) stops before any call naming gpt-5.4, exit 3", async () => {
  await withDir(async (dir) => {
    const server = await startOpenAIServer(() => openAIAnswer({ action: "finish" }));
    try {
      const run = await runPrompt(server, "openai/gpt-5-codex", { dir });
      assert.equal(run.code, 3);
      assert.equal(run.stderr, "loom run: gpt-5-codex was retired on 2026-07-23; use gpt-5.4\n");
      assert.equal(server.requests.length + server.rejections.length, 0, "no request was sent");
    } finally {
      await server.close();
    }
  });
});

test("within 30 days of an announced shutdown a run warns once with the date and the replacement; earlier, not at all", () => {
  const env = { OPENAI_API_KEY: "k" };
  for (
    const [today, expected] of [
      ["2026-12-03", ['model "openai/gpt-5" shuts down on 2026-12-11 (in 8 days); use gpt-6.1-sol']],
      ["2026-12-10", ['model "openai/gpt-5" shuts down on 2026-12-11 (in 1 day); use gpt-6.1-sol']],
      ["2026-11-10", []],
    ] as const
  ) {
    const warnings: string[] = [];
    createProvider({ kind: "openai", model: "gpt-5" }, { env, today, warn: (m) => warnings.push(m) });
    assert.deepEqual(warnings, expected, today);
  }
  assert.throws(
    () => createProvider({ kind: "openai", model: "gpt-5" }, { env, today: "2026-12-11" }),
    (e: Error & { code?: string }) => e.code === "model_retired" && /use gpt-6\.1-sol/.test(e.message),
  );
});

test("a long prompt bills the whole call at the tier: GPT-5.6 Luna over 272K tokens costs 2x input and 1.5x output", () => {
  const price = priceOf(BUILT_IN_PRICES, "openai/gpt-5.6-luna");
  assert.deepEqual([price?.input, price?.cache_read, price?.output], [0.2, 0.02, 1.2]);
  const usage = (input: number) => ({ input, output: 1_000_000, cache_read: 0, cache_write: 0 });
  const short = costOf(usage(272_000), price);
  const long = costOf(usage(272_001), price);
  assert.ok(short && long);
  assert.equal(short.output, 1.2);
  assert.ok(Math.abs(long.output - 1.8) < 1e-12, String(long.output));
  assert.ok(Math.abs(long.input - (272_001 * 0.4) / 1e6) < 1e-12);
  // Haiku 5.5: over 100K prompt tokens every rate is 5x.
  const haiku = priceOf(BUILT_IN_PRICES, "anthropic/claude-haiku-5-5");
  assert.ok(Math.abs((costOf(usage(100_001), haiku)?.output ?? 0) - 2.5) < 1e-12);
});

test("a model the table does not know runs like its family (claude-*: its most conservative settings) with one warning naming the entry assumed", async () => {
  await withDir(async (dir) => {
    const server = await startAnthropicServer((_, i) => anthropicText(JSON.stringify(FINISH[i])));
    try {
      const run = await runPrompt(server, "anthropic/claude-sonnet-9", { dir });
      assert.equal(run.code, 0, run.stderr);
      const warnings = run.stderr.split("\n").filter((line) => line.includes("not in Loom's model table"));
      assert.deepEqual(warnings, [
        'loom run: model "anthropic/claude-sonnet-9" is not in Loom\'s model table: running it like ' +
        '"anthropic/claude-sonnet-4-6", its family (messages, prompt, price unknown); describe it in ' +
        "a models file (loom schema models) and pass --models FILE",
      ]);
      // The family's most conservative answer mode (the schema in the prompt): never a forced tool (rejected by the
      // 5.5 models), nor output_config.format (which older models never had).
      for (const request of server.requests) {
        const body = request.body as Record<string, unknown>;
        assert.equal(body.tool_choice, undefined);
        assert.equal(body.output_config, undefined, "no output_config.format");
        assert.equal((body as { model: string }).model, "claude-sonnet-9", "its own id is sent");
      }
      assert.equal(JSON.parse(run.stdout).outcome, "completed");
    } finally {
      await server.close();
    }
  });
});

test("a models file describes a new model; loom models lists the table as text and JSON; a bad file names the field", async () => {
  await withDir(async (dir) => {
    const file = join(dir, "models.jsonc");
    const entry = { ...BUILT_IN_MODELS.models["anthropic/claude-sonnet-5-5"], source: "https://example.com/x" };
    writeFileSync(file, JSON.stringify({ format: 1, currency: "USD", models: { "anthropic/claude-sonnet-9": entry } }));
    const server = await startAnthropicServer((_, i) => anthropicAnswer(FINISH[i]));
    try {
      const run = await runPrompt(server, "anthropic/claude-sonnet-9", { dir, extra: ["--models", file] });
      assert.equal(run.code, 0, run.stderr);
      assert.ok(!run.stderr.includes("not in Loom's model table"));
      assert.equal((server.requests[0].body as { output_config?: unknown }).output_config !== undefined, true);
      assert.ok(JSON.parse(run.stdout).cost, "priced from the file");
    } finally {
      await server.close();
    }
    const text = fakeIo({ cwd: dir });
    assert.equal(await main(["models", "--models", file], text.io), 0);
    assert.match(text.out.stdout, /^anthropic\/claude-sonnet-9 +messages +output_config_format +1M\/128K +512 5m,1h/m);
    assert.match(text.out.stdout, /^anthropic\/claude-sonnet-4-5 .*retired 2026-11-30: use claude-sonnet-5-5$/m);
    const json = fakeIo({ cwd: dir });
    assert.equal(await main(["models", "--json"], json.io), 0);
    assert.deepEqual(JSON.parse(json.out.stdout), BUILT_IN_MODELS);
    writeFileSync(file, JSON.stringify({ format: 1, currency: "USD", models: { "anthropic/x": { api: "soap" } } }));
    const bad = fakeIo({ cwd: dir });
    assert.equal(await main(["models", "--models", file], bad.io), 2);
    assert.match(bad.out.stderr, /^loom models: Invalid models file ".*models\.jsonc": models\.anthropic\/x\.api: /);
  });
});

test("every built-in entry has a source and a date; every retired one names a replacement the table knows", () => {
  for (const [key, entry] of Object.entries(BUILT_IN_MODELS.models)) {
    assert.match(entry.source, /^https:\/\//, key);
    assert.match(entry.date, /^20\d\d-\d\d-\d\d$/, key);
    if (entry.retired) {
      const provider = key.slice(0, key.indexOf("/")) as "anthropic" | "openai";
      assert.ok(resolveModel(BUILT_IN_MODELS, provider, entry.retired.replacement).known, key);
    }
  }
  assert.equal(
    parseModels(JSON.stringify(BUILT_IN_MODELS), { file: "x" }).models["openai/gpt-5.6-sol"].api,
    "responses",
  );
  assert.deepEqual(mergeModels(BUILT_IN_MODELS, null), BUILT_IN_MODELS);
  assert.match(renderModels(BUILT_IN_MODELS, { today: "2026-12-01" }), /^openai\/gpt-5-codex +responses /m);
});

test("cache rules come from the table: minimum cacheable prompt and lifetimes per model, defaults for unknown ids", () => {
  assert.deepEqual(cacheRulesOf(BUILT_IN_MODELS, "anthropic/claude-sonnet-5-5"), {
    min_tokens: 512,
    ttls: ["5m", "1h"],
    breakpoints: "explicit",
  });
  assert.equal(cacheRulesOf(BUILT_IN_MODELS, "anthropic/claude-haiku-4-5")?.min_tokens, 4096);
  assert.equal(cacheRulesOf(BUILT_IN_MODELS, "anthropic/claude-sonnet-5")?.min_tokens, 1024);
  assert.equal(cacheRulesOf(BUILT_IN_MODELS, "openai/gpt-5.6")?.breakpoints, "explicit_or_automatic");
  // An unknown id of a known family takes the family's cache rules; one of no known family the defaults.
  assert.equal(cacheRulesOf(BUILT_IN_MODELS, "anthropic/claude-next")?.min_tokens, 4096, "claude-*: the largest");
  assert.equal(cacheRulesOf(BUILT_IN_MODELS, "openai/gpt-6.9-nova")?.breakpoints, "explicit_or_automatic");
  assert.equal(cacheRulesOf(BUILT_IN_MODELS, "openai/o9-mini")?.breakpoints, "automatic", "no family: the default");
  assert.equal(cacheRulesOf(BUILT_IN_MODELS, "openai-compatible/qwen3"), null);
  assert.equal(cacheRulesOf(BUILT_IN_MODELS, "gemini/x"), null);
});

test("one-hour writes are read from cache_creation and cost 2x input; GPT-5.6 writes are read and cost 1.25x", () => {
  const usage = convertAnthropicUsage({
    input_tokens: 100,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 400_000,
    cache_creation: { ephemeral_5m_input_tokens: 300_000, ephemeral_1h_input_tokens: 100_000 },
    output_tokens: 10,
  });
  assert.equal(usage.cache_write_1h, 100_000);
  const sonnet = priceOf(BUILT_IN_PRICES, "anthropic/claude-sonnet-5-5")!;
  // 300k at $2.50 (1.25x) + 100k at $4 (2x); before, all 400k at $2.50 = $1.00.
  assert.ok(Math.abs(costOf(usage, sonnet)!.cache_write - 1.15) < 1e-9);
  assert.equal(convertAnthropicUsage({ input_tokens: 1, output_tokens: 1 }).cache_write_1h, undefined);

  const gpt = convertOpenAIUsage({
    input_tokens: 10_000,
    input_tokens_details: { cached_tokens: 2_000, cache_write_tokens: 8_000 },
    output_tokens: 100,
  });
  assert.deepEqual(gpt, { input: 0, cache_read: 2_000, cache_write: 8_000, output: 100 });
  const sol = priceOf(BUILT_IN_PRICES, "openai/gpt-5.6")!;
  assert.equal(sol, priceOf(BUILT_IN_PRICES, "openai/gpt-5.6-sol"), "an alias costs what its model costs");
  const cost = costOf(gpt, sol)!;
  assert.ok(Math.abs(cost.cache_write - 8_000 * 5 / 1e6) < 1e-12, "writes at 1.25x $4");
  assert.ok(Math.abs(cost.cache_read - 2_000 * 0.4 / 1e6) < 1e-12);
  // Models before GPT-5.6 bill no writes: a write costs the input rate.
  const older = costOf(
    { input: 0, cache_read: 0, cache_write: 1_000_000, output: 0 },
    priceOf(BUILT_IN_PRICES, "openai/gpt-5")!,
  )!;
  assert.equal(older.cache_write, 1.25);
});

test("a refusal ends the step as model_refused without asking again (Anthropic stop_reason, OpenAI message.refusal)", async () => {
  await withDir(async (dir) => {
    const anthropic = await startAnthropicServer(() => ({
      body: {
        id: "msg_r",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-5-5",
        content: [{ type: "text", text: "I can't help with that." }],
        stop_reason: "refusal",
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    }));
    const openai = await startOpenAIServer(() => {
      const refused = openAIText("", { model: "gpt-4.1" });
      const body = refused.body as { choices: { message: Record<string, unknown> }[] };
      body.choices[0].message = { role: "assistant", content: null, refusal: "I can't help with that." };
      return refused;
    });
    try {
      for (const [server, model] of [[anthropic, "anthropic/claude-sonnet-5-5"], [openai, "openai/gpt-4.1"]] as const) {
        const run = await runPrompt(server, model, {
          dir,
          extra: ["--max-steps", "1", "--output-format", "stream-json"],
        });
        const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
        assert.equal(server.requests.length, 1, `${model}: one call, no re-ask`);
        const step = events.find((e) => e.type === "step-executed");
        assert.equal(step?.refusal, "model_refused", model);
        assert.equal(step?.executed, false, model);
      }
    } finally {
      await anthropic.close();
      await openai.close();
    }
  });
});

test("stand-ins reject what the APIs document: a forced tool on Sonnet 5.5, identical first keys in a strict union, a Responses-only model on Chat Completions, a shut-down model, between_tools at xhigh, an effort the model lacks", async () => {
  const anthropic = await startAnthropicServer(() => anthropicAnswer({ action: "finish" }));
  const openai = await startOpenAIServer(() => openAIAnswer({ action: "finish" }));
  try {
    const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    const forced = await post(`${anthropic.baseUrl}/v1/messages`, {
      model: "claude-sonnet-5-5",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ name: "answer", input_schema: { type: "object" } }],
      tool_choice: { type: "tool", name: "answer" },
    });
    assert.equal(forced.status, 400);
    const sampling = await post(`${anthropic.baseUrl}/v1/messages`, {
      model: "claude-sonnet-5-5",
      max_tokens: 10,
      temperature: 1,
      messages: [{ role: "user", content: "hi" }],
    }, { "anthropic-version": "2026-10-21" });
    assert.match(JSON.stringify(await sampling.json()), /temperature: Extra inputs are not permitted/);
    // The two-call union as Loom sent it before: read_file, edit_file and write_file all started with `path`.
    const before = {
      anyOf: [
        { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
        { type: "object", properties: { path: { type: "string" }, search: { type: "string" } }, required: ["path"] },
      ],
    };
    assert.equal(sharedFirstKey(before), "path");
    const union = await post(`${openai.baseUrl}/chat/completions`, {
      model: "gpt-4.1",
      messages: [{ role: "user", content: "hi" }],
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: before, strict: true } },
    });
    assert.equal(union.status, 400);
    assert.match(JSON.stringify(await union.json()), /must not share identical first keys/);
    const pro = await post(`${openai.baseUrl}/chat/completions`, {
      model: "gpt-5-pro",
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(pro.status, 400);
    assert.match(JSON.stringify(await pro.json()), /only supported in v1\/responses/);
    // A shut-down model answers 404 model_not_found, which Loom reports as model_not_found.
    const codex = await post(`${openai.baseUrl}/responses`, { model: "gpt-5-codex", input: "hi" });
    assert.equal(codex.status, 404);
    assert.match(JSON.stringify(await codex.json()), /"code":"model_not_found"/);
    // Sonnet 5.5's between_tools at effort xhigh; effort values per model (max on GPT-5, none on GPT-6.1 Sol).
    const between = await post(`${anthropic.baseUrl}/v1/messages`, {
      model: "claude-sonnet-5-5",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
      thinking: { type: "between_tools" },
      output_config: { effort: "xhigh" },
    });
    assert.equal(between.status, 400);
    const effort = await post(`${openai.baseUrl}/chat/completions`, {
      model: "gpt-5",
      messages: [{ role: "user", content: "hi" }],
      reasoning_effort: "max",
    });
    assert.equal(effort.status, 400);
    const none = await post(`${openai.baseUrl}/responses`, {
      model: "gpt-6.1-sol",
      input: "hi",
      reasoning: { effort: "none" },
    });
    assert.equal(none.status, 400);
    assert.equal(anthropic.rejections.length + openai.rejections.length, 8);
    assert.equal(anthropic.requests.length + openai.requests.length, 0);
  } finally {
    await anthropic.close();
    await openai.close();
  }
});

test("the union Loom sends puts a distinct discriminator first: the strict stand-in accepts it where it rejected the old one", () => {
  const schema = runResponseSchema(["read_file", "edit_file", "write_file", "run_tests", "finish"]).json;
  assert.equal(sharedFirstKey(schema), null);
  const { body } = convertToOpenAIRequest({ ...sampleTurnRequest(), response_schema: schema }, { model: "gpt-4.1" });
  assert.equal(sharedFirstKey(body.response_format), null);
  const branches = (schema.anyOf as { properties: Record<string, unknown> }[]).map((b) => Object.keys(b.properties)[0]);
  assert.deepEqual(branches.slice(0, 4), ["action", "action", "action", "action"]);
});

test("the models a user names today complete against the stand-ins: Sonnet 5.5, GPT-5.6, GPT-6.1, and an older one of each provider", async () => {
  await withDir(async (dir) => {
    for (
      const [model, wire] of [
        ["anthropic/claude-sonnet-5-5", "output_config"],
        ["anthropic/claude-haiku-4-5", "tool"],
        ["openai/gpt-5.6", "responses"],
        ["openai/gpt-6.1-sol", "responses"],
        ["openai/gpt-4.1", "chat"],
      ] as const
    ) {
      const server = model.startsWith("anthropic/")
        ? await startAnthropicServer((_, i) => anthropicAnswer(FINISH[i]))
        : await startOpenAIServer((_, i) => openAIAnswer(FINISH[i]));
      try {
        const run = await runPrompt(server, model, { dir });
        assert.equal(run.code, 0, `${model}: ${run.stderr}`);
        assert.equal(JSON.parse(run.stdout).outcome, "completed", model);
        assert.equal(server.rejections.length, 0, `${model}: nothing rejected`);
        const body = server.requests[0].body as Record<string, unknown>;
        if (wire === "output_config") assert.ok(body.output_config && !body.tool_choice, model);
        if (wire === "tool") assert.deepEqual(body.tool_choice, { type: "tool", name: "answer" }, model);
        if (wire === "responses") assert.equal(server.requests[0].path, "/v1/responses", model);
        if (wire === "chat") assert.equal(server.requests[0].path, "/v1/chat/completions", model);
      } finally {
        await server.close();
      }
    }
  });
});

test("createProvider sends an alias as the table's own id", () => {
  const provider = createProvider({ kind: "openai", model: "gpt-5.6" }, { env: { OPENAI_API_KEY: "k" } });
  assert.equal(provider.capabilities.schema_enforcement, true);
  assert.equal(resolveModel(BUILT_IN_MODELS, "openai", "gpt-5.6").id, "gpt-5.6-sol");
});

test("loom run --effort reaches the body; a value the model table does not list stops the run before any call", async () => {
  await withDir(async (dir) => {
    const server = await startAnthropicServer((_, i) => anthropicAnswer(FINISH[i]));
    try {
      const run = await runPrompt(server, "anthropic/claude-sonnet-5-5", { dir, extra: ["--effort", "low"] });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual((server.requests[0].body as { output_config: unknown }).output_config, {
        format: (server.requests[0].body as { output_config: { format: unknown } }).output_config.format,
        effort: "low",
      });
      const calls = server.requests.length;
      const bad = await runPrompt(server, "anthropic/claude-sonnet-5-5", { dir, extra: ["--effort", "ultra"] });
      assert.equal(bad.code, 3);
      assert.match(
        bad.stderr,
        /^loom run: Model "anthropic\/claude-sonnet-5-5": effort "ultra" is not accepted; the model table lists low, medium, high, xhigh, max \(loom models\)\n$/,
      );
      assert.equal(server.requests.length, calls, "no call was made");
    } finally {
      await server.close();
    }
  });
  assert.throws(
    () =>
      createProvider({ kind: "anthropic", model: "claude-haiku-4-5", thinking: "enabled" as never }, {
        env: { ANTHROPIC_API_KEY: "k" },
      }),
    /Invalid model configuration/,
  );
  assert.throws(
    () =>
      createProvider({ kind: "anthropic", model: "claude-sonnet-5", thinking: "adaptive" }, {
        env: { ANTHROPIC_API_KEY: "k" },
      }),
    /cannot be combined with the forced tool/,
  );
  // Which kinds take thinking is PROVIDER_KINDS data: every other kind stops before any call, naming the ones that do.
  for (const kind of ModelProvider.options.filter((k) => !PROVIDER_KINDS[k].takes.thinking)) {
    assert.throws(
      () => createProvider({ kind, model: "gpt-5.5", thinking: "adaptive" }, { env: { OPENAI_API_KEY: "k" } }),
      new RegExp(`^StartupError: Model "gpt-5\\.5": thinking applies only to kind "anthropic", not "${kind}"$`),
    );
  }
});

test("property: for any set of actions, no schema of a run shares a first key, strict or not, and the name Loom asks for is dropped before validation", () => {
  fc.assert(
    fc.property(fc.subarray([...ACTION_NAMES], { minLength: 1 }), (actions) => {
      for (const { json } of [runResponseSchema(actions), stepResponseSchema(actions)]) {
        assert.equal(sharedFirstKey(json), null);
        assert.equal(sharedFirstKey(convertToStrictJsonSchema(wrapResponseSchema(json)).schema), null);
      }
      for (const action of actions) {
        const args = { path: "a.txt" };
        const named = withoutActionName({ action, ...args }, action);
        assert.deepEqual(named, { ...args }, "the name is dropped");
        assert.deepEqual(withoutActionName(args, action), args, "an answer without it is unchanged");
        const other = actions.find((a) => a !== action);
        if (other) {
          assert.deepEqual(withoutActionName({ action: other }, action), { action: other }, "another name stays");
        }
        assert.ok(!Object.hasOwn(ActionArguments[action].shape, "action"));
      }
    }),
    { numRuns: 200 },
  );
});
