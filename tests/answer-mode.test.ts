// The structured-output mode is decided once (lib/providers/answer-mode.ts): for every API and every value the model
// table's structured_output can take, the body an adapter built through createProvider sends, and the schema
// enforcement it claims, are what ANSWER_MODES says. A second mapping that disagreed with the table fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createProvider } from "../lib/run/create-provider.ts";
import { ANSWER_MODES, enforcesSchema } from "../lib/providers/answer-mode.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { type ModelEntry, StructuredOutput } from "../lib/models/models.ts";
import { ModelApi, type ModelProvider } from "../lib/models/provider-kinds.ts";
import type { ProviderConfig } from "../lib/settings/provider-config.ts";
import type { Provider, TurnRequest } from "../lib/vocabulary/turn.ts";

const REQUEST: TurnRequest = {
  phase: "arguments",
  response_schema: {
    type: "object",
    properties: { path: { type: "string", minLength: 1 } },
    required: ["path"],
    additionalProperties: false,
  },
  sections: [{ section: "instructions", text: "Be careful." }, { section: "intent", text: "Fix it." }],
};

/** A built-in entry of the API, with the structured output under test. */
function entryOf(api: ModelApi, structured: StructuredOutput): ModelEntry {
  const found = Object.values(BUILT_IN_MODELS.models).find((e) => e.api === api);
  assert.ok(found, `a built-in model of ${api}`);
  return { ...found, structured_output: structured, rules: [], retired: null };
}

/** The body a provider of `kind` sends for the test entry, caught before it leaves, and the provider itself. */
async function sent(
  kind: ModelProvider,
  entry: ModelEntry,
): Promise<{ body: Record<string, unknown>; provider: Provider }> {
  let body: Record<string, unknown> | null = null;
  const fetch = (_url: string | URL | Request, init?: RequestInit) => {
    body = JSON.parse(String(init?.body));
    return Promise.reject(new Error("caught"));
  };
  const provider = createProvider({ kind, model: "answer-mode-test" } as ProviderConfig, {
    env: { ANTHROPIC_API_KEY: "sk-ant-x", OPENAI_API_KEY: "sk-x", OPENROUTER_API_KEY: "sk-or-x" },
    models: { ...BUILT_IN_MODELS, models: { [`${kind}/answer-mode-test`]: entry } },
    fetch: fetch as typeof globalThis.fetch,
    maxAttempts: 1,
    today: "2026-12-01",
  });
  await provider.complete(REQUEST, { model: "answer-mode-test" }).catch(() => {});
  assert.ok(body, "the adapter sent a body");
  return { body, provider };
}

/** The mode a body was sent in, read off the wire. */
function wireMode(api: ModelApi, body: Record<string, unknown>): string {
  if (api === "messages") {
    if (body.tool_choice !== undefined) return "forced_tool";
    const config = body.output_config as { format?: unknown } | undefined;
    return config?.format !== undefined ? "output_config_format" : "prompt";
  }
  if (api === "responses") return (body.text as { format: { type: string } }).format.type;
  return (body.response_format as { type: string } | undefined)?.type ?? "none";
}

/** The kinds whose adapter speaks each API. */
const KINDS: Record<ModelApi, ModelProvider[]> = {
  messages: ["anthropic"],
  "chat-completions": ["openai", "openai-compatible", "openrouter"],
  responses: ["openai"],
};

test("the mode table is total: a row for every API, a mode for every structured output", () => {
  assert.deepEqual(Object.keys(ANSWER_MODES).sort(), [...ModelApi.options].sort());
  for (const api of ModelApi.options) {
    assert.deepEqual(Object.keys(ANSWER_MODES[api]).sort(), [...StructuredOutput.options].sort(), api);
  }
  // @ts-expect-error: a row without a mode for every structured output is a type error (tsc checks tests/)
  const partial: typeof ANSWER_MODES = { ...ANSWER_MODES, messages: { prompt: "prompt" } };
  assert.ok(partial);
});

test("every adapter sends the mode the table gives its API, and claims schema enforcement exactly for it", async () => {
  let checked = 0;
  for (const api of ModelApi.options) {
    for (const structured of StructuredOutput.options) {
      const mode = ANSWER_MODES[api][structured];
      for (const kind of KINDS[api]) {
        const { body, provider } = await sent(kind, entryOf(api, structured));
        const where = `${kind} ${api} ${structured}`;
        assert.equal(wireMode(api, body), mode, where);
        assert.equal(provider.capabilities.schema_enforcement, enforcesSchema(mode), where);
        checked++;
      }
    }
  }
  assert.equal(checked, 5 * StructuredOutput.options.length);
});

test("a configured response_format wins over the table's row (openai-compatible)", async () => {
  let body: Record<string, unknown> | null = null;
  const fetch = (_url: string | URL | Request, init?: RequestInit) => {
    body = JSON.parse(String(init?.body));
    return Promise.reject(new Error("caught"));
  };
  const provider = createProvider({ kind: "openai-compatible", model: "m", response_format: "json_object" }, {
    env: {},
    models: {
      ...BUILT_IN_MODELS,
      models: { "openai-compatible/m": entryOf("chat-completions", "json_schema") },
    },
    fetch: fetch as typeof globalThis.fetch,
    maxAttempts: 1,
  });
  await provider.complete(REQUEST, { model: "m" }).catch(() => {});
  assert.ok(body);
  assert.equal(wireMode("chat-completions", body), "json_object");
  assert.equal(provider.capabilities.schema_enforcement, false);
});
