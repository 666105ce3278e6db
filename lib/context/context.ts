// The two context policies. Both see the same events; only what is sent to the model differs.
// Requests are assembled from cached JSON fragments, so building one never re-serializes the archive, and the
// byte count is exact: bytes == utf8Length(JSON.stringify(request)).
import { advanceCheckpoint, type Checkpoint, emptyCheckpoint } from "./checkpoint.ts";
import {
  type Budget,
  DEFAULT_BUDGET,
  needsRetirement,
  retirementBatch,
  retirementTarget,
  TAIL_MAX,
  triggerReachable,
} from "./budget.ts";
import { utf8Length } from "../text/digest.ts";
import { BudgetError } from "../errors.ts";
import { type Bulk, isBulk, type SealedEvent } from "./events.ts";
import type { ContextPolicyName } from "../policy.ts";
import {
  checkPreviewSizes,
  entryPreviewBytes,
  PREVIEW_SIZES,
  type PreviewSizes,
  renderLegacy,
  renderNewestView,
  renderRetained,
  REPEAT_MIN_BYTES,
} from "./render-event.ts";
import type { ResultStore } from "./store.ts";
import type { JsonSchema, Phase, Section, TurnRequest } from "../vocabulary/turn.ts";

export type RequestParts = {
  phase: Phase;
  responseSchema: { json: JsonSchema; text: string };
  candidates: Extract<Section, { section: "candidates" }>;
  /** The working state (bounded only; legacy ignores it), made for the tail a request actually carries. */
  state: (view: TailView) => unknown;
  lookups: unknown[];
};

/** What the working state may depend on: which steps the tail still holds, and how many events were retired. */
export type TailView = { retains: (step: number) => boolean; retired: number };

export type BuiltRequest = {
  request: TurnRequest;
  bytes: number;
  /** A checkpoint was made for this request (the prefix changed). */
  checkpointed: boolean;
  retired: number;
};

export interface ContextPolicy {
  readonly name: ContextPolicyName;
  /** Adds the event of a completed execution. */
  append(sealed: SealedEvent): void;
  /** Builds the next request, retiring events first when the bounded rules say so. */
  build(parts: RequestParts): BuiltRequest;
  /**
   * A lookup entry as the next request may carry it: itself, or, when it would push the request over this policy's
   * ceiling, an error entry with its size and the room left (`omitted`).
   */
  fitLookup(parts: RequestParts, entry: Record<string, unknown>): { entry: Record<string, unknown>; omitted: boolean };
  readonly retiredCount: number;
}

type Fragment = { value: unknown; json: string; bytes: number };

function fragment(value: unknown): Fragment {
  const json = JSON.stringify(value);
  return { value, json, bytes: utf8Length(json) };
}

const EVENTS_OPEN = utf8Length(`{"section":"events","events":[`);
const EVENTS_CLOSE = 2; // ]}

/** Assembles a request from fragments; returns the object and its exact serialized size. */
function assemble(
  { phase, responseSchema, candidates, lookups }: RequestParts,
  { prefix, events, eventBytes, newestSection = null, stateSection }: {
    prefix: Fragment[];
    events: unknown[];
    eventBytes: number;
    newestSection?: Fragment | null;
    stateSection: Fragment | null;
  },
): { request: TurnRequest; bytes: number } {
  const eventsSection = { section: "events" as const, events };
  const tailSections: Fragment[] = [];
  if (newestSection) tailSections.push(newestSection);
  if (stateSection) tailSections.push(stateSection);
  tailSections.push(fragment(candidates));
  // A copy: the caller keeps appending to its list, and a request must never change after it is built.
  if (lookups.length > 0) tailSections.push(fragment({ section: "lookups", responses: lookups.slice() }));
  const sections = [...prefix.map((f) => f.value), eventsSection, ...tailSections.map((f) => f.value)] as Section[];
  const head = `{"phase":${JSON.stringify(phase)},"response_schema":`.length + utf8Length(responseSchema.text) +
    `,"sections":[`.length;
  const sectionCount = prefix.length + 1 + tailSections.length;
  let bytes = head + (sectionCount - 1) + 2; // commas between sections, "]}"
  for (const f of prefix) bytes += f.bytes;
  bytes += EVENTS_OPEN + eventBytes + Math.max(0, events.length - 1) + EVENTS_CLOSE;
  for (const f of tailSections) bytes += f.bytes;
  return { request: { phase, response_schema: responseSchema.json, sections }, bytes };
}

