// Breakpoints only where a later call of the run reads them (#30): the step's own breakpoint (newest view and working
// state) only when an arguments call follows, none on a classification request, and a 5-minute step marker under a
// 1-hour cache; OpenAI requests carry one prompt_cache_key per run.
import assert from "node:assert/strict";
import { test } from "node:test";
import { convertToAnthropicRequest } from "../lib/providers/anthropic/convert-to-anthropic-request.ts";
import { convertToOpenAIRequest } from "../lib/providers/openai/convert-to-openai-request.ts";
import type { TurnRequest } from "../lib/vocabulary/turn.ts";
import { sampleTurnRequest } from "./helpers/fake-provider-servers.ts";

const tasks = (singleCall: boolean) => ({
  section: "tasks" as const,
  selection: "Choose the next action",
  ...(singleCall ? {} : { arguments: "Give the arguments" }),
  lookups: "Look things up",
  actions: [{ name: "finish", description: "End" }],
});

/** The sample selection request with a tasks section, as a two-call or a single-call run sends it. */
function request(
  { singleCall = false, phase = "selection" }: { singleCall?: boolean; phase?: TurnRequest["phase"] } = {},
): TurnRequest {
  const sample = sampleTurnRequest({ checkpoint: false, lookups: false });
  return {
    ...sample,
    phase,
    sections: [...sample.sections.slice(0, 2), tasks(singleCall), ...sample.sections.slice(2)],
  };
}

/** Which blocks carry a marker, by their section (the state block is the one before the candidates). */
function marked(
  r: TurnRequest,
  options: Parameters<typeof convertToAnthropicRequest>[1] = { model: "m", maxTokens: 9 },
) {
  const { body } = convertToAnthropicRequest(r, options);
  return {
    system: (body.system ?? []).map((b) => b.cache_control ?? null),
    content: body.messages[0].content.map((b) => b.cache_control ?? null),
  };
}

test("breakpoints: a two-call selection call marks its working state for the arguments call that reads it", () => {
  const { content } = marked(request());
  // events: one event block, "]", working state, candidates
  assert.deepEqual(content.map((c) => c !== null), [true, false, true, false]);
});

test("breakpoints: a single-call step writes no working state no call reads", () => {
  const { system, content } = marked(request({ singleCall: true }));
  assert.deepEqual(content.map((c) => c !== null), [true, false, false, false]);
  assert.ok(system.at(-1), "the prefix is still marked");
});

test("breakpoints: a classification request marks nothing (no later call shares its classify tool)", () => {
  const { system, content } = marked(request({ phase: "classification" }));
  assert.ok([...system, ...content].every((c) => c === null));
});

test("breakpoints: under a 1-hour cache the step's own marker stays 5 minutes, after every 1-hour one", () => {
  const { system, content } = marked(request(), { model: "m", maxTokens: 9, cache: { ttl: "1h" } });
  assert.deepEqual(system.at(-1), { type: "ephemeral", ttl: "1h" });
  assert.deepEqual(content[0], { type: "ephemeral", ttl: "1h" });
  assert.deepEqual(content[2], { type: "ephemeral" });
});

test("breakpoints: OpenAI bodies carry the run's prompt_cache_key when given, and none otherwise", () => {
  assert.equal(
    convertToOpenAIRequest(request(), { model: "m", cacheKey: "loom-x" }).body.prompt_cache_key,
    "loom-x",
  );
  assert.equal("prompt_cache_key" in convertToOpenAIRequest(request(), { model: "m" }).body, false);
});

test("breakpoints: a single-call stage that looked something up marks its working state for its next call", () => {
  const base = request({ singleCall: true });
  const withLookups: TurnRequest = {
    ...base,
    sections: [...base.sections, { section: "lookups", responses: [{ lookup: { $result: "sha256:ab" }, text: "x" }] }],
  };
  const { content } = marked(withLookups);
  // one event block, "]", working state, candidates, lookups
  assert.deepEqual(content.map((c) => c !== null), [true, false, true, false, false]);
});
