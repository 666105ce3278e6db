// How an archived event appears in a request. Legacy inlines all bulk (the classic transcript); bounded shows
// a head-and-tail preview with the reference, 512 B to 2 KiB in the event, and the newest event's own view continues
// it (the part the preview left out) up to 8 KiB in all.
import { type ArchivedEvent, type Bulk, type EventValue, isBulk } from "./events.ts";
import type { ResultStore } from "./store.ts";
import { utf8Length } from "../text/digest.ts";
import { headAndTail } from "../text/clip.ts";
import type { PreviewMode } from "../policy.ts";

export const NEWEST_PREVIEW_BYTES = 8 * 1024;
export const RETAINED_PREVIEW_BYTES = 512;

/** A retained preview grows up to this much while the tail has room (see `entryPreviewBytes`). */
const RETAINED_PREVIEW_MAX_BYTES = 2 * 1024;
/** …taking this share (1/8) of the room left below the retirement trigger. */
const ROOM_SHARE = 8;

/**
 * How much a retained event's preview shows (`retained`, up to `upTo` while the tail has room) and how much the newest
 * event's output shows with its view (`newest`). The SPEC's numbers are the floors.
 */
export type PreviewSizes = { retained: number; upTo: number; newest: number };
export const PREVIEW_SIZES: PreviewSizes = {
  retained: RETAINED_PREVIEW_BYTES,
  upTo: RETAINED_PREVIEW_MAX_BYTES,
  newest: NEWEST_PREVIEW_BYTES,
};

/**
 * The preview choices users have (`--previews`, a catalog slice or default, the request): compact shows the SPEC's
 * floor and pays least; balanced (the default) grows a preview while the tail has room; wide shows more of each output
 * and retires sooner.
 */
export const PREVIEW_MODES: Record<PreviewMode, PreviewSizes> = {
  compact: { retained: RETAINED_PREVIEW_BYTES, upTo: RETAINED_PREVIEW_BYTES, newest: NEWEST_PREVIEW_BYTES },
  balanced: PREVIEW_SIZES,
  wide: { retained: 1024, upTo: 4 * 1024, newest: NEWEST_PREVIEW_BYTES },
};

/** Sizes below the floors (512 B retained, 8 KiB newest), or out of order, are refused. */
export function checkPreviewSizes(sizes: PreviewSizes): PreviewSizes {
  const { retained, upTo, newest } = sizes;
  if (!(retained >= RETAINED_PREVIEW_BYTES && newest >= NEWEST_PREVIEW_BYTES && upTo >= retained && newest >= upTo)) {
    throw new RangeError(
      `Preview sizes ${retained}-${upTo} B retained / ${newest} B newest are below the floors or out of order ` +
        `(at least ${RETAINED_PREVIEW_BYTES} B / ${NEWEST_PREVIEW_BYTES} B, retained <= up to <= newest)`,
    );
  }
  return sizes;
}

/**
 * The preview an event entering the tail gets: an eighth of the room left below the retirement trigger (`room`),
 * between the floor and `upTo`. A tail with room shows more of each output; as it fills, previews shrink to the
 * floor. The window fills sooner than with the floor alone, so retirements come more often (1.9 against 0.8 per 100
 * calls over the shipped workloads, against a limit of 4).
 */
export function entryPreviewBytes(sizes: PreviewSizes, room: number): number {
  return Math.max(sizes.retained, Math.min(sizes.upTo, Math.floor(room / ROOM_SHARE)));
}

/** A bulk value a retained event cannot show whole. */
export type Preview = { ref: string; bytes: number; head: string; tail: string; omitted: number };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A retained event's view of a bulk value: the text itself when it fits `limit`, or when showing it whole takes no
 * more bytes than its preview (as legacy shows it: nothing is left out, so no reference is needed); else head and
 * tail with the count left out and the reference.
 */
function preview(bulk: Bulk, store: ResultStore, limit: number): string | Preview {
  const content = store.get(bulk.ref) ?? "";
  const cut = headAndTail(content, limit);
  if (!cut) return content;
  const shown: Preview = { ref: store.abbreviate(bulk.ref), bytes: bulk.bytes, ...cut };
  // A value only a little over the limit is shown whole when that is no larger than its preview would be. JSON
  // escaping makes a character at most 6 bytes, so a value past 6x the limit (plus the wrapper) never is: it is not
  // serialized just to find that out (outputs can be megabytes).
  if (bulk.bytes > 6 * limit + PREVIEW_WRAPPER_BYTES) return shown;
  return jsonBytes(content) <= jsonBytes(shown) ? content : shown;
}

const jsonBytes = (value: unknown) => utf8Length(JSON.stringify(value));
/** More than a preview's keys, reference (whole digest) and sizes take in JSON. */
const PREVIEW_WRAPPER_BYTES = 256;

