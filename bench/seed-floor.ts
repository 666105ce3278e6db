// F_seed, the seed-conformant floor: the least any policy can pay showing what bounded shows (the same events, each
// with the same retained bytes, the same newest view, working state and candidates) while obeying the release note's
// window — a stable prefix, events only appended between checkpoints, a retirement only when a request would pass the
// 48 KiB trigger or the tail 64 events, and then a batch of the oldest events no larger than the one that brings the
// request to the 32 KiB target (and the tail to 32) — with ideal breakpoints (every byte written once is read at the
// read price by every later call whose prefix still holds it) and the retirement batches chosen in hindsight (a dynamic
// program over where the tail starts after each call). F_seed leaves out the checkpoint (its size depends on what was
// retired); bounded pays it. What bounded pays over F_seed is its breakpoint placement, its batch choice and its
// checkpoint; what F_seed pays over the protocol's floor F2 is the window itself: the tail re-read on every call, and
// re-written after every checkpoint (docs/benchmark.md).
import { utf8Length } from "../lib/text/digest.ts";
import { renderSection } from "../lib/providers/render-sections.ts";
import { RETIRE_TARGET_BYTES, RETIRE_TRIGGER_BYTES, TAIL_MAX, TAIL_TARGET } from "../lib/context/budget.ts";
import type { TurnRequest } from "../lib/vocabulary/turn.ts";
import type { CostSection } from "./cost.ts";
import { BYTES_PER_TOKEN } from "./cost.ts";
import { PRICE_SCENARIOS, SCENARIO_IDS, type ScenarioId } from "./prices.ts";

/** One bounded call as F_seed needs it (bytes of the Anthropic body by part; the trigger counts request bytes). */
export type SeedCall = {
  step: number;
  /** Tools (response schema), instructions, intent and tasks: the stable prefix. */
  fixed: number;
  /** Candidates and lookup responses: new on every call. */
  candidates: number;
  /** The newest event's view and the working state: new on every step. */
  perStep: number;
  /** The request's events, each as its bytes in the body (JSON and a separator) and its text (to know it again). */
  events: { text: string; bytes: number }[];
  /** The request's bytes as bounded's trigger counts them (lookup responses left out), with its own events in. */
  requestBytes: number;
};

/** Where F_seed's cost goes, in token units. */
export type SeedParts = {
  total: number;
  /** Older events read again from the cache on every call that still holds them. */
  tailReads: number;
  /** Events written again after a retirement changed the prefix before them. */
  rewrites: number;
  /** Each event written once as it enters the tail. */
  entering: number;
};

export type SeedFloor = Record<ScenarioId, SeedParts>;

const emptyParts = (): SeedParts => ({ total: 0, tailReads: 0, rewrites: 0, entering: 0 });
export const emptySeedFloor = (): SeedFloor =>
  Object.fromEntries(SCENARIO_IDS.map((id) => [id, emptyParts()])) as SeedFloor;

export function addSeedFloor(into: SeedFloor, from: SeedFloor): void {
  for (const id of SCENARIO_IDS) {
    for (const k of ["total", "tailReads", "rewrites", "entering"] as const) into[id][k] += from[id][k];
  }
}

/** A bounded request, cut into the parts F_seed prices (`parts`: RunCost.add's bytes by section). */
export function seedCall(
  request: TurnRequest,
  step: number,
  requestBytes: number,
  parts: Record<CostSection, number>,
): SeedCall {
  const checkpoint = request.sections.find((s) => s.section === "checkpoint");
  const eventsSection = request.sections.find((s) => s.section === "events");
  const events = eventsSection?.section === "events"
    ? eventsSection.events.map((e) => {
      const text = JSON.stringify(e) ?? "null";
      return { text, bytes: utf8Length(text) + 1 };
    })
    : [];
  const eventBytes = events.reduce((a, e) => a + e.bytes, 0);
  // Retirement looks at the persistent part of a request: lookup responses only use the room left under the ceiling.
  const lookups = request.sections.find((s) => s.section === "lookups");
  const lookupBytes = lookups ? utf8Length(JSON.stringify(lookups)) + 1 : 0;
  const shown = parts["older events"] + parts["previous newest"] + parts.newest;
  return {
    step,
    fixed: parts["tools / response format"] + parts.prefix - (checkpoint ? utf8Length(renderSection(checkpoint)) : 0),
    candidates: parts.candidates + parts.lookups,
    perStep: Math.max(0, shown - eventBytes) + parts["working state"],
    events,
    requestBytes: requestBytes - lookupBytes,
  };
}

type State = { parts: SeedParts };

