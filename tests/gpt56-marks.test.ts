// GPT-5.6's explicit prompt_cache_breakpoint marks sit where the next call re-sends what they end (as Loom's Anthropic
// layout does): the prefix, and the last retained event before the closing "]". On the whole events part ("]"
// included) no later request ever began with the marked prefix, so every write (1.25x input) was paid for nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { convertToOpenAIResponsesRequest } from "../lib/providers/openai/convert-to-openai-responses-request.ts";
import { openaiResponsesCacheLayout } from "../lib/providers/openai/openai-cache-layout.ts";
import type { TurnRequest } from "../lib/vocabulary/turn.ts";
import { sampleTurnRequest } from "./helpers/fake-provider-servers.ts";

/** The sample request with `n` retained events (append-only, as a run's steps send them). */
function withEvents(n: number): TurnRequest {
  const request = sampleTurnRequest({ lookups: false });
  const events = Array.from({ length: n }, (_, i) => ({ seq: 41 + i, kind: "read", path: `src/f${i}.py` }));
  return {
    ...request,
    sections: request.sections.map((s) => s.section === "events" ? { ...s, events } : s),
  } as TurnRequest;
}

/** The body's parts in order, as the cache chains them. */
function parts(request: TurnRequest, explicitCache = true) {
  const body = convertToOpenAIResponsesRequest(request, { model: "gpt-5.6-sol", explicitCache });
  return body.input.flatMap((m) => m.content.map((p) => ({ text: p.text, mark: !!p.prompt_cache_breakpoint })));
}

test("GPT-5.6: every mark ends a prefix the next step's request starts with; the closing ] is never marked", () => {
  for (let n = 1; n <= 5; n++) {
    const now = parts(withEvents(n));
    const next = parts(withEvents(n + 1));
    const marked = now.flatMap((p, i) => (p.mark ? [i] : []));
    assert.equal(marked.length, 2, "the prefix and the last event");
    for (const at of marked) {
      assert.deepEqual(next.slice(0, at + 1).map((p) => p.text), now.slice(0, at + 1).map((p) => p.text), `n=${n}`);
    }
    assert.equal(now[marked[1]! + 1]?.text, "]");
  }
  // The text the model reads is the same as without marks: the parts joined are the sections.
  const joined = (ps: { text: string }[]) => ps.map((p) => p.text).join("");
  assert.equal(joined(parts(withEvents(3))), joined(parts(withEvents(3), false)));
  // The cache layout sees the same marks (the run report's cache explanation reads it).
  const request = withEvents(3);
  const layout = openaiResponsesCacheLayout(
    request,
    convertToOpenAIResponsesRequest(request, { model: "gpt-5.6-sol", explicitCache: true }),
  );
  const marks = layout.blocks.filter((b) => b.breakpoint).map((b) => b.section);
  assert.deepEqual(marks, [marks[0], "events"]);
  assert.equal(layout.blocks.at(-1)?.breakpoint, false);
});

test("GPT-5.6: a model without marks gets the events as one part, unmarked; a classification request marks no event", () => {
  const plain = parts(withEvents(3), false);
  assert.equal(plain.some((p) => p.mark), false);
  const events = plain.filter((p) => p.text.includes('"seq":41'));
  assert.equal(events.length, 1);
  assert.ok(events[0]?.text.endsWith("]"));
  const classify = parts({ ...withEvents(3), phase: "classification" } as TurnRequest);
  assert.equal(classify.filter((p) => p.mark).length, 1, "only the prefix");
});
