// Property tests of the bounded policy over random event streams and sizes.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { ResultStore } from "../lib/context/store.ts";
import { utf8Length } from "../lib/text/digest.ts";
import {
  CEILING_BYTES,
  RETIRE_TARGET_BYTES,
  RETIRE_TRIGGER_BYTES,
  TAIL_MAX,
  TAIL_TARGET,
} from "../lib/context/budget.ts";
import { NEWEST_PREVIEW_BYTES, RETAINED_PREVIEW_BYTES } from "../lib/context/render-event.ts";
import {
  type Answer,
  answer,
  give,
  pick,
  runLoopReported,
  ScriptedExecutor,
  sliceRequest,
} from "./helpers/loop-builders.ts";
import type { TurnRequest } from "../lib/vocabulary/turn.ts";

const ORDER = [
  "instructions",
  "intent",
  "tasks",
  "checkpoint",
  "events",
  "newest",
  "working_state",
  "candidates",
  "lookups",
];

const text = (size: number, seed: number) => {
  const alphabet = ["a", "b", " ", "\n", '"', "\\", "é", "✓", "😀", "\t", "<", "x"];
  const parts: string[] = [];
  let bytes = 0;
  let s = seed;
  while (bytes < size) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const c = alphabet[s % alphabet.length];
    parts.push(c);
    bytes += utf8Length(c);
  }
  return parts.join("");
};

const stepArb = fc.record({
  action: fc.constantFrom("read_file", "run_command", "run_tests", "edit_file", "print"),
  size: fc.oneof(
    fc.integer({ min: 0, max: 600 }),
    fc.integer({ min: 600, max: 12_000 }),
    fc.integer({ min: 12_000, max: 70_000 }),
  ),
  selectionLookups: fc.integer({ min: 0, max: 3 }),
  argumentLookups: fc.integer({ min: 0, max: 2 }),
  seed: fc.integer({ min: 1, max: 1 << 30 }),
});

const runArb = fc.record({
  instructions: fc.integer({ min: 0, max: 12_000 }),
  intent: fc.integer({ min: 1, max: 6_000 }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 110, size: "max" }),
});

type RunSpec = typeof runArb extends fc.Arbitrary<infer T> ? T : never;

function build(run: RunSpec) {
  const store = new ResultStore();
  const answers: Answer[] = [];
  const outputs: string[] = [];
  const known: string[] = [];
  for (const [i, s] of run.steps.entries()) {
    for (let k = 0; k < s.selectionLookups; k++) {
      const ref = known.length ? known[(s.seed + k) % known.length] : `sha256:${"a".repeat(64)}`;
      const kinds = [{ $list_history: (s.seed + k) % 40 }, { $result: ref }, {
        $result: `${ref}#bytes=0-${s.size % 5000}`,
      }, { $read_history: ref }];
      answers.push(answer("selection", kinds[(s.seed + k) % kinds.length]));
    }
    answers.push(pick(s.action as never, i % 3 === 0 ? text(s.size % 900, s.seed) : undefined));
    const content = text(s.size, s.seed);
    if (s.action !== "run_tests") {
      for (let k = 0; k < s.argumentLookups; k++) answers.push(answer("arguments", { $list_history: k }));
    }
    if (s.action === "read_file") answers.push(give({ path: `f${i}.txt` }));
    if (s.action === "run_command") answers.push(give({ argv: ["bash", "-c", text(s.seed % 1500, s.seed)] }));
    if (s.action === "edit_file") {
      answers.push(give({ path: "a.txt", old_text: text(s.size % 3000 + 1, s.seed), new_text: "y" }));
    }
    if (s.action === "print") answers.push(give({ text: content }));
    if (s.action !== "edit_file" && s.action !== "print") {
      outputs.push(content);
      known.push(store.put(content).digest);
    }
  }
  answers.push(pick("finish"), give({ status: "success", summary: "done" }));
  return { store, answers, outputs };
}

async function runBounded(run: RunSpec) {
  const { store, answers, outputs } = build(run);
  const provider = new ScriptedProvider(answers, { keepRequests: true });
  const request = sliceRequest({ instructions: text(run.instructions, 7), intent: text(run.intent, 11) });
  const result = await runLoopReported(request, {
    policy: "bounded",
    provider,
    executor: new ScriptedExecutor(store, outputs),
    store,
    now: () => 0,
    version: "t",
  });
  return { result, requests: provider.requests, request };
}

