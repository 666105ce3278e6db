// The archive and the lookups answered from it, tested directly: capacity by events and by bytes, pages of the
// listing, abbreviated digests, and each lookup's answer or error (what the loop only shows end to end).
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Archive, ARCHIVE_MAX_EVENTS } from "../lib/context/archive.ts";
import { createEvent } from "../lib/context/events.ts";
import { answerLookup } from "../lib/context/lookups.ts";
import { ResultStore } from "../lib/context/store.ts";

function readEvent(seq: number, store: ResultStore, content = `content of file ${seq}\n`) {
  return createEvent({
    seq,
    step: seq,
    action: "read_file",
    args: { path: `f${seq}.txt` },
    report: { kind: "read", path: `f${seq}.txt`, result: store.put(content).digest },
  }, store);
}

test("the archive holds events in order and finds each by its whole or abbreviated digest", () => {
  const store = new ResultStore();
  const archive = new Archive();
  const sealed = [1, 2, 3].map((seq) => readEvent(seq, store));
  for (const event of sealed) archive.append(event);
  assert.equal(archive.length, 3);
  assert.equal(archive.bytes, sealed.reduce((sum, e) => sum + e.bytes, 0));
  assert.equal(archive.at(1)?.event.seq, 2);
  assert.equal(archive.get(sealed[2].digest), sealed[2]);
  assert.equal(archive.resolve(sealed[0].digest.slice(0, 7 + 12)), sealed[0].digest, "12 hex digits name it");
  assert.equal(archive.resolve("sha256:ffffffffffff"), undefined);
  assert.deepEqual(archive.limits, { events: ARCHIVE_MAX_EVENTS, bytes: 16 * 1024 * 1024 });
});

test("capacity: a full archive refuses the next event, by count and by bytes, and says so before appending", () => {
  const store = new ResultStore();
  const byCount = new Archive({ maxEvents: 2 });
  byCount.append(readEvent(1, store));
  byCount.append(readEvent(2, store));
  const third = readEvent(3, store);
  assert.equal(byCount.fits(third.bytes), false);
  assert.throws(() => byCount.append(third), RangeError);
  assert.equal(byCount.length, 2, "nothing appended past the limit");

  const first = readEvent(1, store);
  const byBytes = new Archive({ maxBytes: first.bytes * 2 - 1 });
  byBytes.append(first);
  assert.equal(byBytes.fits(first.bytes), false);
  assert.equal(byBytes.fits(first.bytes - 1), true);
});

test("the listing pages through every event once, and offsets past the end give an empty last page", () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 9 }), (count, pageSize) => {
    const store = new ResultStore();
    const archive = new Archive();
    for (let seq = 1; seq <= count; seq++) archive.append(readEvent(seq, store));
    const seen: number[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page = archive.list(offset, { pageSize });
      assert.ok(page.entries.length <= pageSize);
      seen.push(...page.entries.map((e) => e.seq));
      offset = page.next_offset;
    }
    assert.deepEqual(seen, Array.from({ length: count }, (_, i) => i + 1));
    assert.deepEqual(archive.list(count + 5), { entries: [], next_offset: null });
  }));
  const store = new ResultStore();
  const archive = new Archive();
  archive.append(readEvent(1, store));
  const [entry] = archive.list(0).entries;
  assert.deepEqual(Object.keys(entry).sort(), ["bytes", "digest", "kind", "seq", "summary"]);
  assert.match(entry.summary, /f1\.txt/);
});

test("clear empties the archive: nothing is found after the run", () => {
  const store = new ResultStore();
  const archive = new Archive();
  const event = readEvent(1, store);
  archive.append(event);
  archive.clear();
  assert.deepEqual([archive.length, archive.bytes, archive.get(event.digest), archive.resolve(event.digest)], [
    0,
    0,
    undefined,
    undefined,
  ]);
});

test("lookups: $result returns stored output, selected; $read_history an archived event; $list_history a page", () => {
  const store = new ResultStore();
  const archive = new Archive();
  const content = "line one\nline two\nline three\n";
  const event = readEvent(1, store, content);
  archive.append(event);
  const output = store.put(content).digest;
  const ask = (lookup: Parameters<typeof answerLookup>[0]) => answerLookup(lookup, { store, archive });

  assert.deepEqual(ask({ $result: output }), { lookup: { $result: output }, content });
  assert.deepEqual(ask({ $result: `${output}#lines=2-2` }), {
    lookup: { $result: `${output}#lines=2-2` },
    content: "line two",
  });
  assert.equal((ask({ $result: `${output.slice(0, 19)}#bytes=0-4` }) as { content: string }).content, "line");
  assert.equal((ask({ $read_history: event.digest }) as { content: string }).content, event.canonical);
  const page = ask({ $list_history: 0 }) as { page: { entries: { seq: number }[] } };
  assert.deepEqual(page.page.entries.map((e) => e.seq), [1]);
});

test("lookups: a malformed or unknown reference, or one of the wrong kind, is an error entry naming it", () => {
  const store = new ResultStore();
  const archive = new Archive();
  const event = readEvent(1, store);
  archive.append(event);
  const stored = store.put("only in the store").digest;
  const error = (lookup: Parameters<typeof answerLookup>[0]) =>
    (answerLookup(lookup, { store, archive }) as { error?: string }).error ?? "";
  assert.match(error({ $result: "sha256:xyz" }), /Malformed reference/);
  assert.match(error({ $result: `sha256:${"0".repeat(64)}` }), /no stored result has this digest/);
  assert.match(error({ $read_history: stored }), /no archived event has this digest/, "the store is not the archive");
  assert.match(error({ $result: event.digest }), /no stored result/, "the archive is not the store");
  assert.match(error({ $result: `${stored}#lines=0-1` }), /1-based/);
});
