// Reports side by side: each against the first (every metric's ratio, the headline), two aggregates' runs paired by
// recording, and the rows of the side-by-side table the text and the HTML share.
import {
  formatOutcome,
  formatVerified,
  missingCost,
  MODEL_PHASES,
  NONE,
  PHASES,
  type ReportSummary,
  USAGE_COUNTERS,
} from "./report-summary.ts";
import { type PairedBy, pairRuns } from "./pairs.ts";
import { formatBytes, formatCount, formatMs, formatRatio } from "../text/numbers.ts";

/**
 * Two aggregates' runs paired by recording: how many pairs, the runs found on one side only, and request bytes summed
 * over the pairs alone (the like-for-like figure when the batches did not replay the same recordings).
 */
export type RunsComparison = {
  paired_by: PairedBy;
  paired: number;
  only_in_baseline: string[];
  only_in_report: string[];
  paired_request_bytes: { baseline: number; report: number; ratio: number | null };
};

/** Ratios of one report against the first (value / baseline); null when either is null or the baseline is 0. */
export type Comparison = {
  file: string;
  baseline: string;
  ratios: Record<string, unknown>;
  /** Two aggregates: their runs paired by recording; null when either is a single run's report. */
  runs: RunsComparison | null;
};

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

export function ratio(value: number | null, baseline: number | null): number | null {
  if (value === null || baseline === null || baseline === 0) return null;
  return Math.round((value / baseline) * 10_000) / 10_000;
}

/** One report against the first, as a comparison leads with it: bytes and cost side by side, each said higher or not. */
export type Headline = {
  bytes: number | null;
  largest: number | null;
  cost: number | null;
  /** The cost ratio in words: "1.12× ($0.0138 vs $0.0123): [2] cost more", or why there is none. */
  cost_text: string;
};

export function headlineOf(first: ReportSummary, s: ReportSummary, { index }: { index: number }): Headline {
  const cost = ratio(s.cost, first.cost);
  const who = `[${index + 1}]`;
  const money = (n: number | null) => (n === null ? "n/a" : `$${n.toFixed(4)}`);
  const verdict = cost === null
    ? s.cost === null || first.cost === null ? "cost n/a (unpriced)" : "cost n/a"
    : `${formatRatio(cost)} (${money(s.cost)} vs ${money(first.cost)}): ${
      cost > 1 ? `${who} cost more` : cost < 1 ? `${who} cost less` : "the same"
    }`;
  return {
    bytes: ratio(s.request_bytes.total, first.request_bytes.total),
    largest: ratio(s.request_bytes.max, first.request_bytes.max),
    cost,
    cost_text: verdict,
  };
}

type Metric = {
  key: string[];
  label: string;
  value: (s: ReportSummary) => number | null;
  format: (n: number) => string;
  /** What a missing value says, when more than "none". */
  missing?: (s: ReportSummary) => string;
  /** A time: a replay's is not comparable with a live run's (no model, no real processes), so no ratio is given. */
  timing?: true;
};

/** The ratio of a metric, or null where it would compare a replay's time with a live run's. */
function metricRatio(m: Metric, s: ReportSummary, base: ReportSummary): number | null {
  if (m.timing && s.replayed !== base.replayed) return null;
  return ratio(m.value(s), m.value(base));
}

/** The compared measurements, in display order; `key` is the path in a Comparison's `ratios`. */
const METRICS: readonly Metric[] = [
  { key: ["model_calls"], label: "model calls", value: (s) => s.model_calls, format: formatCount },
  ...MODEL_PHASES.map((p): Metric => ({
    key: ["request_bytes", p],
    label: `request bytes · ${p}`,
    value: (s) => s.phases[p].request_bytes.total,
    format: formatBytes,
  })),
  {
    key: ["request_bytes", "total"],
    label: "request bytes · total",
    value: (s) => s.request_bytes.total,
    format: formatBytes,
  },
  { key: ["max_request_bytes"], label: "largest request", value: (s) => s.request_bytes.max, format: formatBytes },
  ...PHASES.map((p): Metric => ({
    key: ["elapsed_ms", p],
    label: `elapsed · ${p}`,
    value: (s) => s.phases[p].elapsed_ms,
    format: formatMs,
    timing: true,
  })),
  {
    key: ["elapsed_ms", "total"],
    label: "elapsed · total",
    value: (s) => s.total_elapsed_ms,
    format: formatMs,
    timing: true,
  },
  {
    key: ["cost"],
    label: "cost",
    value: (s) => s.cost,
    format: (n) => `$${n.toFixed(4)}`,
    missing: missingCost,
  },
  { key: ["checkpoints"], label: "checkpoints", value: (s) => s.checkpoints, format: formatCount },
  { key: ["prefix_changes"], label: "prefix changes", value: (s) => s.prefix_changes, format: formatCount },
  ...USAGE_COUNTERS.map((c): Metric => ({
    key: ["usage", c],
    label: `usage · ${c.replace("_", " ")}`,
    value: (s) => s.usage[c],
    format: formatCount,
  })),
];

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  const last = path.at(-1);
  if (last === undefined) throw new Error("setPath: an empty path names no field");
  for (const part of path.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[last] = value;
}