const prefixOf = (r: TurnRequest) =>
  JSON.stringify(r.sections.filter((s) => ["instructions", "intent", "checkpoint"].includes(s.section)));

test("bounded: every request <= 64 KiB, sections in order, instructions and intent verbatim, exact byte counts", async () => {
  await fc.assert(
    fc.asyncProperty(runArb, async (run) => {
      const { result, requests, request } = await runBounded(run);
      assert.equal(result.outcome, "completed", result.error?.message);
      for (const [i, r] of requests.entries()) {
        const bytes = utf8Length(JSON.stringify(r));
        assert.ok(bytes <= CEILING_BYTES, `request ${i} is ${bytes} bytes`);
        assert.equal(result.report.calls[i].request_bytes, bytes);
        const names = r.sections.map((s) => s.section);
        const positions = names.map((n) => ORDER.indexOf(n));
        assert.deepEqual(positions, [...positions].sort((a, b) => a - b), `order ${names}`);
        assert.deepEqual(names.filter((n) => n !== "checkpoint" && n !== "lookups" && n !== "newest"), [
          "instructions",
          "intent",
          "tasks",
          "events",
          "working_state",
          "candidates",
        ]);
        assert.equal((r.sections[0] as { text: string }).text, request.instructions);
        assert.equal((r.sections[1] as { text: string }).text, request.intent);
      }
    }),
    { numRuns: 40, endOnFailure: true },
  );
});

test("bounded: the prefix changes only at a checkpoint, and each retirement is a batch down to the targets", async () => {
  let seen = 0;
  await fc.assert(
    fc.asyncProperty(runArb, async (run) => {
      const { result, requests } = await runBounded(run);
      let checkpoints = 0;
      for (let i = 1; i < requests.length; i++) {
        const changed = prefixOf(requests[i]) !== prefixOf(requests[i - 1]);
        assert.equal(changed, result.report.calls[i].checkpoint, `call ${i}: prefix changed=${changed}`);
        if (!result.report.calls[i].checkpoint) continue;
        checkpoints++;
        const r = requests[i];
        const events = (r.sections.find((s) => s.section === "events") as { events: unknown[] }).events;
        const withoutLookups = { ...r, sections: r.sections.filter((s) => s.section !== "lookups") };
        const bytes = utf8Length(JSON.stringify(withoutLookups));
        // A retirement forced by this stage's lookup responses only has to make room under the ceiling (checked above).
        if (r.sections.some((s) => s.section === "lookups")) continue;
        // Otherwise the targets were reached, or only the newest event is left (it is retired only if it cannot fit).
        assert.ok(
          (bytes <= RETIRE_TARGET_BYTES && events.length <= TAIL_TARGET) || events.length <= 1,
          `after retirement: ${bytes} B, ${events.length} events`,
        );
      }
      assert.equal(checkpoints, result.report.checkpoints - (result.report.calls[0]?.checkpoint ? 1 : 0));
      seen += checkpoints;
    }),
    { numRuns: 40, endOnFailure: true },
  );
  // the generator must actually exercise retirement
  assert.ok(seen > 10, `only ${seen} checkpoints in all generated runs`);
});

