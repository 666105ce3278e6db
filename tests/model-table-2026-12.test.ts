// The model table as the providers' pages say on 2026-12-06 (issue 43): models shutting down warn, current models
// are listed with their pages' prices and efforts, combinations the API refuses stop before the first call, unknown
// claude-* ids run on the family's most conservative settings and retired dated ids are named retired.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { type ModelEntry, resolveModel, retirementOf, retirementWarningOf } from "../lib/models/models.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import type { ProviderConfig } from "../lib/settings/provider-config.ts";

const TODAY = "2026-12-06";
const ENV = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test" };

/** Builds the provider a configuration names on `today`, counting HTTP calls and collecting warnings. */
function build(config: ProviderConfig, today = TODAY) {
  const warnings: string[] = [];
  let calls = 0;
  const fetch = (() => {
    calls++;
    return Promise.reject(new Error("no call expected"));
  }) as unknown as typeof globalThis.fetch;
  const attempt = () => createProvider(config, { env: ENV, today, warn: (m) => warnings.push(m), fetch });
  return { attempt, warnings, calls: () => calls };
}

/** The error a configuration stops with before any call (it throws while the provider is built). */
function refusal(config: ProviderConfig, today = TODAY): Error & { code?: string } {
  const run = build(config, today);
  let caught: (Error & { code?: string }) | null = null;
  try {
    run.attempt();
  } catch (error) {
    caught = error as Error & { code?: string };
  }
  assert.ok(caught, `${config.model} was refused`);
  assert.equal(run.calls(), 0, "no call was made");
  return caught;
}

test("o3, gpt-5-mini, gpt-5-nano, gpt-5-pro and gpt-5's dated id warn of the 2026-12-11 shutdown and name the page's replacement", () => {
  const expected: Record<string, [string, string]> = {
    "o3": ["openai/o3", "gpt-6.1-sol"],
    "o3-2025-04-16": ["openai/o3", "gpt-6.1-sol"],
    "gpt-5-mini": ["openai/gpt-5-mini", "gpt-6.1-terra"],
    "gpt-5-nano": ["openai/gpt-5-nano", "gpt-6-luna"],
    "gpt-5-pro": ["openai/gpt-5-pro", "gpt-6.1-sol"],
    "gpt-5-2025-08-07": ["openai/gpt-5", "gpt-6.1-sol"],
  };
  for (const [id, [key, replacement]] of Object.entries(expected)) {
    const run = build({ kind: "openai", model: id });
    run.attempt();
    assert.deepEqual(run.warnings, [
      `model "${key}" shuts down on 2026-12-11 (in 5 days); use ${replacement}`,
    ], id);
    assert.equal(run.calls(), 0);
    // After the shutdown the run stops before any call, naming the replacement.
    const stopped = refusal({ kind: "openai", model: id }, "2026-12-11");
    assert.equal(stopped.code, "model_retired", id);
    assert.match(stopped.message, new RegExp(`was retired on 2026-12-11; use ${replacement.replace(".", "\\.")}$`));
  }
  // gpt-5.1 shuts down on 2027-04-01: no warning yet, one within 30 days of it.
  const gpt51 = resolveModel(BUILT_IN_MODELS, "openai", "gpt-5.1");
  assert.equal(gpt51.known, true);
  assert.equal(retirementWarningOf(gpt51, { today: TODAY }), null);
  assert.match(retirementWarningOf(gpt51, { today: "2027-03-15" }) ?? "", /shuts down on 2027-04-01 \(in 17 days\)/);
});

