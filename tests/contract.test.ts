// Contract tests a user's clone runs: every request body Loom builds is held to the official SDKs' request types
// (@anthropic-ai/sdk and openai, pinned devDependencies used for their types only: `tsc` fails here when a body
// drifts from them) and, for OpenAI, to the published OpenAPI spec; the model table names no model the SDKs no longer
// list unless it marks it retired.
import process from "node:process";
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions/completions";
import type { ResponseCreateParamsNonStreaming } from "openai/resources/responses/responses";
import { startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import { convertToAnthropicRequest } from "../lib/providers/anthropic/convert-to-anthropic-request.ts";
import { convertToOpenAIRequest } from "../lib/providers/openai/convert-to-openai-request.ts";
import { convertToOpenAIResponsesRequest } from "../lib/providers/openai/convert-to-openai-responses-request.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { resolveModel } from "../lib/models/models.ts";
import { parseRecording } from "../lib/recording/recording.ts";
import { classificationRequest } from "../lib/catalog/routing.ts";
import { Catalog } from "../lib/catalog/catalog.ts";
import { parseJsonc } from "../lib/text/json-text.ts";
import type { TurnRequest } from "../lib/vocabulary/turn.ts";
import type { ContextPolicyName, StepProtocol } from "../lib/policy.ts";
import type { ProviderConfig } from "../lib/settings/provider-config.ts";
import { ROOT } from "./helpers/binary.ts";
import { openApiValidator } from "./helpers/validate-openapi.ts";
import { sharedFirstKey } from "./helpers/fake-provider-servers.ts";

// ---- the types: these lines do not compile when a body Loom builds is not a request the SDK accepts ----

type AnthropicOptions = Parameters<typeof convertToAnthropicRequest>[1];
type ChatOptions = Parameters<typeof convertToOpenAIRequest>[1];
type ResponsesOptions = Parameters<typeof convertToOpenAIResponsesRequest>[1];
const anthropicBody = (request: TurnRequest, options: AnthropicOptions) =>
  convertToAnthropicRequest(request, options).body satisfies MessageCreateParamsNonStreaming;
const chatBody = (request: TurnRequest, options: ChatOptions) =>
  convertToOpenAIRequest(request, options).body satisfies ChatCompletionCreateParamsNonStreaming;
const responsesBody = (request: TurnRequest, options: ResponsesOptions) =>
  convertToOpenAIResponsesRequest(request, options) satisfies ResponseCreateParamsNonStreaming;

/** `satisfies` checks assignability, which lets unknown keys through: a body key the SDK type lacks fails here. */
type Extra<T, U> = Exclude<keyof T, keyof U>;
type Body<F extends (...args: never[]) => unknown> = ReturnType<F>;
const noUndocumentedKeys: [
  Extra<Body<typeof anthropicBody>, MessageCreateParamsNonStreaming>,
  Extra<
    NonNullable<Body<typeof anthropicBody>["output_config"]>,
    NonNullable<MessageCreateParamsNonStreaming["output_config"]>
  >,
  Extra<Body<typeof chatBody>, ChatCompletionCreateParamsNonStreaming>,
  Extra<Body<typeof responsesBody>, ResponseCreateParamsNonStreaming>,
] extends [never, never, never, never] ? true : false = true;

// ---- every TurnRequest a run sends: both policies, both step protocols, and a catalog's classification ----

const FIX_BUG = join(ROOT, "testdata/workflows/fix-bug.jsonl");

async function runRequests(policy: ContextPolicyName, protocol: StepProtocol): Promise<TurnRequest[]> {
  const recording = parseRecording(readFileSync(FIX_BUG, "utf8"));
  const requests: TurnRequest[] = [];
  const plan = libraryPlan({ contextPolicy: policy, stepProtocol: protocol });
  await startRun({ request: { ...recording.header.slice, workspace: ROOT } }, plan, {
    replay: { recording, execute: false },
    warn: () => {},
    trace: (line) => requests.push(line.turn_request),
  });
  assert.ok(requests.length >= 8, `${policy} ${protocol}: ${requests.length} requests`);
  return requests;
}

async function allRequests(): Promise<{ label: string; request: TurnRequest }[]> {
  const out: { label: string; request: TurnRequest }[] = [];
  for (const policy of ["legacy", "bounded"] as const) {
    for (const protocol of ["two-call", "single-call"] as const) {
      for (const [i, request] of (await runRequests(policy, protocol)).entries()) {
        out.push({ label: `${policy} ${protocol} call ${i + 1}`, request });
      }
    }
  }
  const parsed = parseJsonc(readFileSync(join(ROOT, "testdata/catalog/example.jsonc"), "utf8"));
  assert.ok(parsed.ok);
  const catalog = Catalog.parse(parsed.value);
  out.push({ label: "classification", request: classificationRequest(catalog, "Fix the failing test").request });
  return out;
}

/** The body the adapter sent for one call, caught before it leaves (no server): every model of the table. */
async function sentBody(config: ProviderConfig, request: TurnRequest): Promise<{ url: string; body: unknown }> {
  let caught: { url: string; body: unknown } | null = null;
  const fetch = (url: string | URL | Request, init?: RequestInit) => {
    caught = { url: String(url), body: JSON.parse(String(init?.body)) };
    return Promise.reject(new Error("caught"));
  };
  const provider = createProvider(config, {
    env: { ANTHROPIC_API_KEY: "sk-ant-x", OPENAI_API_KEY: "sk-x" },
    fetch: fetch as typeof globalThis.fetch,
    maxAttempts: 1,
    today: TODAY,
  });
  await provider.complete(request, { model: config.model }).catch(() => {});
  assert.ok(caught, "the adapter sent a body");
  return caught;
}

/** Models a run can still use: not retired, or retiring later (a deprecation). */
const TODAY = "2026-12-01";
const inService = Object.entries(BUILT_IN_MODELS.models).filter(([, e]) =>
  e.retired === null || e.retired.date > TODAY
);

const SPEC = join(ROOT, "..", "shared", "provider-specs", "openai-openapi.json");

test("the body types have no key the SDK types lack", () => assert.equal(noUndocumentedKeys, true));

test("every body Loom builds for each model of the table, policy, step protocol and cache TTL is the body its typed builder gives; OpenAI's validate against the published OpenAPI spec", async () => {
  const requests = await allRequests();
  const validate = existsSync(SPEC) ? openApiValidator(JSON.parse(readFileSync(SPEC, "utf8"))) : null;
  if (!validate) console.log(`skipped the OpenAPI check: ${SPEC} is absent (github.com/openai/openai-openapi)`);
  let checked = 0;
  for (const [key, entry] of inService) {
    const [kind, id] = [key.slice(0, key.indexOf("/")), key.slice(key.indexOf("/") + 1)] as const;
    const ttls = kind === "anthropic" ? (["5m", "1h"] as const) : ([undefined] as const);
    for (const ttl of ttls) {
      for (const { label, request } of requests) {
        const config = { kind, model: id, ...(ttl ? { cache_ttl: ttl } : {}) } as ProviderConfig;
        const { url, body } = await sentBody(config, request);
        const where = `${key} ${ttl ?? ""} ${label}`;
        if (kind === "anthropic") {
          const mode = entry.structured_output as "forced_tool" | "output_config_format";
          // Models that think adaptively by default get room to think (call-options.ts).
          const maxTokens = entry.thinking.includes("adaptive") ? 32_000 : 8192;
          // A forced tool with thinking left unset is sent thinking disabled (the table's rule).
          const forced = (entry.rules ?? []).some((rule) => rule.action === "send_thinking_disabled");
          const typed = anthropicBody(request, {
            model: id,
            maxTokens,
            cacheTtl: ttl,
            answerMode: mode,
            ...(forced ? { thinking: "disabled" as const } : {}),
          });
          assert.deepEqual(body, typed, where);
          assert.ok(url.endsWith("/v1/messages"), where);
        } else if (entry.api === "responses") {
          const sent = body as { prompt_cache_key: string };
          const typed = responsesBody(request, {
            model: id,
            cacheKey: sent.prompt_cache_key,
            explicitCache: entry.cache?.breakpoints === "explicit_or_automatic",
          });
          assert.deepEqual(body, typed, where);
          assert.ok(url.endsWith("/responses"), where);
          if (validate) assert.deepEqual(validate("CreateResponse", body), [], where);
        } else {
          const sent = body as { prompt_cache_key: string };
          const typed = chatBody(request, { model: id, cacheKey: sent.prompt_cache_key });
          assert.deepEqual(body, typed, where);
          assert.ok(url.endsWith("/chat/completions"), where);
          if (validate) assert.deepEqual(validate("CreateChatCompletionRequest", body), [], where);
        }
        checked++;
      }
    }
  }
  assert.ok(checked > 900, `${checked} bodies`);
  if (process.env.LOOM_CONTRACT_COUNT) console.log(`${checked} bodies checked`);
});

test("effort and thinking reach the body in the SDK's shape, and a value the table does not list is refused before any call", async () => {
  const [{ request }] = await allRequests();
  const sonnet = await sentBody(
    { kind: "anthropic", model: "claude-sonnet-5-5", effort: "low", thinking: "adaptive" },
    request,
  );
  const body = sonnet.body as MessageCreateParamsNonStreaming;
  assert.equal(body.output_config?.effort, "low");
  assert.deepEqual(body.thinking, { type: "adaptive" });
  assert.equal(body.tool_choice, undefined, "Sonnet 5.5 gets no forced tool");
  const gpt = await sentBody({ kind: "openai", model: "gpt-5.6-sol", effort: "none" }, request);
  assert.deepEqual((gpt.body as ResponseCreateParamsNonStreaming).reasoning, { effort: "none" });
  const older = await sentBody({ kind: "openai", model: "gpt-5", effort: "minimal" }, request);
  assert.equal((older.body as ChatCompletionCreateParamsNonStreaming).reasoning_effort, "minimal");
  // GPT-5.6 accepts max (its model page); GPT-5 does not.
  const max = await sentBody({ kind: "openai", model: "gpt-5.6-sol", effort: "max" }, request);
  assert.deepEqual((max.body as ResponseCreateParamsNonStreaming).reasoning, { effort: "max" });
  assert.throws(
    () => createProvider({ kind: "openai", model: "gpt-5", effort: "max" }, { env: { OPENAI_API_KEY: "k" } }),
    /^Error: Model "openai\/gpt-5": effort "max" is not accepted; the model table lists minimal, low, medium, high \(loom models\)$|effort "max" is not accepted/,
  );
  // Sonnet 5.5: between_tools with effort xhigh or max is refused before sending, naming both settings and the source.
  for (const effort of ["xhigh", "max"]) {
    assert.throws(
      () =>
        createProvider({ kind: "anthropic", model: "claude-sonnet-5-5", thinking: "between_tools", effort }, {
          env: { ANTHROPIC_API_KEY: "k" },
        }),
      (e: Error & { code?: string }) =>
        e.code === "invalid_model_setting" &&
        e.message.includes(`thinking "between_tools" with effort "${effort}"`) &&
        e.message.includes("anthropic/claude-sonnet-5-5") && e.message.includes("whats-new-sonnet-5-5"),
    );
  }
  const between = await sentBody(
    { kind: "anthropic", model: "claude-sonnet-5-5", effort: "high", thinking: "between_tools" },
    request,
  );
  assert.deepEqual((between.body as MessageCreateParamsNonStreaming).thinking, { type: "between_tools" });
  // Sonnet 5 answers through a forced tool: thinking left unset is sent disabled.
  const forced = await sentBody({ kind: "anthropic", model: "claude-sonnet-5" }, request);
  assert.deepEqual((forced.body as MessageCreateParamsNonStreaming).thinking, { type: "disabled" });
  assert.throws(
    () =>
      createProvider({ kind: "anthropic", model: "claude-opus-5-5", thinking: "disabled" }, {
        env: { ANTHROPIC_API_KEY: "k" },
      }),
    (e: Error & { code?: string }) => e.code === "invalid_model_setting" && /thinking "disabled"/.test(e.message),
  );
});

test("no response schema Loom sends has a union whose branches share an identical first key", async () => {
  for (const { label, request } of await allRequests()) {
    assert.equal(sharedFirstKey(request.response_schema), null, label);
  }
});

/** The string literals of `export type NAME = '…' | '…' …;` in an SDK declaration file. */
function sdkModels(file: string, name: string): Set<string> {
  const text = readFileSync(join(ROOT, "node_modules", file), "utf8");
  const start = text.indexOf(`export type ${name} =`);
  assert.ok(start !== -1, `${file} declares ${name}`);
  const declaration = text.slice(start, text.indexOf(";", start));
  return new Set([...declaration.matchAll(/'([^']+)'/g)].map((m) => m[1]));
}

test("the model table names only models the SDKs' types list, unless it marks them retired", () => {
  const claude = sdkModels("@anthropic-ai/sdk/resources/messages/messages.d.ts", "Model");
  const chat = sdkModels("openai/resources/shared.d.ts", "ChatModel");
  const responses = new Set([...chat, ...sdkModels("openai/resources/shared.d.ts", "ResponsesModel")]);
  assert.ok(claude.has("claude-sonnet-5-5") && chat.has("gpt-5.6-sol") && responses.has("gpt-5-codex"));
  const unmarked = Object.entries(BUILT_IN_MODELS.models).filter(([, entry]) => entry.retired === null);
  const missing = unmarked.filter(([key, entry]) => {
    const id = key.slice(key.indexOf("/") + 1);
    const listed = key.startsWith("anthropic/") ? claude : entry.api === "responses" ? responses : chat;
    return !listed.has(id);
  }).map(([key]) => key);
  assert.deepEqual(
    missing,
    [],
    "models the SDK no longer lists: mark them retired (with the replacement) or drop them",
  );
  // A retirement names a replacement the table or the SDK knows (gpt-5-codex → gpt-5.4).
  for (const [key, entry] of Object.entries(BUILT_IN_MODELS.models)) {
    const replacement = entry.retired?.replacement;
    if (replacement === undefined) continue;
    const provider = key.startsWith("anthropic/") ? "anthropic" : "openai";
    const listed = provider === "anthropic" ? claude.has(replacement) : responses.has(replacement);
    assert.ok(listed || resolveModel(BUILT_IN_MODELS, provider, replacement).known, `${key} → ${replacement}`);
  }
  // The SDK dropped the retired Claude Sonnet 4.5 (1.15.0): the table keeps it, marked, to name its replacement.
  assert.equal(claude.has("claude-sonnet-4-5"), false);
  assert.equal(
    resolveModel(BUILT_IN_MODELS, "anthropic", "claude-sonnet-4-5").entry.retired?.replacement,
    "claude-sonnet-5-5",
  );
});
