// Compact events: one per executed step, holding the decision (action, arguments, reason) and its typed report.
// Bulk never lives in an event: long strings become result-store references with their size.
import { clipEnd } from "../text/clip.ts";
import { type ActionName, stepTarget } from "../vocabulary/actions.ts";
import { canonicalJson, type Digest, digestOf, isDigest, utf8Length } from "../text/digest.ts";
import type { ExecutionReport, ReportOf } from "../vocabulary/reports.ts";
import type { ResultStore } from "./store.ts";

/** Strings longer than this (arguments, reasons) are kept in the result store, not in the event. */
const INLINE_STRING_LIMIT = 512;
/** An array (an argv) whose JSON passes this many bytes is kept in the store whole, like a long string. */
const INLINE_ARRAY_LIMIT = 4096;
/**
 * The most bytes one archived event can take: every string past 512 B and every array past 4 KiB is a reference,
 * and the report and argument schemas name a dozen fields at most, so an event stays far below this. The loop asks
 * for a step only while the archive has this much room, so a step's event is never dropped.
 */
export const MAX_EVENT_BYTES = 64 * 1024;

export type Bulk = { ref: Digest; bytes: number };

const EVENT_KINDS = {
  read: "file-read",
  list: "files-listed",
  search: "search-finished",
  edit: "file-edited",
  test: "test-finished",
  command: "command-finished",
  print: "text-printed",
  refusal: "step-refused",
  finish: "slice-finished",
} as const satisfies Record<ExecutionReport["kind"], string>;
export type EventKind = (typeof EVENT_KINDS)[keyof typeof EVENT_KINDS];

/** A value in an event: plain JSON, with long strings replaced by bulk references. */
export type EventValue = string | number | boolean | null | Bulk | EventValue[] | { [key: string]: EventValue };

type ReportKind = ExecutionReport["kind"];

/** A value as an event keeps it: any string may have become a bulk reference with its size. */
type Compacted<T> = T extends string ? T | Bulk
  : T extends readonly (infer U)[] ? Compacted<U>[]
  : T extends object ? { [K in keyof T]: Compacted<T[K]> }
  : T;

/**
 * The execution report as its event keeps it, typed by its kind: every field but `kind` (the event's kind says it),
 * compacted; a field is left out when the arguments already say it (a read's path, a print's text).
 */
export type CompactReport<K extends ReportKind = ReportKind> = {
  [F in Exclude<keyof ReportOf<K>, "kind">]?: Compacted<ReportOf<K>[F]>;
};

type EventOf<K extends ReportKind> = {
  seq: number;
  step: number;
  kind: (typeof EVENT_KINDS)[K];
  /** null when the step was refused before an action was chosen. */
  action: ActionName | null;
  args?: Record<string, EventValue>;
  /** The model's stated reason for the decision (from the selection answer). */
  note?: string | Bulk;
  /** The report, compacted: discriminated by the event's kind. */
  fields: CompactReport<K>;
};

/** An archived event: one per executed step, a union discriminated by `kind` like the reports it keeps. */
export type ArchivedEvent = { [K in ReportKind]: EventOf<K> }[ReportKind];

export type SealedEvent = {
  event: ArchivedEvent;
  digest: Digest;
  /** Bytes of the event's canonical JSON (what the archive capacity counts). */
  bytes: number;
  canonical: string;
};

const BULK_FIELDS = new Set(["result", "output", "text"]);

export function isBulk(value: unknown): value is Bulk {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as Bulk).ref === "string" &&
    typeof (value as Bulk).bytes === "number" && Object.keys(value).length === 2
  );
}

function compactValue(value: unknown, store: ResultStore): EventValue {
  if (typeof value === "string") {
    return utf8Length(value) > INLINE_STRING_LIMIT ? toBulk(store.put(value)) : value;
  }
  if (Array.isArray(value)) {
    // argv-like arrays stay whole unless one element is long, or the whole array is
    if (utf8Length(canonicalJson(value)) > INLINE_ARRAY_LIMIT) return toBulk(store.put(canonicalJson(value)));
    return value.map((v) => compactValue(v, store));
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, EventValue> = {};
    for (const [k, v] of Object.entries(value)) out[k] = compactValue(v, store);
    return out;
  }
  return value as EventValue;
}

