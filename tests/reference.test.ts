// Byte ranges into stored content never return a character that is not there.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseReference, select } from "../lib/context/reference.ts";
import { type Digest, DigestIndex } from "../lib/text/digest.ts";

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

test("short digests: 12 hex digits, longer only where an earlier digest shares them, each resolving to its own", () => {
  const hex = (c: string, tail: string) => `sha256:${c.repeat(12)}${tail.padEnd(52, "0")}` as Digest;
  const index = new DigestIndex();
  const first = hex("a", "1");
  const second = hex("a", "2");
  const third = hex("a", "21");
  const other = hex("b", "");
  for (const d of [first, second, third, other]) index.add(d);
  assert.equal(index.abbreviate(first), `sha256:${"a".repeat(12)}`);
  assert.equal(index.abbreviate(second), `sha256:${"a".repeat(12)}2`);
  assert.equal(index.abbreviate(third), `sha256:${"a".repeat(12)}21`);
  assert.equal(index.abbreviate(other), `sha256:${"b".repeat(12)}`);
  // A short form resolves to the digest it was made for, even when later digests share it.
  for (const d of [first, second, third, other]) assert.equal(index.resolve(index.abbreviate(d)), d);
  assert.equal(index.resolve(first), first, "whole digests resolve exactly");
  assert.equal(index.resolve(`sha256:${"a".repeat(11)}`), undefined, "fewer than 12 digits name nothing");
  assert.equal(index.resolve(`sha256:${"c".repeat(12)}`), undefined);
  assert.equal(index.abbreviate("sha256:unknown"), "sha256:unknown");
});

test("short digests resolve to their own digest for any run of digests (property)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.stringMatching(/^[0-9a-f]{52}$/)), {
        minLength: 1,
        maxLength: 40,
      }),
      (specs) => {
        // Few distinct 12-digit heads, so collisions are the rule rather than the exception.
        const digests = [...new Set(specs.map(([head, tail]) => `sha256:${"0123"[head].repeat(12)}${tail}` as Digest))];
        const index = new DigestIndex();
        for (const d of digests) index.add(d);
        for (const d of digests) {
          const short = index.abbreviate(d);
          assert.ok(short.length >= 19 && d.startsWith(short));
          assert.equal(index.resolve(short), d);
        }
      },
    ),
  );
});

test("references take whole or short digests with any selection; fewer than 12 digits are malformed", () => {
  const short = `sha256:${"ab".repeat(6)}`;
  assert.deepEqual(parseReference(`${short}#bytes=1-4`), {
    ok: true,
    reference: { digest: short, selection: { kind: "bytes", start: 1, end: 4 } },
  });
  const tooShort = parseReference(`sha256:${"a".repeat(11)}`);
  assert.equal(tooShort.ok, false);
  assert.match((tooShort as { error: string }).error, /12 to 64 lowercase hex digits/);
});