/** F_seed of one run under one price pair (write w, read r), by the dynamic program over tail starts. */
export function seedFloorCost(
  calls: readonly SeedCall[],
  { write: w, read: r }: { write: number; read: number },
  { trigger, target } = { trigger: RETIRE_TRIGGER_BYTES, target: RETIRE_TARGET_BYTES },
): SeedParts {
  // Every event in the order it entered; a call's events are a run of them ending at its newest.
  const index = new Map<string, number>();
  const sizes: number[] = [];
  const spans = calls.map((call) => {
    let first = -1, last = -1;
    for (const e of call.events) {
      let i = index.get(e.text);
      if (i === undefined) index.set(e.text, i = sizes.push(e.bytes) - 1);
      if (first < 0) first = i;
      last = i;
    }
    return { first, last, own: call.events.reduce((a, e) => a + e.bytes, 0) };
  });
  const cum = [0];
  for (const s of sizes) cum.push(cum[cum.length - 1] + s);
  const span = (a: number, b: number) => (b < a ? 0 : cum[b + 1] - cum[a]);

  // The fixed, candidate and per-step parts do not depend on the tail: as F2 prices them.
  const base = emptyParts();
  // A step's newest view and working state: written by its first call when a later call of the step reads them
  // (uncached when none does); what a later call adds is new.
  calls.forEach((call, i) => {
    base.total += (i === 0 ? w : r) * call.fixed + call.candidates;
    const previous = calls[i - 1]?.step === call.step ? calls[i - 1].perStep : null;
    const readLater = calls[i + 1]?.step === call.step;
    const held = previous === null ? 0 : Math.min(previous, call.perStep);
    base.total += r * held + (readLater ? w : 1) * (call.perStep - held);
  });

  // Forward over the calls: for each start of the tail after the call, the cheapest way there.
  let states = new Map<number, State>([[0, { parts: emptyParts() }]]);
  let lastBefore = -1;
  calls.forEach((call, c) => {
    const { last } = spans[c];
    const final = c === calls.length - 1;
    const wNew = final ? Math.min(w, 1) : w;
    const next = new Map<number, State>();
    const keep = (a: number, parts: SeedParts) => {
      const held = next.get(a);
      if (!held || parts.total < held.parts.total) next.set(a, { parts });
    };
    const other = call.requestBytes - spans[c].own;
    const size = (a: number) => other + span(a, last);
    const count = (a: number) => (last < a ? 0 : last - a + 1);
    for (const [aPrev, { parts }] of states) {
      const start = Math.min(aPrev, Math.max(last, 0));
      const price = (a: number): SeedParts => {
        const p = { ...parts };
        let reads = 0, rewrites = 0, entering = 0;
        if (a === aPrev) {
          reads = r * span(a, lastBefore);
          entering = wNew * span(Math.max(a, lastBefore + 1), last);
        } else {
          rewrites = w * span(a, lastBefore);
          entering = wNew * span(Math.max(a, lastBefore + 1), last);
        }
        p.tailReads += reads;
        p.rewrites += rewrites;
        p.entering += entering;
        p.total += reads + rewrites + entering;
        return p;
      };
      if (last < 0 || (size(start) <= trigger && count(start) <= TAIL_MAX)) {
        keep(aPrev, price(aPrev));
        continue;
      }
      // Past the trigger: retire at least enough to come back under it, at most what reaches the target.
      let least = start + 1;
      while (least < last && (size(least) > trigger || count(least) > TAIL_MAX)) least++;
      least = Math.min(least, last);
      let most = least;
      while (most < last && (size(most) > target || count(most) > TAIL_TARGET)) most++;
      for (let a = least; a <= most; a++) keep(a, price(a));
    }
    states = next;
    lastBefore = Math.max(lastBefore, last);
  });
  let best: SeedParts | null = null;
  for (const { parts } of states.values()) if (!best || parts.total < best.total) best = parts;
  const tail = best ?? emptyParts();
  const tokens = (n: number) => n / BYTES_PER_TOKEN;
  return {
    total: tokens(base.total + tail.total),
    tailReads: tokens(tail.tailReads),
    rewrites: tokens(tail.rewrites),
    entering: tokens(tail.entering),
  };
}

/** F_seed of one run under every price scenario (each scenario's write and read prices, as F2 takes them). */
export function seedFloorOf(calls: readonly SeedCall[]): SeedFloor {
  return Object.fromEntries(
    PRICE_SCENARIOS.map((s) => [s.id, seedFloorCost(calls, { write: s.write, read: s.read })]),
  ) as SeedFloor;
}