function toBulk({ digest, bytes }: { digest: Digest; bytes: number }): Bulk {
  return { ref: digest, bytes };
}

/** Builds the compact event for one executed step. Long argument strings and reasons go into the store. */
export function createEvent(
  { seq, step, action, args, reason, report }: {
    seq: number;
    step: number;
    action: ActionName | null;
    args: Record<string, unknown>;
    reason?: string;
    report: ExecutionReport;
  },
  store: ResultStore,
): SealedEvent {
  const fields: Record<string, EventValue> = {};
  for (const [key, value] of Object.entries(report)) {
    if (key === "kind") continue;
    if (key in args && canonicalJson(args[key]) === canonicalJson(value)) continue;
    if (key === "paths" && Array.isArray(value) && value.length === 1 && value[0] === args.path) continue;
    if (key === "step" && value === step) continue;
    // A bulk field whose content the arguments already hold (print's text) is not repeated.
    if (
      BULK_FIELDS.has(key) && typeof value === "string" && typeof args[key] === "string" &&
      store.get(value) === args[key]
    ) continue;
    if (BULK_FIELDS.has(key) && typeof value === "string" && isDigest(value)) {
      fields[key] = { ref: value, bytes: store.size(value) ?? 0 };
    } else {
      fields[key] = compactValue(value, store);
    }
  }
  // The fields are this report's, compacted: the event's kind and its fields agree by construction.
  const event = { seq, step, kind: EVENT_KINDS[report.kind], action, fields } as ArchivedEvent;
  if (Object.keys(args).length > 0) event.args = compactValue(args, store) as Record<string, EventValue>;
  if (reason) event.note = compactValue(reason, store) as string | Bulk;
  return sealEvent(event);
}

function sealEvent(event: ArchivedEvent): SealedEvent {
  const canonical = canonicalJson(event);
  return { event, digest: digestOf(canonical), bytes: utf8Length(canonical), canonical };
}

/** One line for history listings: what happened, without bulk. */
export function summarizeEvent(event: ArchivedEvent): string {
  const target = stepTarget(event.args ?? {});
  const parts: string[] = [event.action ?? "(no action)"];
  if (target) parts.push(clip(target, 80));
  if (event.kind === "test-finished" || event.kind === "command-finished") {
    const f = event.fields;
    parts.push(`exit ${f.exit_code === null ? "none" : f.exit_code}${f.timed_out ? " (timed out)" : ""}`);
  }
  const change = revisionChange(event);
  if (change) parts.push(`${change.before}→${change.after}`);
  switch (event.kind) {
    case "step-refused":
      parts.push(`refused: ${event.fields.code}`);
      break;
    case "slice-finished":
      // Left out when the finish arguments already say it.
      if (event.fields.status !== undefined) parts.push(String(event.fields.status));
      break;
  }
  const fields: Record<string, unknown> = event.fields;
  for (const key of BULK_FIELDS) {
    const value = fields[key];
    if (isBulk(value)) parts.push(`${value.bytes} B`);
  }
  return parts.join(" · ");
}

/**
 * The revision an event's step made, when it changed the workspace: an edit, or a command or test run that changed
 * files. `before` is the revision it started from (a test run's own revision).
 */
export function revisionChange(event: ArchivedEvent): { before: unknown; after: string } | null {
  switch (event.kind) {
    case "file-edited":
    case "command-finished": {
      const { revision_before: before, revision_after: after } = event.fields;
      return typeof after === "string" ? { before, after } : null;
    }
    case "test-finished": {
      const { revision: before, revision_after: after } = event.fields;
      return typeof after === "string" ? { before, after } : null;
    }
    default:
      return null;
  }
}

function clip(text: string, max: number): string {
  return clipEnd(text.replace(/\s+/g, " "), max);
}
