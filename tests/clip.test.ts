// One end-truncation (clipEnd) for listings, messages and summaries, and one step-target rule (stepTarget): a cut
// never splits a character, and the step event and the history listing name a step's target alike.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { clipEnd } from "../lib/text/clip.ts";
import { createEvent, summarizeEvent } from "../lib/context/events.ts";
import { ResultStore } from "../lib/context/store.ts";
import { stepOutcome } from "../lib/run-events.ts";

/** A lone surrogate: half of a character outside the BMP, which no encoder can write out. */
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

test("clipEnd: at most max UTF-16 units, a prefix and an ellipsis when cut, never half a character", () => {
  const text = fc.array(fc.constantFrom("a", "é", "😀", "中", " ", "𝄞"), { maxLength: 60 }).map((parts) =>
    parts.join("")
  );
  fc.assert(fc.property(text, fc.integer({ min: 1, max: 70 }), (s, max) => {
    const cut = clipEnd(s, max);
    assert.ok(cut.length <= max, `${cut.length} > ${max}`);
    assert.ok(!LONE.test(cut), JSON.stringify(cut));
    if (s.length <= max) assert.equal(cut, s);
    else {
      assert.ok(cut.endsWith("…"));
      assert.ok(s.startsWith(cut.slice(0, -1)));
    }
  }));
});

test("the history listing of a step never splits an emoji in a long path (it did at the 80-unit cut)", () => {
  const store = new ResultStore();
  const path = `${"a".repeat(78)}😀😀.txt`;
  const { event } = createEvent({
    seq: 1,
    step: 1,
    action: "read_file",
    args: { path },
    report: { kind: "read", path, content: store.put("x").digest, bytes: 1, lines: 1, truncated: false } as never,
  }, store);
  const line = summarizeEvent(event);
  assert.ok(!LONE.test(line), JSON.stringify(line));
});

test("a step's target is one rule: the step event and the listing name the same path, argv and query", () => {
  const store = new ResultStore();
  const cases: Array<{ action: "read_file" | "run_command" | "search"; args: Record<string, unknown>; shown: string }> =
    [
      { action: "read_file", args: { path: "src/a.ts" }, shown: "src/a.ts" },
      { action: "run_command", args: { argv: ["git", "diff"] }, shown: "git diff" },
      { action: "search", args: { query: "TODO" }, shown: '"TODO"' },
    ];
  for (const { action, args, shown } of cases) {
    const report = { kind: "print", text: "" } as never;
    const { event } = createEvent({ seq: 1, step: 1, action, args, report }, store);
    assert.equal(stepOutcome(args, report).target, shown, action);
    assert.ok(summarizeEvent(event).includes(shown), summarizeEvent(event));
  }
});