test("gpt-6.2-sol, gpt-6.2-astra and gpt-6-astra are in the table with their pages' prices; gpt-6.2-sol's effort none is refused before any call", () => {
  const sol = resolveModel(BUILT_IN_MODELS, "openai", "gpt-6.2-sol");
  assert.equal(sol.known, true);
  assert.equal(sol.entry.api, "responses");
  assert.equal(sol.entry.context_window, 1_050_000);
  assert.equal(sol.entry.max_output, 128_000);
  assert.deepEqual(
    { ...sol.entry.prices, long_prompt: undefined },
    { input: 2, cache_read: 0.1, cache_write: 2.5, output: 10, long_prompt: undefined },
  );
  assert.deepEqual(sol.entry.cache?.ttls, ["30m", "12h"]);
  assert.ok(!sol.entry.effort.includes("none"));
  assert.ok(sol.entry.source.includes("developers.openai.com/api/docs/models/gpt-6.2-sol"));
  assert.equal(sol.entry.date, TODAY);
  const none = refusal({ kind: "openai", model: "gpt-6.2-sol", effort: "none" });
  assert.equal(none.code, "invalid_model_setting");
  assert.match(none.message, /^Model "openai\/gpt-6\.2-sol": effort "none" is not accepted; the model table lists low/);
  build({ kind: "openai", model: "gpt-6.2-sol", effort: "max" }).attempt(); // accepted
  const astra = resolveModel(BUILT_IN_MODELS, "openai", "gpt-6.2-astra");
  assert.equal(astra.known, true);
  assert.deepEqual([astra.entry.prices?.input, astra.entry.prices?.output], [8, 40]);
  assert.ok(!astra.entry.effort.includes("none"));
  const older = resolveModel(BUILT_IN_MODELS, "openai", "gpt-6-astra");
  assert.equal(older.known, true);
  assert.deepEqual([older.entry.prices?.input, older.entry.prices?.output], [10, 50]);
});

test("claude-opus-5 with effort xhigh or max and thinking disabled (or unset, sent disabled with its forced tool) is refused before any call", () => {
  for (const effort of ["xhigh", "max"]) {
    for (const thinking of ["disabled", undefined] as const) {
      const error = refusal({ kind: "anthropic", model: "claude-opus-5", effort, ...(thinking ? { thinking } : {}) });
      assert.equal(error.code, "invalid_model_setting");
      assert.ok(error.message.startsWith('Model "anthropic/claude-opus-5": thinking '), error.message);
      assert.ok(error.message.includes(`with effort "${effort}"`), error.message);
      assert.ok(error.message.includes("whats-new-opus-5"), "names the page");
    }
  }
  // At effort high or lower thinking may be disabled.
  build({ kind: "anthropic", model: "claude-opus-5", effort: "high", thinking: "disabled" }).attempt();
  build({ kind: "anthropic", model: "claude-opus-5", effort: "low" }).attempt();
  // Its own page: the minimum cacheable prompt is 512 tokens.
  assert.equal(resolveModel(BUILT_IN_MODELS, "anthropic", "claude-opus-5").entry.cache?.min_tokens, 512);
});

test("claude-sonnet-4-5 retires on 2026-11-30 as its overview page says, not on its release date", () => {
  const sonnet = resolveModel(BUILT_IN_MODELS, "anthropic", "claude-sonnet-4-5-20250929");
  assert.equal(sonnet.entry.retired?.date, "2026-11-30");
  assert.equal(retirementOf(sonnet, { today: "2026-11-29" }), null, "in service the day before");
  assert.match(retirementWarningOf(sonnet, { today: "2026-11-29" }) ?? "", /shuts down on 2026-11-30 \(in 1 day\)/);
  assert.equal(
    retirementOf(sonnet, { today: TODAY }),
    "claude-sonnet-4-5 was retired on 2026-11-30; use claude-sonnet-5-5",
  );
  assert.ok(sonnet.entry.source.includes("models/sonnet-4-5/overview"));
});

test("retired dated claude ids are listed retired and stop before any call, naming the replacement", () => {
  const retired: Record<string, string> = {
    "claude-sonnet-4-20250514": "claude-sonnet-4-20250514 was retired on 2026-06-15; use claude-sonnet-4-6",
    "claude-sonnet-4-0": "claude-sonnet-4-20250514 was retired on 2026-06-15; use claude-sonnet-4-6",
    "claude-opus-4-20250514": "claude-opus-4-20250514 was retired on 2026-06-15; use claude-opus-4-8",
    "claude-3-5-haiku-20241022": "claude-3-5-haiku-20241022 was retired on 2026-02-19; use claude-haiku-4-5",
  };
  for (const [id, message] of Object.entries(retired)) {
    const model = resolveModel(BUILT_IN_MODELS, "anthropic", id);
    assert.equal(model.known, true, id);
    const error = refusal({ kind: "anthropic", model: id });
    assert.equal(error.code, "model_retired", id);
    assert.equal(error.message, message);
  }
});