/**
 * What the newest event's view adds to a retained preview: the part the preview left out (bytes `from`-`to` of the
 * value), whole when the preview and it together fit `limit`, else its head and tail with the count left out and
 * `rest`, the reference to exactly the part still missing. Retained head + this + retained tail is the value, or
 * `limit` bytes of it. Null when the retained preview shows the whole value.
 */
function continuation(
  bulk: Bulk,
  store: ResultStore,
  { retained, limit }: { retained: number; limit: number },
): Continuation | null {
  const cut = preview(bulk, store, retained);
  if (typeof cut === "string") return null;
  const content = store.get(bulk.ref) ?? "";
  const from = utf8Length(cut.head);
  const to = from + cut.omitted;
  const middle = bulk.bytes === content.length
    ? content.slice(from, to)
    : decoder.decode(encoder.encode(content).subarray(from, to));
  const inner = headAndTail(middle, Math.max(0, limit - (bulk.bytes - cut.omitted)));
  if (!inner) return { ref: cut.ref, from, to, text: middle };
  const restStart = from + utf8Length(inner.head);
  return { ref: cut.ref, from, to, ...inner, rest: `${cut.ref}#bytes=${restStart}-${restStart + inner.omitted}` };
}

export type Continuation =
  | { ref: string; from: number; to: number; text: string }
  | { ref: string; from: number; to: number; head: string; tail: string; omitted: number; rest: string };

function mapBulk(value: EventValue, fn: (bulk: Bulk) => unknown): unknown {
  if (isBulk(value)) return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapBulk(v, fn));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapBulk(v, fn);
    return out;
  }
  return value;
}

function render(
  event: ArchivedEvent,
  fn: (bulk: Bulk) => unknown,
  decisionFn: (bulk: Bulk) => unknown = fn,
): Record<string, unknown> {
  const out: Record<string, unknown> = { step: event.step, action: event.action };
  if (event.args) out.args = mapBulk(event.args, decisionFn);
  if (event.note !== undefined) out.note = mapBulk(event.note, decisionFn);
  for (const [k, v] of Object.entries(event.fields)) out[k] = mapBulk(v, fn);
  if (event.kind === "step-refused") out.refused = true;
  return out;
}

/** The legacy transcript entry: every bulk value inline, once. */
export function renderLegacy(event: ArchivedEvent, store: ResultStore): Record<string, unknown> {
  return render(event, (bulk) => store.get(bulk.ref) ?? "");
}

/**
 * A retained event in a bounded request: every bulk value whole when it fits `limit` (512 B to 2 KiB, chosen when the
 * event enters the tail), else as a head-and-tail preview of `limit` bytes with the reference. The rendering is fixed when the event enters the tail and never changes
 * until it is retired (append-only between checkpoints).
 */
export function renderRetained(
  event: ArchivedEvent,
  store: ResultStore,
  limit: number = RETAINED_PREVIEW_BYTES,
  { shownAt = () => null }: { shownAt?: (bulk: Bulk) => number | null } = {},
): Record<string, unknown> {
  return render(event, (bulk) => {
    const step = shownAt(bulk);
    return step === null ? preview(bulk, store, limit) : repeated(bulk, store, step);
  });
}

/** An output at least this large that an earlier event already showed is shown as a reference to that step. */
export const REPEAT_MIN_BYTES = 128;

/** An output identical to one an earlier step showed: a reference to that step, never the bytes again. */
export type Repeated = { ref: string; bytes: number; same_as_step: number };

function repeated(bulk: Bulk, store: ResultStore, step: number): Repeated {
  return { ref: store.abbreviate(bulk.ref), bytes: bulk.bytes, same_as_step: step };
}

/**
 * The newest event's view: for each bulk value its retained preview cuts (outputs, and its arguments and
 * reason: they hold the model's latest plan), the continuation — the part the preview left out, so the preview and
 * the view together show the value up to 8 KiB and no byte is sent twice. Null when the retained rendering already
 * shows everything.
 */
export function renderNewestView(
  event: ArchivedEvent,
  store: ResultStore,
  { retained = RETAINED_PREVIEW_BYTES, newest = NEWEST_PREVIEW_BYTES, shownAt = () => null }: {
    retained?: number;
    newest?: number;
    /** The step that already showed this output (its retained rendering is then a reference), or null. */
    shownAt?: (bulk: Bulk) => number | null;
  } = {},
): Record<string, unknown> | null {
  const view: Record<string, unknown> = {};
  const visit = (key: string, value: EventValue | undefined, outputs: boolean) => {
    if (value === undefined) return;
    let cut = false;
    const more = mapBulk(value, (bulk) => {
      if (outputs && shownAt(bulk) !== null) return null;
      const c = continuation(bulk, store, { retained, limit: newest });
      if (c) cut = true;
      return c;
    });
    if (cut) view[key] = more;
  };
  if (event.args) visit("args", event.args, false);
  visit("note", event.note, false);
  for (const [k, v] of Object.entries(event.fields)) visit(k, v, true);
  return Object.keys(view).length > 0 ? view : null;
}
