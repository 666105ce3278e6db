import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkPreviewSizes,
  headAndTail,
  NEWEST_PREVIEW_BYTES,
  PREVIEW_SIZES,
  renderNewestView,
  renderRetained,
  RETAINED_PREVIEW_BYTES,
} from "../lib/render-event.ts";
import { createEvent } from "../lib/events.ts";
import { ResultStore } from "../lib/store.ts";
import { utf8Length } from "../lib/digest.ts";

test("headAndTail shows at least the limit, cut on character boundaries, and counts what it leaves out", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: "grapheme", minLength: 0, maxLength: 3000 }),
      fc.integer({ min: 8, max: 1024 }),
      (text, limit) => {
        const cut = headAndTail(text, limit);
        const total = utf8Length(text);
        if (cut === null) return;
        const shown = utf8Length(cut.head) + utf8Length(cut.tail);
        assert.ok(shown >= limit, `${shown} < ${limit}`);
        assert.equal(shown + cut.omitted, total);
        assert.ok(text.startsWith(cut.head));
        assert.ok(text.endsWith(cut.tail));
      },
    ),
  );
});

test("headAndTail leaves text that fits untouched", () => {
  assert.equal(headAndTail("€".repeat(100), 300), null);
  const cut = headAndTail("€".repeat(1000), 512);
  assert.ok(cut);
  assert.ok(utf8Length(cut.head) >= 256 && utf8Length(cut.tail) >= 256);
});

test("preview sizes below the SPEC's floors are refused; larger ones show more of each retained value", () => {
  assert.throws(() => checkPreviewSizes({ retained: 256, newest: NEWEST_PREVIEW_BYTES }), /below the floors/);
  assert.throws(() => checkPreviewSizes({ retained: 512, newest: 4096 }), /below the floors/);
  assert.throws(() => checkPreviewSizes({ retained: 16_384, newest: 8192 }), /below the floors/);
  assert.deepEqual(checkPreviewSizes(PREVIEW_SIZES), {
    retained: RETAINED_PREVIEW_BYTES,
    newest: NEWEST_PREVIEW_BYTES,
  });

  const store = new ResultStore();
  const output = `${"a".repeat(3000)}${"z".repeat(3000)}`;
  const { event } = createEvent({
    seq: 1,
    step: 1,
    action: "run_command",
    args: { argv: ["bash", "-c", "cat big"] },
    reason: "look",
    report: {
      kind: "command",
      argv: ["bash", "-c", "cat big"],
      exit_code: 0,
      timed_out: false,
      output: store.put(output).digest,
    },
  }, store);
  const shown = (sizes = PREVIEW_SIZES) => {
    const out = renderRetained(event, store, sizes).output as { head: string; tail: string; omitted: number };
    return utf8Length(out.head) + utf8Length(out.tail);
  };
  assert.equal(shown(), 512);
  assert.equal(shown({ retained: 2048, newest: 8192 }), 2048);
  // The newest view continues whichever preview the event has: preview + view is the whole 6,000 B output.
  const view = renderNewestView(event, store, { retained: 2048, newest: 8192 })!.output as { text: string };
  assert.equal(utf8Length(view.text), 6000 - 2048);
});
