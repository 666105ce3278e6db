// Where the bytes of a request go (per section, and inside retained events: shown output, preview framing, event
// metadata), and whether every retained event shows what the SPEC promises: the newest execution's output up to
// 8 KiB (in its own section after the events), every output, argument or reason in the events at least a 512-byte
// head and tail.
import { utf8Length } from "../lib/text/digest.ts";
import { NEWEST_PREVIEW_BYTES, RETAINED_PREVIEW_BYTES } from "../lib/context/render-event.ts";
import {
  type CompleteOptions,
  type ModelAnswer,
  type Provider,
  SECTION_NAMES,
  type TurnRequest,
} from "../lib/vocabulary/turn.ts";

export const PARTS = ["response_schema", ...SECTION_NAMES, "envelope"] as const;
export type Part = (typeof PARTS)[number];

export type Anatomy = {
  requests: number;
  bytes: number;
  /** The largest request, measured here: UTF-8 length of JSON.stringify(request). */
  maxBytes: number;
  parts: Record<Part, number>;
  /**
   * Inside `events` and the newest view: text shown by cut previews and their continuations (JSON-encoded), the
   * wrappers around it (ref, bytes, keys; of which those of continuations that show the rest whole), and the rest:
   * step, action, status fields, and arguments, reasons and outputs small enough to be shown whole inline.
   */
  events: { shown: number; framing: number; metadata: number; previews: number; cut: number; framingWhole: number };
  floor: { checked: number; violations: number; worst: { needed: number; shown: number } | null };
};

export function emptyAnatomy(): Anatomy {
  return {
    requests: 0,
    bytes: 0,
    maxBytes: 0,
    parts: Object.fromEntries(PARTS.map((p) => [p, 0])) as Record<Part, number>,
    events: { shown: 0, framing: 0, metadata: 0, previews: 0, cut: 0, framingWhole: 0 },
    floor: { checked: 0, violations: 0, worst: null },
  };
}

export function addAnatomy(into: Anatomy, from: Anatomy): void {
  into.requests += from.requests;
  into.bytes += from.bytes;
  into.maxBytes = Math.max(into.maxBytes, from.maxBytes);
  for (const p of PARTS) into.parts[p] += from.parts[p];
  for (const k of Object.keys(into.events) as (keyof Anatomy["events"])[]) into.events[k] += from.events[k];
  into.floor.checked += from.floor.checked;
  into.floor.violations += from.floor.violations;
  into.floor.worst = worse(into.floor.worst, from.floor.worst);
}

type Preview = { ref: string; bytes: number; head?: string; tail?: string; omitted?: number };

function isPreview(value: unknown): value is Preview {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const v = value as Preview;
  return typeof v.ref === "string" && v.ref.startsWith("sha256:") && typeof v.bytes === "number" &&
    typeof v.head === "string" && typeof v.tail === "string";
}

const json = (value: unknown) => utf8Length(JSON.stringify(value));

/** Measures one request into `into`; preview objects inside events are counted and checked against the floor. */
export function measureRequest(request: TurnRequest, into: Anatomy): void {
  const total = json(request);
  into.requests += 1;
  into.bytes += total;
  into.maxBytes = Math.max(into.maxBytes, total);
  let accounted = 0;
  const schema = json(request.response_schema);
  into.parts.response_schema += schema;
  accounted += schema;
  for (const section of request.sections) {
    const bytes = json(section);
    into.parts[section.section as Part] += bytes;
    accounted += bytes;
    if (section.section === "events") measureEvents(section.events, bytes, into);
    if (section.section === "newest") measureNewest(section.view, lastEvent(request), bytes, into);
  }
  into.parts.envelope += total - accounted;
}

function lastEvent(request: TurnRequest): unknown {
  const events = request.sections.find((s) => s.section === "events");
  return events?.section === "events" ? events.events.at(-1) : undefined;
}

