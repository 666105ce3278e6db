// Runs of two batch aggregates paired by recording identity, never by position: shards merged in another order, or
// batches over different folders, still compare each trajectory with itself; runs found in one aggregate only are
// listed, not compared.
import type { AggregateReport } from "./context-report.ts";

export type RunRow = AggregateReport["runs"][number];

/** How runs were matched: by the recording's sha256 (every run names one), else by the recording's file name. */
export type PairedBy = "recording" | "name";

export type RunPairing = {
  paired_by: PairedBy;
  /** Index pairs [baseline run, report run], in the baseline's order. */
  pairs: [number, number][];
  /** Run names found in the baseline only, and in the compared report only. */
  only_in_baseline: string[];
  only_in_report: string[];
};

/** The identity runs are paired by; the k-th run of an identity pairs with the k-th (copies of one recording). */
function pairedBy(aggregates: readonly (readonly RunRow[])[]): PairedBy {
  return aggregates.every((runs) => runs.every((r) => r.recording !== undefined)) ? "recording" : "name";
}

/** Identities with an occurrence count, so the k-th copy of an identity pairs with the k-th. */
function keys(runs: readonly RunRow[], id: (r: RunRow) => string, skip: ReadonlySet<number>): Map<string, number> {
  const seen = new Map<string, number>();
  const out = new Map<string, number>();
  runs.forEach((r, i) => {
    if (skip.has(i)) return;
    const k = seen.get(id(r)) ?? 0;
    seen.set(id(r), k + 1);
    out.set(`${id(r)}#${k}`, i);
  });
  return out;
}

/**
 * Pairs the runs of `report` with those of `baseline`: first the same recording under the same name, then the same
 * recording under another name (a renamed file, or copies of one recording).
 */
export function pairRuns(
  baseline: readonly RunRow[],
  report: readonly RunRow[],
  { by = pairedBy([baseline, report]) }: { by?: PairedBy } = {},
): RunPairing {
  const passes: ((r: RunRow) => string)[] = by === "recording"
    // "!": the "recording" pass is chosen only when every row has a recording (pairedBy)
    ? [(r) => `${r.recording} ${r.name}`, (r) => r.recording!]
    : [(r) => r.name];
  const left = new Set<number>(), right = new Set<number>();
  const found: [number, number][] = [];
  for (const id of passes) {
    const theirs = keys(report, id, right);
    for (const [k, i] of keys(baseline, id, left)) {
      const j = theirs.get(k);
      if (j === undefined) continue;
      found.push([i, j]);
      left.add(i);
      right.add(j);
    }
  }
  return {
    paired_by: by,
    pairs: found.sort((a, b) => a[0] - b[0]),
    only_in_baseline: baseline.filter((_, i) => !left.has(i)).map((r) => r.name),
    only_in_report: report.filter((_, j) => !right.has(j)).map((r) => r.name),
  };
}

/**
 * Several aggregates on one axis of runs: the baseline's runs in its order, then the runs the others add, each
 * column holding every aggregate's run of that recording (null where an aggregate lacks it).
 */
export function alignRuns(aggregates: readonly (readonly RunRow[])[]): {
  paired_by: PairedBy;
  names: string[];
  columns: (number | null)[][];
} {
  const by = pairedBy(aggregates);
  const axis: RunRow[] = [];
  const columns: (number | null)[][] = [];
  aggregates.forEach((runs, k) => {
    const { pairs } = pairRuns(axis, runs, { by });
    const placed = new Set<number>();
    for (const [slot, j] of pairs) {
      // "!": columns has one row per axis entry, and slot indexes axis
      columns[slot]![k] = j;
      placed.add(j);
    }
    runs.forEach((row, j) => {
      if (placed.has(j)) return;
      axis.push(row);
      columns.push(aggregates.map((_, m) => (m === k ? j : null)));
    });
  });
  return { paired_by: by, names: axis.map((r) => r.name), columns };
}
