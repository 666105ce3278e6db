// A checkpoint records, deterministically and without any model call, what has been retired from the tail.
import { type ArchivedEvent, revisionChange } from "./events.ts";

export type Checkpoint = {
  /** Sequence numbers retired so far, first and last (inclusive). */
  retired_seq: [number, number];
  retired: number;
  by_kind: Record<string, number>;
  /** Workspace revision and test state as of the last retired event. */
  revision: string;
  last_test: { revision: string; exit_code: number | null; timed_out: boolean } | null;
  /** How to reach retired events. */
  lookup: string;
};

const LOOKUP_HINT = '{"$list_history":0} lists retired events; {"$read_history":"sha256:…"} reads one';

export function emptyCheckpoint(revision = "r0"): Checkpoint {
  return { retired_seq: [0, 0], retired: 0, by_kind: {}, revision, last_test: null, lookup: LOOKUP_HINT };
}

/** The checkpoint after retiring `events` (oldest first) on top of `previous`. */
export function advanceCheckpoint(previous: Checkpoint, events: readonly ArchivedEvent[]): Checkpoint {
  const [oldest] = events, newest = events.at(-1);
  if (oldest === undefined || newest === undefined) return previous;
  const byKind = { ...previous.by_kind };
  let { revision, last_test } = previous;
  for (const event of events) {
    byKind[event.kind] = (byKind[event.kind] ?? 0) + 1;
    // Edits, and commands or test runs that changed files, carry the revision they made.
    revision = revisionChange(event)?.after ?? revision;
    if (event.kind === "test-finished") {
      const f = event.fields;
      last_test = {
        revision: String(f.revision),
        exit_code: typeof f.exit_code === "number" ? f.exit_code : null,
        timed_out: f.timed_out === true,
      };
    }
  }
  const first = previous.retired === 0 ? oldest.seq : previous.retired_seq[0];
  return {
    retired_seq: [first, newest.seq],
    retired: previous.retired + events.length,
    by_kind: Object.fromEntries(Object.entries(byKind).sort(([a], [b]) => a.localeCompare(b))),
    revision,
    last_test,
    lookup: LOOKUP_HINT,
  };
}