test("bounded: retirement happens only when needed, the tail never exceeds 64, nothing is cut", async () => {
  await fc.assert(
    fc.asyncProperty(runArb, async (run) => {
      const { result, requests } = await runBounded(run);
      for (const [i, r] of requests.entries()) {
        const events = (r.sections.find((s) => s.section === "events") as { events: Record<string, unknown>[] }).events;
        assert.ok(events.length <= TAIL_MAX);
        const checkpoint = r.sections.find((s) => s.section === "checkpoint") as
          | { checkpoint: Record<string, unknown> }
          | undefined;
        // the working state describes the tail this very request carries
        const state = (r.sections.find((s) =>
          s.section === "working_state"
        ) as { state: { recent_artifacts?: Record<string, unknown>[] } }).state;
        // no counter that moves on every call (SPEC §4): those ride on the candidates, the retired count on the
        // checkpoint, which counts exactly the events before the tail's first
        for (const key of ["step", "max_steps", "lookups_used", "archive"]) {
          assert.ok(!(key in state), key);
        }
        const candidates = r.sections.find((s) =>
          s.section === "candidates"
        ) as Record<string, unknown>;
        assert.equal(typeof candidates.step, "number");
        assert.equal(typeof candidates.lookups_used, "number");
        if (events.length > 0) {
          assert.equal(
            (checkpoint?.checkpoint.retired as number | undefined) ?? 0,
            (events[0].step as number) - 1,
            `request ${i}: checkpoint retired count`,
          );
        }
        // an artifact whose event the tail shows is left out; a retired one carries its digest
        assert.notDeepEqual(state.recent_artifacts, [], "an empty list is left out");
        for (const a of state.recent_artifacts ?? []) {
          assert.ok(!("step" in a), `request ${i}: an artifact named by step`);
          assert.match(String(a.digest), /^sha256:/);
        }
        if (checkpoint) {
          for (const key of ["retired_seq", "retired", "by_kind", "revision", "last_test"]) {
            assert.ok(key in checkpoint.checkpoint);
          }
        }
        // every bulk value is whole (a string), or head+tail with an exact omitted count and its reference, showing
        // at least 512 B; the newest event's view continues its cut values exactly where the preview leaves off, so
        // preview and view together show at least 8 KiB and no byte twice
        const view = r.sections.find((s) => s.section === "newest") as
          | { step: number; view: Record<string, Record<string, unknown> | undefined> }
          | undefined;
        if (view) assert.equal(view.step, events.at(-1)?.step);
        for (const [j, e] of events.entries()) {
          for (const key of ["output", "result", "text"]) {
            const p = e[key] as string | Record<string, unknown> | undefined;
            if (p === undefined || typeof p === "string") continue;
            assert.match(String(p.ref), /^sha256:[0-9a-f]{12,64}$/);
            // an output an earlier event already showed is named by that step, never shown twice
            if ("same_as_step" in p) {
              assert.deepEqual(Object.keys(p).sort(), ["bytes", "ref", "same_as_step"]);
              assert.ok((p.same_as_step as number) < (e.step as number), `same_as_step ${p.same_as_step} is earlier`);
              continue;
            }
            const shown = utf8Length(String(p.head)) + utf8Length(String(p.tail));
            assert.equal(shown + (p.omitted as number), p.bytes);
            assert.ok(shown >= RETAINED_PREVIEW_BYTES - 8, `preview of ${shown} B`);
            if (!view || j !== events.length - 1) continue;
            const c = view.view[key];
            assert.ok(c, `the newest event's cut ${key} is continued in its view`);
            assert.equal(c.ref, p.ref);
            assert.equal(c.from, utf8Length(String(p.head)));
            assert.equal(c.to, (c.from as number) + (p.omitted as number));
            const more = "text" in c
              ? utf8Length(String(c.text))
              : utf8Length(String(c.head)) + utf8Length(String(c.tail));
            if ("text" in c) assert.equal(more, p.omitted);
            else assert.equal(more + (c.omitted as number), p.omitted);
            assert.ok(
              shown + more >= Math.min(p.bytes as number, NEWEST_PREVIEW_BYTES) - 8,
              `newest shows ${shown + more} B`,
            );
          }
        }
      }
      // all retired events are accounted for by the checkpoint
      const last = requests.at(-1)!;
      const cp = last.sections.find((s) => s.section === "checkpoint") as
        | { checkpoint: { retired: number } }
        | undefined;
      assert.equal(cp?.checkpoint.retired ?? 0, result.report.retired_events);
    }),
    { numRuns: 30, endOnFailure: true },
  );
});

test("bounded and legacy produce the same execution reports for the same decisions", async () => {
  await fc.assert(
    fc.asyncProperty(runArb, async (run) => {
      const out: unknown[] = [];
      for (const policy of ["legacy", "bounded"] as const) {
        const { store, answers, outputs } = build(run);
        const result = await runLoopReported(sliceRequest(), {
          policy,
          provider: new ScriptedProvider(answers),
          executor: new ScriptedExecutor(store, outputs),
          store,
          now: () => 0,
          version: "t",
        });
        out.push(result.reports);
      }
      assert.deepEqual(out[0], out[1]);
    }),
    { numRuns: 15, endOnFailure: true },
  );
});

/** Runs the scripted answers, then a finish, under the bounded policy with the scripted outputs. */
async function runScripted(answers: Answer[], outputs: string[], request = sliceRequest()) {
  answers.push(pick("finish"), give({ status: "success", summary: "s" }));
  const store = new ResultStore();
  const provider = new ScriptedProvider(answers, { keepRequests: true });
  const result = await runLoopReported(request, {
    policy: "bounded",
    provider,
    executor: new ScriptedExecutor(store, outputs),
    store,
    now: () => 0,
    version: "t",
  });
  return { result, requests: provider.requests };
}