export type ContextOptions = {
  instructions: string;
  intent: string;
  /** What each phase asks and the actions: constant for the run, so part of the stable prefix. */
  tasks?: Extract<Section, { section: "tasks" }>;
  store: ResultStore;
  /** Bounded only: preview sizes at or above the SPEC's floors; default 512 B-2 KiB by room, 8 KiB newest. */
  previews?: PreviewSizes;
  /** Bounded only: trigger, target and ceiling; default the SPEC's 48/32/64 KiB (smaller for a small server context). */
  budget?: Budget;
};

/** Instructions and intent, verbatim, then the tasks. */
function prefixOf(
  { instructions, intent, tasks }: Pick<ContextOptions, "instructions" | "intent" | "tasks">,
): Fragment[] {
  const prefix = [
    fragment({ section: "instructions", text: instructions }),
    fragment({ section: "intent", text: intent }),
  ];
  if (tasks) prefix.push(fragment(tasks));
  return prefix;
}

/** The rolling transcript: every event with its bulk inline. No ceiling, nothing retired. */
class LegacyContext implements ContextPolicy {
  readonly name = "legacy" as const;
  readonly retiredCount = 0;
  readonly #prefix: Fragment[];

  readonly #events: unknown[] = [];
  #eventBytes = 0;
  readonly #store: ResultStore;

  constructor({ instructions, intent, tasks, store }: ContextOptions) {
    this.#prefix = prefixOf({ instructions, intent, tasks });
    this.#store = store;
  }