test("an unknown claude-* id runs on the family's most conservative settings, never a newer model's", () => {
  const foo = resolveModel(BUILT_IN_MODELS, "anthropic", "claude-foo");
  assert.equal(foo.known, false);
  assert.equal(foo.entry.structured_output, "prompt", "the schema in the prompt, not output_config.format");
  assert.equal(foo.entry.context_window, 200_000);
  assert.equal(foo.entry.cache?.min_tokens, 4_096);
  assert.deepEqual([foo.entry.effort, foo.entry.thinking, foo.entry.prices, foo.entry.retired], [[], [], null, null]);
  // Whatever the id, nothing in it exceeds what every Claude model in service accepts.
  const claudes = Object.entries(BUILT_IN_MODELS.models).filter(([key, e]) =>
    key.startsWith("anthropic/") && (e.retired === null || e.retired.date > TODAY)
  ).map(([, e]) => e);
  const least = (pick: (e: ModelEntry) => number) => Math.min(...claudes.map(pick));
  fc.assert(
    fc.property(fc.stringMatching(/^[a-z0-9-]{1,24}$/), (suffix) => {
      const model = resolveModel(BUILT_IN_MODELS, "anthropic", `claude-${suffix}`);
      if (model.known) return;
      assert.equal(model.entry.structured_output, "prompt");
      assert.ok(model.entry.context_window <= least((e) => e.context_window));
      assert.ok(model.entry.max_output <= least((e) => e.max_output));
      assert.ok((model.entry.cache?.min_tokens ?? 0) >= Math.max(...claudes.map((e) => e.cache?.min_tokens ?? 0)));
      assert.deepEqual([model.entry.effort, model.entry.thinking, model.entry.rules], [[], [], []]);
    }),
  );
});

test("gpt-5.6-sol prices what its page shows (the promotion announced no end), and says so; gpt-6.1-terra's 12-hour writes are noted", () => {
  const sol = BUILT_IN_MODELS.models["openai/gpt-5.6-sol"];
  assert.deepEqual([sol.prices?.input, sol.prices?.cache_read, sol.prices?.cache_write, sol.prices?.output], [
    4,
    0.4,
    5,
    20,
  ]);
  assert.match(sol.notes ?? "", /November 21, 2026/);
  assert.match(sol.notes ?? "", /not ended/);
  const terra = BUILT_IN_MODELS.models["openai/gpt-6.1-terra"];
  assert.deepEqual(terra.cache?.ttls, ["30m", "12h"]);
  assert.equal(terra.prices?.cache_write, 1.25, "the 30-minute write Loom pays");
  assert.match(terra.notes ?? "", /12-hour writes cost \$2\.50/);
});

test("Sonnet 5.5's cache read says it is not settled by a stored official page, and keeps the conservative $0.20", () => {
  const sonnet = BUILT_IN_MODELS.models["anthropic/claude-sonnet-5-5"];
  assert.match(sonnet.notes ?? "", /not settled by a stored official page/);
  assert.equal(sonnet.prices?.cache_read, 0.2);
});

test("every entry in service names where its facts were read (URLs) and a read date of the table's month", () => {
  const updated = BUILT_IN_MODELS.updated ?? "";
  assert.equal(updated, TODAY);
  for (const [key, entry] of Object.entries(BUILT_IN_MODELS.models)) {
    if (entry.retired && entry.retired.date <= updated) continue;
    const urls = entry.source.split(" ");
    assert.ok(urls.every((url) => /^https:\/\/[a-z0-9.-]+\.[a-z]+\/\S*$/.test(url)), `${key}: ${entry.source}`);
    assert.equal(entry.date.slice(0, 7), updated.slice(0, 7), `${key} read ${entry.date}`);
    assert.ok(entry.date <= updated, key);
  }
});
