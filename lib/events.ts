// Compact events: one per executed step, holding the decision (action, arguments, reason) and its typed report.
// Bulk never lives in an event: long strings become result-store references with their size.
import type { ActionName } from "./actions.ts";
import { canonicalJson, type Digest, digestOf, utf8Length } from "./digest.ts";
import type { ExecutionReport } from "./reports.ts";
import type { ResultStore } from "./store.ts";

/** Strings longer than this (arguments, reasons) are kept in the result store, not in the event. */
export const INLINE_STRING_LIMIT = 512;

export type Bulk = { ref: Digest; bytes: number };

export const EVENT_KINDS = {
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

export type ArchivedEvent = {
  seq: number;
  step: number;
  kind: EventKind;
  /** null when the step was refused before an action was chosen. */
  action: ActionName | null;
  args?: Record<string, EventValue>;
  /** The model's stated reason for the decision (from the selection answer). */
  note?: string | Bulk;
  /** The report's fields, minus `kind` and anything the arguments already say. Bulk fields are references. */
  fields: Record<string, EventValue>;
};

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
    // argv-like arrays stay whole unless one element is long
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
    if (BULK_FIELDS.has(key) && typeof value === "string" && value.startsWith("sha256:")) {
      fields[key] = { ref: value as Digest, bytes: store.size(value) ?? 0 };
    } else {
      fields[key] = compactValue(value, store);
    }
  }
  const event: ArchivedEvent = { seq, step, kind: EVENT_KINDS[report.kind], action, fields };
  if (Object.keys(args).length > 0) event.args = compactValue(args, store) as Record<string, EventValue>;
  if (reason) event.note = compactValue(reason, store) as string | Bulk;
  return sealEvent(event);
}

export function sealEvent(event: ArchivedEvent): SealedEvent {
  const canonical = canonicalJson(event);
  return { event, digest: digestOf(canonical), bytes: utf8Length(canonical), canonical };
}

/** One line for history listings: what happened, without bulk. */
export function summarizeEvent(event: ArchivedEvent): string {
  const f = event.fields;
  const target = (() => {
    const a = event.args ?? {};
    if (typeof a.path === "string") return a.path;
    if (Array.isArray(a.argv)) return a.argv.map((x) => (typeof x === "string" ? x : "…")).join(" ");
    if (typeof a.query === "string") return JSON.stringify(a.query);
    return "";
  })();
  const parts: string[] = [event.action ?? "(no action)"];
  if (target) parts.push(clip(target, 80));
  if ("exit_code" in f) {
    parts.push(`exit ${f.exit_code === null ? "none" : f.exit_code}${f.timed_out ? " (timed out)" : ""}`);
  }
  if ("revision_after" in f) parts.push(`${f.revision_before ?? f.revision}→${f.revision_after}`);
  if ("code" in f) parts.push(`refused: ${f.code}`);
  if ("status" in f) parts.push(String(f.status));
  for (const key of BULK_FIELDS) if (isBulk(f[key])) parts.push(`${(f[key] as Bulk).bytes} B`);
  return parts.join(" · ");
}

function clip(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}