test("retirement is triggered by 48 KiB, not before: a run that stays small never checkpoints", async () => {
  const answers: Answer[] = [];
  const outputs: string[] = [];
  for (let i = 0; i < 20; i++) {
    answers.push(pick("run_tests"));
    outputs.push(`ok ${i}`);
  }
  const { result } = await runScripted(answers, outputs);
  assert.equal(result.report.checkpoints, 0);
  assert.ok(result.report.phases.selection.request_bytes.max < RETIRE_TRIGGER_BYTES);
});

test("a count-triggered retirement retires a batch (down to 32 events), not one event", async () => {
  const answers: Answer[] = [];
  const outputs: string[] = [];
  for (let i = 0; i < 70; i++) {
    answers.push(pick("run_tests"));
    outputs.push("ok");
  }
  const { result } = await runScripted(answers, outputs);
  assert.equal(result.report.checkpoints, 1);
  assert.equal(result.report.retired_events, TAIL_MAX + 1 - TAIL_TARGET);
});

test("a very large prefix does not make every request retire everything: the tail keeps the newest events", async () => {
  for (const size of [36_000, 50_000]) {
    const answers: Answer[] = [];
    const outputs: string[] = [];
    for (let i = 0; i < 40; i++) {
      answers.push(pick("run_command"), give({ argv: ["bash", "-c", `step ${i}`] }));
      outputs.push(text(900, i + 1));
    }
    const { result, requests } = await runScripted(answers, outputs, sliceRequest({ instructions: text(size, 3) }));
    assert.equal(result.outcome, "completed", result.error?.message);
    // With 36 KB of instructions only ~12 KB of room is left below the trigger; halfway retirement keeps both the
    // context and the cache usable (before this rule, every second request retired the whole tail). With 50 KB (58 KB
    // serialized) the prefix and the run's one response schema leave ~2 KB under the ceiling: one retirement per step
    // at most (the selection request), never one per call.
    assert.ok(
      result.report.checkpoints * 100 / result.report.model_calls <= (size === 36_000 ? 15 : 50),
      `${result.report.checkpoints} checkpoints in ${result.report.model_calls} calls`,
    );
    for (const [i, r] of requests.entries()) {
      assert.ok(utf8Length(JSON.stringify(r)) <= CEILING_BYTES);
      const events = (r.sections.find((s) => s.section === "events") as { events: unknown[] }).events;
      if (i > 1) assert.ok(events.length >= 1, `request ${i} (prefix ${size} B) shows no event`);
    }
  }
});

test("an entering event's preview shrinks from 2 KiB toward the 512 B floor as the tail fills, and stays as it entered", async () => {
  const answers: Answer[] = [];
  const outputs: string[] = [];
  for (let i = 0; i < 40; i++) {
    answers.push(pick("run_command"), give({ argv: ["bash", "-c", `step ${i}`] }));
    outputs.push(text(6000, i + 1));
  }
  const { result, requests } = await runScripted(answers, outputs);
  assert.equal(result.outcome, "completed", result.error?.message);
  const shownBy = new Map<number, number[]>();
  for (const r of requests) {
    const events = (r.sections.find((s) => s.section === "events") as { events: Record<string, any>[] }).events;
    for (const e of events) {
      if (typeof e.output !== "object") continue;
      const shown = utf8Length(e.output.head) + utf8Length(e.output.tail);
      shownBy.set(e.step, [...(shownBy.get(e.step) ?? []), shown]);
    }
  }
  const sizes = [...shownBy.entries()].sort(([a], [b]) => a - b).map(([, s]) => s);
  // Append-only: every request shows an event's preview at the size it entered with.
  for (const s of sizes) assert.ok(s.every((x) => x === s[0]), `one size per event: ${s}`);
  const first = sizes.map((s) => s[0]);
  assert.ok(first[0] >= 2040, `the first event enters an empty tail with 2 KiB: ${first[0]}`);
  assert.ok(first.every((x) => x >= RETAINED_PREVIEW_BYTES - 8), "never below the floor");
  // As the tail fills, less room is left: previews shrink (here to ~1.2 KiB, before the 48 KiB trigger retires a
  // batch and gives the next events room again).
  assert.ok(Math.min(...first) < 1300, `a fuller tail gets smaller previews: ${first}`);
  assert.ok(result.report.checkpoints > 0);
  const afterShrink = first.findIndex((x, i) => i > 0 && x < first[i - 1]);
  assert.ok(afterShrink > 0 && first.slice(afterShrink).some((x) => x >= 2040), "room again after a retirement");
});
