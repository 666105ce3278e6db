// How an archived event appears in a request. Legacy inlines all bulk (the classic transcript); bounded shows
// a head-and-tail preview with the reference, 512 B in the event, plus up to 8 KiB in the newest event's own view.
import { type ArchivedEvent, type Bulk, type EventValue, isBulk } from "./events.ts";
import type { ResultStore } from "./store.ts";
import { utf8Length } from "./digest.ts";

export const NEWEST_PREVIEW_BYTES = 8 * 1024;
export const RETAINED_PREVIEW_BYTES = 512;

export type Preview =
  | { ref: string; bytes: number; text: string }
  | { ref: string; bytes: number; head: string; tail: string; omitted: number; rest?: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Head and tail of `text`, `limit` bytes in all, cut on UTF-8 character boundaries. */
export function headAndTail(text: string, limit: number): { head: string; tail: string; omitted: number } | null {
  const total = utf8Length(text);
  if (total <= limit) return null;
  const half = Math.floor(limit / 2);
  if (total === text.length) {
    return { head: text.slice(0, half), tail: text.slice(text.length - (limit - half)), omitted: total - limit };
  }
  const bytes = encoder.encode(text);
  // Cut outward on a character boundary, so at least `limit` bytes are always shown.
  let headEnd = half;
  while (headEnd < bytes.length && (bytes[headEnd] & 0xc0) === 0x80) headEnd++;
  let tailStart = bytes.length - (limit - half);
  while (tailStart > headEnd && (bytes[tailStart] & 0xc0) === 0x80) tailStart--;
  if (tailStart <= headEnd) return null;
  return {
    head: decoder.decode(bytes.subarray(0, headEnd)),
    tail: decoder.decode(bytes.subarray(tailStart)),
    omitted: tailStart - headEnd,
  };
}

/** `rest` (the newest event only) is the ready-made reference to the part left out. */
export function preview(
  bulk: Bulk,
  store: ResultStore,
  limit: number,
  { rest = false }: { rest?: boolean } = {},
): Preview {
  const content = store.get(bulk.ref) ?? "";
  const cut = headAndTail(content, limit);
  if (!cut) return { ref: bulk.ref, bytes: bulk.bytes, text: content };
  if (!rest) return { ref: bulk.ref, bytes: bulk.bytes, ...cut };
  const start = utf8Length(cut.head);
  return { ref: bulk.ref, bytes: bulk.bytes, ...cut, rest: `${bulk.ref}#bytes=${start}-${start + cut.omitted}` };
}

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
 * A retained event in a bounded request: every bulk value as a 512-byte head-and-tail preview. The rendering is fixed
 * when the event enters the tail and never changes until it is retired (append-only between checkpoints).
 */
export function renderRetained(event: ArchivedEvent, store: ResultStore): Record<string, unknown> {
  return render(event, (bulk) => preview(bulk, store, RETAINED_PREVIEW_BYTES));
}

/**
 * The newest event's larger view: each bulk value the retained rendering cuts, up to 8 KiB with the reference to
 * exactly the part left out (its arguments and reason too: they hold the model's latest plan). Null when the
 * retained rendering already shows everything.
 */
export function renderNewestView(event: ArchivedEvent, store: ResultStore): Record<string, unknown> | null {
  const view: Record<string, unknown> = {};
  const visit = (key: string, value: EventValue | undefined) => {
    if (value === undefined) return;
    const larger = mapBulk(value, (bulk) => preview(bulk, store, NEWEST_PREVIEW_BYTES, { rest: true }));
    const retained = mapBulk(value, (bulk) => preview(bulk, store, RETAINED_PREVIEW_BYTES));
    if (JSON.stringify(larger) !== JSON.stringify(retained)) view[key] = larger;
  };
  if (event.args) visit("args", event.args);
  visit("note", event.note);
  for (const [k, v] of Object.entries(event.fields)) visit(k, v);
  return Object.keys(view).length > 0 ? view : null;
}