  append(sealed: SealedEvent): void {
    const rendered = fragment(renderLegacy(sealed.event, this.#store));
    this.#events.push(rendered.value);
    this.#eventBytes += rendered.bytes;
  }

  /** The rolling transcript has no ceiling: every entry fits. */
  fitLookup(_parts: RequestParts, entry: Record<string, unknown>) {
    return { entry, omitted: false };
  }

  build(parts: RequestParts): BuiltRequest {
    return { ...this.#assemble(parts), checkpointed: false, retired: 0 };
  }

  #assemble(parts: RequestParts) {
    return assemble(parts, {
      prefix: this.#prefix,
      events: this.#events.slice(),
      eventBytes: this.#eventBytes,
      stateSection: null,
    });
  }
}

/** `newest` is the event's larger view, sent while it is the newest event (null when the retained form shows all). */
type TailEntry = { sealed: SealedEvent; retained: Fragment; newest: Fragment | null };

/** Stable prefix + retained tail + working state + candidates + lookups, under the ceiling (64 KiB, or less for a small server context). */
export class BoundedContext implements ContextPolicy {
  readonly name = "bounded" as const;
  readonly #base: Fragment[];
  #checkpoint: Checkpoint;
  #checkpointFragment: Fragment | null = null;
  readonly #tail: TailEntry[] = [];
  #tailRetainedBytes = 0;
  #retired = 0;
  readonly #store: ResultStore;
  readonly #previews: PreviewSizes;
  readonly #budget: Budget;
  /** Outputs (by digest) a retained event showed, and the step of the first: a repeat is shown as a reference. */
  readonly #shown = new Map<string, number>();

  constructor(
    { instructions, intent, tasks, store, previews = PREVIEW_SIZES, budget = DEFAULT_BUDGET }: ContextOptions,
  ) {
    this.#base = prefixOf({ instructions, intent, tasks });
    this.#budget = budget;
    this.#checkpoint = emptyCheckpoint();
    this.#store = store;
    this.#previews = checkPreviewSizes(previews);
  }

  get retiredCount(): number {
    return this.#retired;
  }

  get checkpoint(): Checkpoint | null {
    return this.#checkpoint.retired > 0 ? this.#checkpoint : null;
  }

  get tailLength(): number {
    return this.#tail.length;
  }

  append(sealed: SealedEvent): void {
    // The event's rendering is fixed here, once: later requests send the same bytes until it is retired, so
    // prompt caches reuse every retained event. Its view as the newest event (the rest of its output) is a separate section.
    const previous = this.#tail[this.#tail.length - 1];
    if (previous) previous.newest = null;
    // The preview size is chosen here from the room the tail has left, and fixed with the rendering.
    let used = this.#tailRetainedBytes + (this.#checkpointFragment?.bytes ?? 0);
    for (const f of this.#base) used += f.bytes;
    const limit = entryPreviewBytes(this.#previews, this.#budget.trigger - used);
    // An output a retained or retired event already showed (the same digest) is named by its step, never sent twice.
    const shownAt = (bulk: Bulk) => (bulk.bytes >= REPEAT_MIN_BYTES ? this.#shown.get(bulk.ref) ?? null : null);
    const retained = fragment(renderRetained(sealed.event, this.#store, limit, { shownAt }));
    const view = renderNewestView(sealed.event, this.#store, {
      retained: limit,
      newest: this.#previews.newest,
      shownAt,
    });
    for (const value of Object.values(sealed.event.fields)) {
      if (isBulk(value) && !this.#shown.has(value.ref)) this.#shown.set(value.ref, sealed.event.step);
    }
    const newest = view ? fragment({ section: "newest", step: sealed.event.step, view }) : null;
    this.#tail.push({ sealed, retained, newest });
    this.#tailRetainedBytes += retained.bytes;
  }

  /** Bytes the request would have with these parts, without retiring anything. */
  #measure(parts: RequestParts): number {
    return this.#assemble(parts, 0, this.#checkpointFragment).bytes;
  }

  /** An entry that would pass the ceiling is replaced whole by an error entry (the request then retires events if
   * even that does not fit). */
  fitLookup(parts: RequestParts, entry: Record<string, unknown>) {
    const { ceiling } = this.#budget;
    if (this.#measure({ ...parts, lookups: [...parts.lookups, entry] }) <= ceiling) {
      return { entry, omitted: false };
    }
    const room = Math.max(0, ceiling - this.#measure(parts));
    const size = utf8Length(JSON.stringify(entry));
    return {
      entry: {
        ...("lookup" in entry ? { lookup: entry.lookup } : {}),
        error: `Response omitted whole: ${size} bytes do not fit the ${ceiling}-byte ceiling ` +
          `(${room} bytes of room left); select a smaller part with #bytes=START-END or #lines=START-END`,
      },
      omitted: true,
    };
  }

  build(parts: RequestParts): BuiltRequest {
    // Retirement looks at the persistent part; lookup responses only use the room left under the ceiling. If even
    // the lookup responses (or the error entries standing for omitted ones) do not fit, retire more.
    const persistent = { ...parts, lookups: [] };
    const budget = this.#budget;
    const { ceiling } = budget;
    let retired = 0;
    // The newest event's larger view is extra: when even the newest event alone does not fit the ceiling with it,
    // the event is kept without it (a request that shows no event at all would leave the model blind).
    const last = this.#tail[this.#tail.length - 1];
    let bytes = this.#measure(persistent);
    if (
      last?.newest && bytes > ceiling && this.#plan(persistent).bytesAfter(this.#tail.length - 1) > ceiling
    ) {
      last.newest = null;
      bytes = this.#measure(persistent);
    }
    if (bytes > budget.trigger || this.#tail.length > TAIL_MAX) {
      const plan = this.#plan(persistent);
      const empty = plan.bytesAfter(this.#tail.length);
      const keptNewest = plan.bytesAfter(this.#tail.length - 1);
      // When even the newest event alone passes the trigger, or the prefix leaves almost no room under it, only the
      // ceiling can force a retirement.
      const reachable = triggerReachable({ floorBytes: empty, keptNewestBytes: keptNewest }, budget);
      if (
        needsRetirement({
          requestBytes: bytes,
          tailLength: this.#tail.length,
          floorBytes: reachable ? empty : Math.max(empty, budget.trigger),
        }, budget)
      ) {
        retired += this.#retire(
          retirementBatch({
            tailLength: this.#tail.length,
            bytesAfter: plan.bytesAfter,
            target: retirementTarget(empty, reachable, budget),
            ceiling,
          }),
        );
      }
    }
    const mandatory = this.#assemble(persistent, this.#tail.length, this.#checkpointFragment).bytes;
    if (mandatory > ceiling) {
      throw new BudgetError(
        "context_ceiling_exceeded",
        `Mandatory context is ${mandatory} bytes, over the ${ceiling}-byte ceiling (instructions, intent, checkpoint, working state and candidates must fit)`,
      );
    }
    if (parts.lookups.length > 0 && this.#measure(parts) > ceiling) {
      const plan = this.#plan(parts);
      retired += this.#retire(
        retirementBatch({ tailLength: this.#tail.length, bytesAfter: plan.bytesAfter, target: ceiling, ceiling }),
      );
    }
    const built = this.#assemble(parts, 0, this.#checkpointFragment);
    if (built.bytes > ceiling) {
      throw new BudgetError(
        "context_ceiling_exceeded",
        `Request is ${built.bytes} bytes with every event retired, over the ${ceiling}-byte ceiling`,
      );
    }
    return { ...built, checkpointed: retired > 0, retired };
  }

  /** Request sizes after retiring the n oldest events, for these parts. */
  #plan(parts: RequestParts): { bytesAfter: (n: number) => number } {
    // Candidate checkpoints are advanced one event at a time, so trying every batch size stays linear.
    const candidates: Checkpoint[] = [this.#checkpoint];
    const fragments: Fragment[] = [];
    const checkpointAfter = (n: number): Fragment => {
      for (let k = candidates.length; k <= n; k++) {
        const previous = candidates[k - 1], retiring = this.#tail[k - 1];
        if (previous === undefined || retiring === undefined) throw new Error(`no checkpoint after ${n} of the tail`);
        candidates[k] = advanceCheckpoint(previous, [retiring.sealed.event]);
      }
      const checkpoint = candidates[n];
      if (checkpoint === undefined) throw new Error(`no checkpoint after ${n} of the tail`);
      return (fragments[n] ??= fragment({ section: "checkpoint", checkpoint }));
    };
    const sizes: number[] = [];
    return {
      bytesAfter: (
        n,
      ) => (sizes[n] ??= n <= 0 // "all but the newest" of an empty tail (n = -1) retires nothing, like 0
        ? this.#assemble(parts, 0, this.#checkpointFragment).bytes
        : this.#assemble(parts, n, checkpointAfter(n)).bytes),
    };
  }

  /** Retires the n oldest events into the checkpoint; returns n. */
  #retire(n: number): number {
    if (n === 0) return 0;
    const gone = this.#tail.splice(0, n);
    for (const entry of gone) this.#tailRetainedBytes -= entry.retained.bytes;
    this.#checkpoint = advanceCheckpoint(this.#checkpoint, gone.map((t) => t.sealed.event));
    this.#checkpointFragment = fragment({ section: "checkpoint", checkpoint: this.#checkpoint });
    this.#retired += n;
    return n;
  }

  /** The request as it would be with the oldest `skip` tail events retired and the given checkpoint. */
  #assemble(parts: RequestParts, skip: number, checkpoint: Fragment | null) {
    const prefix = checkpoint ? [...this.#base, checkpoint] : this.#base;
    const kept = skip === 0 ? this.#tail : this.#tail.slice(skip);
    let eventBytes = this.#tailRetainedBytes;
    for (const retired of this.#tail.slice(0, skip)) eventBytes -= retired.retained.bytes;
    const events: unknown[] = kept.map((entry) => entry.retained.value);
    // Only the newest appended event has a view; once it is retired (it could not fit), so is its view.
    const newestSection = kept.at(-1)?.newest ?? null;
    const first = kept[0]?.sealed.event.step;
    const view: TailView = {
      retains: (step) => first !== undefined && step >= first,
      retired: this.#retired + Math.min(skip, this.#tail.length),
    };
    return assemble(parts, {
      prefix,
      events,
      eventBytes,
      newestSection,
      stateSection: fragment({ section: "working_state", state: parts.state(view) }),
    });
  }
}

/** Each policy's request building, by name (its other traits: lib/policy.ts's CONTEXT_POLICIES). */
const CONTEXTS: Record<ContextPolicyName, (options: ContextOptions) => ContextPolicy> = {
  legacy: (options) => new LegacyContext(options),
  bounded: (options) => new BoundedContext(options),
};

export function createContext(policy: ContextPolicyName, options: ContextOptions): ContextPolicy {
  return CONTEXTS[policy](options);
}
