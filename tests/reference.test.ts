// Byte ranges into stored content never return a character that is not there.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { select } from "../lib/reference.ts";

test("a byte range that splits a UTF-8 character is refused, naming the whole-character range", () => {
  const content = "aé€😀z"; // bytes: a(0) é(1-2) €(3-5) 😀(6-9) z(10)
  assert.deepEqual(select(content, { kind: "bytes", start: 0, end: 3 }), { ok: true, content: "aé" });
  const split = select(content, { kind: "bytes", start: 2, end: 7 });
  assert.deepEqual(split, {
    ok: false,
    error: "Byte range 2-7 splits a UTF-8 character; the whole characters are bytes=1-10",
  });
  assert.deepEqual(select(content, { kind: "bytes", start: 1, end: 10 }), { ok: true, content: "é€😀" });
});

test("a byte range either returns the exact bytes it names or is refused: never U+FFFD", () => {
  fc.assert(fc.property(fc.string({ unit: "binary" }), fc.nat(60), fc.nat(60), (text, a, b) => {
    const content = text.replace(/\uFFFD/g, "");
    const [start, end] = a <= b ? [a, b] : [b, a];
    const result = select(content, { kind: "bytes", start, end });
    if (!result.ok) return;
    const bytes = new TextEncoder().encode(content);
    assert.ok(!result.content.includes("\uFFFD"));
    assert.deepEqual(new TextEncoder().encode(result.content), bytes.subarray(start, Math.min(end, bytes.length)));
  }));
});
