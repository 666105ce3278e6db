// What makes the bounded policy cheap under prompt caching, pinned on the provider bodies: retained events are
// append-only between checkpoints (an event's rendering never changes until it is retired), and every call of a run
// continues one cache chain (same tools / tool_choice / response format; consecutive requests share their prefix
// through the events), for Anthropic- and OpenAI-shaped bodies, under both policies.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { loadWorkload, replayRecording } from "../bench/workloads.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { workload, workloadTests } from "./helpers/workloads.ts";
import { convertToAnthropicRequest } from "../lib/providers/anthropic/convert-to-anthropic-request.ts";
import { convertToOpenAIRequest } from "../lib/providers/openai/convert-to-openai-request.ts";
import { convertToStrictJsonSchema } from "../lib/providers/openai/convert-to-strict-json-schema.ts";
import { wrapResponseSchema } from "../lib/providers/wrap-response-schema.ts";
import { runResponseSchema } from "../lib/vocabulary/answer.ts";
import { ACTION_NAMES } from "../lib/vocabulary/actions.ts";
import { renderSection } from "../lib/providers/render-sections.ts";
import type { Recording } from "../lib/recording/recording.ts";
import type { CompleteOptions, TurnRequest } from "../lib/vocabulary/turn.ts";
import { openhandsStyleRecording } from "./fixtures/openhands-style.ts";

async function requestsOf(recording: Recording, policy: ContextPolicyName) {
  const requests: TurnRequest[] = [];
  const result = await replayRecording(recording, policy, {
    wrap: (scripted) => ({
      name: scripted.name,
      capabilities: scripted.capabilities,
      complete: (request: TurnRequest, options: CompleteOptions) => {
        requests.push(request);
        return scripted.complete(request, options);
      },
    }),
  });
  assert.equal(result.outcome, "completed", result.error?.message);
  return { requests, checkpointAt: (i: number) => result.report.calls[i].checkpoint };
}

const eventsOf = (request: TurnRequest) =>
  (request.sections.find((s) => s.section === "events") as { events: unknown[] }).events;

/** Checks every consecutive pair of a run's requests; returns how many pairs were between checkpoints. */
function checkRun({ requests, checkpointAt }: Awaited<ReturnType<typeof requestsOf>>): number {
  let pairs = 0;
  for (let i = 1; i < requests.length; i++) {
    const [a, b] = [requests[i - 1], requests[i]];
    const anthropic = [a, b].map((r) => convertToAnthropicRequest(r, { model: "m", maxTokens: 1024 }).body);
    const openai = [a, b].map((r) => convertToOpenAIRequest(r, { model: "m" }).body);
    // One chain for the whole run: the same tools, tool_choice and response format on every call.
    assert.equal(JSON.stringify(anthropic[1].tools), JSON.stringify(anthropic[0].tools), `call ${i}: tools`);
    assert.deepEqual(anthropic[1].tool_choice, anthropic[0].tool_choice);
    assert.equal(JSON.stringify(openai[1].response_format), JSON.stringify(openai[0].response_format));
    if (checkpointAt(i)) continue;
    pairs++;

    // Append-only: every event request i-1 shows is shown byte-identical, at the same place, in request i.
    const before = eventsOf(a).map((e) => JSON.stringify(e));
    const after = eventsOf(b).map((e) => JSON.stringify(e));
    assert.deepEqual(after.slice(0, before.length), before, `call ${i}: retained events changed`);

    // Anthropic: the blocks up to the breakpoint on the previous request's last event are this request's first.
    const blocks = (body: (typeof anthropic)[0]) => [...(body.system ?? []), ...body.messages[0].content];
    const previous = blocks(anthropic[0]);
    // With events, the breakpoint on the last one (before the closing "]"); without, the end of the system blocks.
    const close = previous.findIndex((block) => block.text === "]");
    const breakpoint = close === -1
      ? (anthropic[0].system?.length ?? 0) - 1
      : previous.slice(0, close).findLastIndex((block) => block.cache_control !== undefined);
    const text = (list: { text: string }[]) => list.map((block) => block.text);
    assert.deepEqual(text(blocks(anthropic[1]).slice(0, breakpoint + 1)), text(previous.slice(0, breakpoint + 1)));
    if (before.length > 0) assert.ok(breakpoint >= (anthropic[0].system?.length ?? 0), "the breakpoint is an event");

    // OpenAI: the previous request's text through its last event is the start of this one's.
    const flat = (body: (typeof openai)[0]) => body.messages.map((m) => m.content).join("\u0000");
    const events = a.sections.find((s) => s.section === "events")!;
    const eventsText = renderSection(events);
    const at = flat(openai[0]).indexOf(eventsText);
    assert.ok(at >= 0);
    const shared = flat(openai[0]).slice(0, at + eventsText.length - 1); // up to the closing "]"
    assert.ok(flat(openai[1]).startsWith(shared), `call ${i}: OpenAI prefix through the events`);
  }
  return pairs;
}

test("append-only events and one cache chain (property, synthetic OpenHands-style runs with 5-30 KB views)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 10_000 }),
      fc.integer({ min: 4, max: 16 }),
      fc.constantFrom<ContextPolicyName>("bounded", "legacy"),
      async (seed, steps, policy) => {
        const pairs = checkRun(await requestsOf(openhandsStyleRecording(seed, { steps }), policy));
        assert.ok(pairs > 0);
      },
    ),
    { numRuns: 6, endOnFailure: true },
  );
});

const workloadTest = workloadTests(import.meta.url);

workloadTest(
  "append-only events and one cache chain on a real 115-step trajectory, bounded (with checkpoints)",
  async () => {
    const REAL = workload("mini-swe-agent/django__django-11138.json");
    const { recording } = loadWorkload({
      system: "mini-swe-agent",
      name: "django__django-11138.json",
      path: REAL,
      format: "mini-swe-agent",
    });
    const run = await requestsOf(recording, "bounded");
    const checkpoints = run.requests.filter((_, i) => run.checkpointAt(i)).length;
    assert.ok(checkpoints >= 1, "the run retires events");
    assert.ok(checkRun(run) > run.requests.length - 1 - checkpoints - 1);
  },
);

test("the run's one response schema is strict-compatible for OpenAI and covers selection, every action's arguments and the lookups", () => {
  const schema = runResponseSchema([...ACTION_NAMES]).json as { anyOf: { properties: Record<string, unknown> }[] };
  assert.equal(convertToStrictJsonSchema(wrapResponseSchema(schema)).strict, true);
  const keys = schema.anyOf.map((branch) => Object.keys(branch.properties).sort().join(","));
  // Each action's arguments carry its name first (a distinct first key per branch, as strict mode demands).
  const expectedKeys = [
    "action,reason",
    "action,path",
    "action,new_text,old_text,path",
    "action,argv",
    "action,status,summary",
    "$result",
  ];
  for (const expected of expectedKeys) {
    assert.ok(keys.includes(expected), `${expected} in ${keys.join(" | ")}`);
  }
});
