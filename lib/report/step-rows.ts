// The rows of a step table a person can scan: a long run of similar steps (the same action, the same status) shows its
// first and last few with one "… K more steps" row between, and a table still too long keeps its head and tail. A
// 4,096-step run gives a page, not 4,096 rows. Text (loom report) and HTML (--html) draw the same rows.
import type { StepRecord } from "./context-report.ts";

/** A step shown, or the steps left out between two shown ones. */
export type StepRow =
  | { kind: "step"; step: StepRecord }
  | { kind: "gap"; count: number; first: number; last: number };

export type CollapseLimits = {
  /** A run of similar steps longer than this is collapsed. */
  run: number;
  /** Steps kept at each end of a collapsed run. */
  keep: number;
  /** Rows of a table after collapsing runs; past it, the head and tail (half each) are kept. */
  rows: number;
};

export const STEP_ROWS: CollapseLimits = { run: 8, keep: 3, rows: 120 };

/** What makes two steps similar: the same action ended the same way (a refusal by its code). */
function likeness(step: StepRecord): string {
  return `${step.action ?? ""}\u0000${step.status}\u0000${step.refusal ?? ""}`;
}

/** The rows of `steps`: every step, or long runs of similar steps collapsed (see the module's comment). */
export function stepRows(steps: readonly StepRecord[], limits: CollapseLimits = STEP_ROWS): StepRow[] {
  const rows: StepRow[] = [];
  for (let i = 0; i < steps.length;) {
    let end = i + 1;
    while (end < steps.length && likeness(steps[end]!) === likeness(steps[i]!)) end += 1;
    const run = steps.slice(i, end);
    if (run.length > limits.run) {
      rows.push(...run.slice(0, limits.keep).map(shown));
      rows.push(gap(run.slice(limits.keep, run.length - limits.keep)));
      rows.push(...run.slice(run.length - limits.keep).map(shown));
    } else rows.push(...run.map(shown));
    i = end;
  }
  if (rows.length <= limits.rows) return rows;
  const half = Math.floor(limits.rows / 2);
  const middle = rows.slice(half, rows.length - half);
  const left = middle.reduce((sum, row) => sum + (row.kind === "step" ? 1 : row.count), 0);
  const first = firstStep(middle[0]!), last = lastStep(middle.at(-1)!);
  return [...rows.slice(0, half), { kind: "gap", count: left, first, last }, ...rows.slice(rows.length - half)];
}

/** "… 3,509 more steps (12–3,520)" */
export function gapText(row: Extract<StepRow, { kind: "gap" }>, format: (n: number) => string): string {
  return `… ${format(row.count)} more ${row.count === 1 ? "step" : "steps"} (${format(row.first)}–${format(row.last)})`;
}

function shown(step: StepRecord): StepRow {
  return { kind: "step", step };
}

function gap(steps: readonly StepRecord[]): StepRow {
  return { kind: "gap", count: steps.length, first: steps[0]!.step, last: steps.at(-1)!.step };
}

function firstStep(row: StepRow): number {
  return row.kind === "step" ? row.step.step : row.first;
}

function lastStep(row: StepRow): number {
  return row.kind === "step" ? row.step.step : row.last;
}