/** Counts one preview or continuation: what it shows, what its wrapper costs, and whether it honours `floor`. */
function count(into: Anatomy, size: number, shown: number, visible: number, needed: number, cut: boolean): void {
  into.events.previews += 1;
  into.events.shown += shown;
  into.events.framing += size - shown;
  if (cut) into.events.cut += 1;
  else into.events.framingWhole += size - shown;
  into.floor.checked += 1;
  if (visible < needed) {
    into.floor.violations += 1;
    into.floor.worst = worse(into.floor.worst, { needed, shown: visible });
  }
}

/** Every output, argument and reason a retained event cuts must show 512 B (head and tail); whole values are text. */
function measureEvents(events: unknown[], sectionBytes: number, into: Anatomy): void {
  let previewBytes = 0;
  for (const event of events) {
    walk(event, (preview) => {
      const size = json(preview);
      previewBytes += size;
      const visible = utf8Length(preview.head!) + utf8Length(preview.tail!);
      count(
        into,
        size,
        json(preview.head) + json(preview.tail),
        visible,
        Math.min(preview.bytes, RETAINED_PREVIEW_BYTES),
        true,
      );
    });
  }
  into.events.metadata += sectionBytes - previewBytes;
}

/**
 * The newest event's view continues the event's previews: each continuation with the preview of the same reference
 * must show 8 KiB of the output (or all of it), and its arguments and reason likewise.
 */
function measureNewest(view: Record<string, unknown>, event: unknown, sectionBytes: number, into: Anatomy): void {
  const previews = new Map<string, Preview>();
  walk(event, (p) => void previews.set(p.ref, p));
  let continuationBytes = 0;
  walkContinuations(view, (c) => {
    const p = previews.get(c.ref);
    const size = json(c);
    continuationBytes += size;
    const own = c.text !== undefined ? utf8Length(c.text) : utf8Length(c.head!) + utf8Length(c.tail!);
    const shown = c.text !== undefined ? json(c.text) : json(c.head) + json(c.tail);
    const visible = own + (p ? utf8Length(p.head!) + utf8Length(p.tail!) : 0);
    const total = p?.bytes ?? 0;
    count(into, size, shown, visible, Math.min(total, NEWEST_PREVIEW_BYTES), c.text === undefined);
  });
  into.events.metadata += sectionBytes - continuationBytes;
}

type Continuation = { ref: string; from: number; to: number; text?: string; head?: string; tail?: string };

function walkContinuations(value: unknown, visit: (c: Continuation) => void): void {
  if (value === null || typeof value !== "object") return;
  const c = value as Continuation;
  if (!Array.isArray(value) && typeof c.ref === "string" && typeof c.from === "number") return visit(c);
  for (const v of Object.values(value)) walkContinuations(v, visit);
}

function walk(value: unknown, visit: (preview: Preview) => void): void {
  if (isPreview(value)) return visit(value);
  if (Array.isArray(value)) { for (const v of value) walk(v, visit); }
  else if (value !== null && typeof value === "object") { for (const v of Object.values(value)) walk(v, visit); }
}

function worse(a: Anatomy["floor"]["worst"], b: Anatomy["floor"]["worst"]): Anatomy["floor"]["worst"] {
  if (!a) return b;
  if (!b) return a;
  return b.needed - b.shown > a.needed - a.shown ? b : a;
}

/** Wraps a provider and measures every request it is asked, before answering. */
export class MeasuringProvider implements Provider {
  readonly name: string;
  readonly capabilities: Provider["capabilities"];
  readonly anatomy = emptyAnatomy();
  readonly #inner: Provider;

  constructor(inner: Provider) {
    this.#inner = inner;
    this.name = inner.name;
    this.capabilities = inner.capabilities;
  }

  complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
    const one = emptyAnatomy();
    measureRequest(request, one);
    addAnatomy(this.anatomy, one);
    return this.#inner.complete(request, options);
  }
}
