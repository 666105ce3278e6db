import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { headAndTail } from "../lib/render-event.ts";
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
