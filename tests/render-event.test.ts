import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkPreviewSizes,
  entryPreviewBytes,
  NEWEST_PREVIEW_BYTES,
  PREVIEW_SIZES,
  renderNewestView,
  renderRetained,
  RETAINED_PREVIEW_BYTES,
} from "../lib/context/render-event.ts";
import { createEvent } from "../lib/context/events.ts";
import { ResultStore } from "../lib/context/store.ts";
import { utf8Length } from "../lib/text/digest.ts";
import { headAndTail } from "../lib/text/clip.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { give, pick, runLoopReported, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";

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

test("preview sizes below the SPEC's floors, or out of order, are refused", () => {
  const sizes = (retained: number, upTo: number, newest: number) => ({ retained, upTo, newest });
  assert.throws(() => checkPreviewSizes(sizes(256, 4096, NEWEST_PREVIEW_BYTES)), /below the floors/);
  assert.throws(() => checkPreviewSizes(sizes(512, 512, 4096)), /below the floors/);
  assert.throws(() => checkPreviewSizes(sizes(2048, 1024, 8192)), /out of order/);
  assert.throws(() => checkPreviewSizes(sizes(512, 16_384, 8192)), /out of order/);
  assert.deepEqual(checkPreviewSizes(PREVIEW_SIZES), sizes(RETAINED_PREVIEW_BYTES, 2048, NEWEST_PREVIEW_BYTES));
});

test("an entering event's preview is an eighth of the room left, between the floor and the cap", () => {
  assert.equal(entryPreviewBytes(PREVIEW_SIZES, 40_000), 2048);
  assert.equal(entryPreviewBytes(PREVIEW_SIZES, 12_000), 1500);
  assert.equal(entryPreviewBytes(PREVIEW_SIZES, 3000), 512);
  assert.equal(entryPreviewBytes(PREVIEW_SIZES, -5000), 512, "a request past the trigger still gets the floor");
  assert.equal(entryPreviewBytes({ retained: 1024, upTo: 1024, newest: 8192 }, 40_000), 1024, "fixed sizes");
});

test("a larger preview shows more of a retained value, and the newest view continues whichever preview it has", () => {
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
  const shown = (limit?: number) => {
    const out = renderRetained(event, store, limit).output as { head: string; tail: string; omitted: number };
    return utf8Length(out.head) + utf8Length(out.tail);
  };
  assert.equal(shown(), 512);
  assert.equal(shown(2048), 2048);
  // Preview + view is the whole 6,000 B output, no byte twice.
  const view = renderNewestView(event, store, { retained: 2048 })!.output as { text: string };
  assert.equal(utf8Length(view.text), 6000 - 2048);
});

test("an output only a little over the preview is shown whole, with no reference; a longer one is cut", () => {
  const store = new ResultStore();
  const event = (output: string) =>
    createEvent({
      seq: 1,
      step: 1,
      action: "run_command",
      args: { argv: ["bash", "-c", "x"] },
      reason: "r",
      report: {
        kind: "command",
        argv: ["bash", "-c", "x"],
        exit_code: 0,
        timed_out: false,
        output: store.put(output).digest,
      },
    }, store).event;
  const near = "n".repeat(560); // 48 bytes over: its preview (ref, size, keys) would take more than that
  assert.equal(renderRetained(event(near), store).output, near);
  assert.equal(renderNewestView(event(near), store), null, "nothing left to continue");
  const far = "f".repeat(900);
  const cut = renderRetained(event(far), store).output as { ref: string; omitted: number };
  assert.equal(cut.omitted, 900 - 512);
  assert.match(cut.ref, /^sha256:[0-9a-f]{12}$/);
});

test("bounded: an output an earlier step showed is named by that step, never sent again; small repeats stay inline", async () => {
  const big = "def parse(x):\n    return x\n".repeat(200);
  const small = "ok\n";
  const reads = [big, small, "other output\n".repeat(50), big, small, big];
  const store = new ResultStore();
  const answers = [
    ...reads.flatMap((_, i) => [pick("read_file"), give({ path: `f${i}.py` })]),
    pick("finish"),
    give({ status: "success", summary: "done" }),
  ];
  const provider = new ScriptedProvider(answers, { keepRequests: true });
  let t = 0;
  const result = await runLoopReported(sliceRequest(), {
    policy: "bounded",
    provider,
    executor: new ScriptedExecutor(store, reads.slice()),
    store,
    now: () => (t += 1),
    version: "test",
  });
  assert.equal(result.outcome, "completed");
  const last = provider.requests.at(-1)!;
  const events = (last.sections.find((s) => s.section === "events") as { events: Record<string, unknown>[] }).events;
  const output = (step: number) => events.find((e) => e.step === step)!.result;
  assert.equal(typeof output(1) === "object" && "head" in (output(1) as object), true, "the first showing previews");
  for (const step of [4, 6]) {
    assert.deepEqual(output(step), {
      ref: store.abbreviate(store.put(big).digest),
      bytes: utf8Length(big),
      same_as_step: 1,
    });
  }
  assert.equal(output(5), small, "a repeat too small to be worth a reference is shown");
  // The newest view does not continue a repeated output either.
  const atSix = provider.requests.find((r) =>
    r.sections.some((s) => s.section === "candidates" && (s as { step?: number }).step === 7)
  )!;
  assert.equal(atSix.sections.some((s) => s.section === "newest"), false);
});