/** One report against the first: every metric's ratio, and two aggregates' runs paired. */
export function comparisonOf(first: ReportSummary, s: ReportSummary): Comparison {
  const ratios: Record<string, unknown> = {};
  for (const m of METRICS) setPath(ratios, m.key, metricRatio(m, s, first));
  return { file: s.file, baseline: first.file, ratios, runs: compareRuns(first, s) };
}

function compareRuns(baseline: ReportSummary, report: ReportSummary): RunsComparison | null {
  const before = baseline.run_rows;
  const after = report.run_rows;
  if (before === null || after === null) return null;
  const pairing = pairRuns(before, after);
  // "!": pairRuns pairs an index of its first list with an index of its second
  const left = sum(pairing.pairs.map(([i]) => before[i]!.request_bytes));
  const right = sum(pairing.pairs.map(([, j]) => after[j]!.request_bytes));
  return {
    paired_by: pairing.paired_by,
    paired: pairing.pairs.length,
    only_in_baseline: pairing.only_in_baseline,
    only_in_report: pairing.only_in_report,
    paired_request_bytes: { baseline: left, report: right, ratio: ratio(right, left) },
  };
}

/** One line per compared aggregate: how its runs paired with the baseline's, and which had no partner. */
export function describeRunPairing(runs: RunsComparison, { index }: { index: number }): string {
  const who = `[${index + 1}]`;
  const by = runs.paired_by === "recording" ? "recording (sha256)" : "recording file name";
  const unmatched = [
    runs.only_in_baseline.length > 0 ? `only in [1]: ${listNames(runs.only_in_baseline)}` : "",
    runs.only_in_report.length > 0 ? `only in ${who}: ${listNames(runs.only_in_report)}` : "",
  ].filter(Boolean);
  const bytes = unmatched.length > 0 && runs.paired > 0
    ? `; request bytes over the paired runs alone: ${formatRatio(runs.paired_request_bytes.ratio) || "—"}`
    : "";
  return `${who} runs paired with [1] by ${by}: ${runs.paired} paired${
    unmatched.length > 0 ? `, ${unmatched.join("; ")} (the totals above include them)` : ", none unmatched"
  }${bytes}`;
}

function listNames(names: string[], { most = 8 } = {}): string {
  return names.length <= most ? names.join(", ") : `${names.slice(0, most).join(", ")} and ${names.length - most} more`;
}

/** One row of the side-by-side table: a cell per report, and a ratio against the first for later reports. */
export type TableRow = { label: string; cells: string[]; ratios: (number | null)[]; heading?: boolean };

export function comparisonRows(doc: { reports: ReportSummary[] }): TableRow[] {
  const reports = doc.reports;
  const text = (label: string, cell: (s: ReportSummary) => string): TableRow => ({
    label,
    cells: reports.map(cell),
    ratios: reports.map(() => null),
  });
  const rows: TableRow[] = [
    text("kind", (s) => (s.kind === "aggregate" ? `aggregate of ${s.runs}` : "run")),
    text("policy", (s) => s.policy),
    text("outcome", formatOutcome),
    text("verified", formatVerified),
    text("error", (s) => s.error?.code ?? NONE),
  ];
  let group = "";
  for (const m of METRICS) {
    const [head = m.label, tail] = m.label.split(" · ");
    if (tail !== undefined && head !== group) {
      rows.push({
        label: head,
        cells: reports.map(() => ""),
        ratios: [],
        heading: true,
      });
    }
    group = tail === undefined ? "" : head;
    const [baseReport] = reports;
    rows.push({
      label: tail === undefined ? m.label : `  ${tail}`,
      cells: reports.map((report) => {
        const v = m.value(report);
        return v === null ? m.missing?.(report) ?? NONE : m.format(v);
      }),
      ratios: reports.map((report, i) => (i === 0 || !baseReport ? null : metricRatio(m, report, baseReport))),
    });
  }
  const optional = (n: number | null) => (n === null ? NONE : formatCount(n));
  rows.push(
    text("usage scope", (s) => s.usage_scope),
    text("steps", (s) => optional(s.steps)),
    text("retired events", (s) => optional(s.retired_events)),
    text(
      "retrievals: result · list · read",
      (
        s,
      ) => (s.retrievals === null
        ? NONE
        : `${s.retrievals.result} · ${s.retrievals.list_history} · ${s.retrievals.read_history}`),
    ),
    text("refusals", (s) => optional(s.refusals)),
  );
  return rows;
}
