// Summaries and side-by-side comparisons of context reports, as data (for --json and HTML) and as plain text.
import { escapeControl } from "../text/safe-text.ts";
import type { ContextPolicyName } from "../policy.ts";
import { type AggregateReport, type ContextReport, requestBytes, type StepRecord } from "./context-report.ts";
import type { WorkspaceChanges } from "../vocabulary/reports.ts";
import { gapText, stepRows } from "./step-rows.ts";
import type { NamedReport } from "./load.ts";
import { type PairedBy, pairRuns } from "./pairs.ts";
import { Phase, type Usage } from "../vocabulary/turn.ts";
import { formatBytes, formatCount, formatMs, formatRatio } from "../text/numbers.ts";
import { CacheCause, type RunCache } from "../cache-explanation.ts";

const MODEL_PHASES = Phase.options;
const PHASES = [...MODEL_PHASES, "execution"] as const;
const USAGE_COUNTERS = ["input", "cache_read", "cache_write", "output"] as const;

const SUMMARY_FORMAT = "loom-report-summary";
const SUMMARY_VERSION = 1;

/** One report reduced to what a reader compares; run-only fields are null for an aggregate. */
export type ReportSummary = {
  file: string;
  kind: "run" | "aggregate";
  loom_version: string;
  policy: ContextPolicyName;
  slice: string | null;
  runs: number;
  outcome: ContextReport["outcome"] | null;
  outcomes: Record<string, number>;
  error: ContextReport["error"];
  phases: ContextReport["phases"];
  request_bytes: { total: number; max: number };
  model_calls: number;
  steps: number | null;
  checkpoints: number;
  prefix_changes: number;
  retired_events: number | null;
  retrievals: ContextReport["retrievals"] | null;
  refusals: number | null;
  archive: ContextReport["archive"] | null;
  total_elapsed_ms: number;
  /** final_usage of a normal end, partial_usage of an error, or the sum over an aggregate's runs. */
  usage: Usage;
  usage_scope: "final" | "partial" | "sum";
  calls_recorded: number | null;
  /** USD at the report's dated price table; null when it has none (or for an aggregate). */
  cost: number | null;
  /** A run's step protocol and (bounded) previews; null for an aggregate or a report that does not name them. */
  step_protocol: string | null;
  previews: string | null;
  /** A run's sandbox: the mode in force and whether processes really ran in an OS sandbox; null when none ran. */
  sandbox: { mode: string; active: boolean } | null;
  /** A run's final revision's tests ran and passed; null for an aggregate or a report of an older version. */
  verified: boolean | null;
  run_rows: AggregateReport["runs"] | null;
  /** What the agent did (a run's report from 0.6.0 on): its steps and the files it changed; null when not known. */
  step_log: StepRecord[] | null;
  changes: WorkspaceChanges | null;
  /** The model's finish and what the run printed: Loom's own output, shown escaped (null / [] when none). */
  finish: { status: string; summary: string } | null;
  printed: string[];
  /** A replay's report: its times are not a live run's and its cost is the recorded run's. */
  replayed: boolean;
  /** The prompt cache (#30): the run's cache block, and per call what was read, written and sent uncached. */
  cache: ReportCache | null;
  /** A bounded run's budget sized to a local server's smaller context; null otherwise. */
  context_budget: NonNullable<ContextReport["context_budget"]> | null;
  /** A local server's timings summed over the run (its cost: tokens and seconds); null when none were sent. */
  server_timings: NonNullable<ContextReport["server_timings"]> | null;
};

/** The run's prompt-cache block and its calls' counters (tokens), for the text and the HTML chart. */
export type ReportCache = RunCache & {
  per_call: { read: number; write: number; uncached: number; cause: CacheCause | null }[];
};

function reportCache(report: ContextReport): ReportCache | null {
  if (!report.cache) return null;
  return {
    ...structuredClone(report.cache),
    per_call: report.calls.map((c) => ({
      read: c.usage.cache_read ?? 0,
      write: c.usage.cache_write ?? 0,
      uncached: c.usage.input ?? 0,
      cause: c.cache?.miss?.cause ?? null,
    })),
  };
}

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

export type SummaryDocument = {
  format: typeof SUMMARY_FORMAT;
  version: typeof SUMMARY_VERSION;
  reports: ReportSummary[];
  comparisons: Comparison[];
};

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

function summarizeReport(named: NamedReport): ReportSummary {
  const { phases } = named.report;
  const request_bytes = requestBytes(phases);
  const r = named.report;
  const head = { file: named.file, kind: named.kind, loom_version: r.loom_version, policy: r.policy };
  const measured = {
    phases: structuredClone(phases),
    request_bytes,
    model_calls: r.model_calls,
    checkpoints: r.checkpoints,
    prefix_changes: r.prefix_changes,
    total_elapsed_ms: r.total_elapsed_ms,
  };
  if (named.kind === "aggregate") {
    const a = named.report;
    return {
      ...head,
      slice: null,
      runs: a.runs.length,
      outcome: null,
      outcomes: { ...a.outcomes },
      error: null,
      ...measured,
      steps: null,
      retired_events: null,
      retrievals: null,
      refusals: null,
      archive: null,
      usage: { ...a.usage },
      usage_scope: "sum",
      calls_recorded: null,
      cost: null,
      step_protocol: null,
      previews: null,
      sandbox: null,
      verified: null,
      run_rows: structuredClone(a.runs),
      step_log: null,
      changes: null,
      finish: null,
      printed: [],
      replayed: false,
      cache: null,
      context_budget: null,
      server_timings: null,
    };
  }
  const c = named.report;
  return {
    ...head,
    slice: c.slice,
    runs: 1,
    outcome: c.outcome,
    outcomes: { [c.outcome]: 1 },
    error: c.error ? { ...c.error } : null,
    ...measured,
    steps: c.steps,
    retired_events: c.retired_events,
    retrievals: { ...c.retrievals },
    refusals: c.refusals,
    archive: { ...c.archive },
    usage: { ...(c.final_usage ?? c.partial_usage ?? c.usage) },
    usage_scope: c.final_usage ? "final" : c.partial_usage ? "partial" : "sum",
    calls_recorded: c.calls.length,
    cost: c.cost?.total ?? null,
    step_protocol: c.step_protocol ?? null,
    previews: c.previews ?? null,
    sandbox: c.sandbox ? { mode: c.sandbox.mode, active: c.sandbox.active } : null,
    verified: c.verified ?? null,
    run_rows: null,
    step_log: c.step_log ? structuredClone(c.step_log) : null,
    changes: c.changes ? structuredClone(c.changes) : null,
    finish: c.finish ? { ...c.finish } : null,
    printed: [...(c.printed ?? [])],
    replayed: c.recording !== undefined,
    cache: reportCache(c),
    context_budget: c.context_budget ? { ...c.context_budget } : null,
    server_timings: c.server_timings ? { ...c.server_timings } : null,
  };
}

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

/** The headline as one line of text: what the request bytes and the cost of [i] were against [1], each more or less. */
function headlineText(first: ReportSummary, s: ReportSummary, { index }: { index: number }): string {
  const h = headlineOf(first, s, { index });
  const side = (r: number) => (r > 1 ? "more" : r < 1 ? "less" : "same");
  const shown = (r: number | null) => (r === null ? "n/a" : `${formatRatio(r)} (${side(r)})`);
  const money = (n: number | null) => (n === null ? "n/a" : `$${n.toFixed(4)}`);
  const cost = h.cost === null
    ? h.cost_text
    : `cost ${formatRatio(h.cost)} (${side(h.cost)}: ${money(s.cost)} vs ${money(first.cost)})`;
  return `[${index + 1}]: bytes ${shown(h.bytes)}, largest ${shown(h.largest)}, ${cost}`;
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

/** Why a report shows no cost. */
function missingCost(s: ReportSummary): string {
  return s.kind === "aggregate"
    ? "n/a — an aggregate carries no cost (see each run's report)"
    : s.server_timings
    ? "n/a — a local model: its cost is tokens and seconds (server time)"
    : "n/a — no price for this run's model";
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

export function summarizeReports(reports: NamedReport[]): SummaryDocument {
  const summaries = reports.map(summarizeReport);
  const [first, ...rest] = summaries;
  const comparisons = first === undefined ? [] : rest.map((s): Comparison => {
    const ratios: Record<string, unknown> = {};
    for (const m of METRICS) setPath(ratios, m.key, metricRatio(m, s, first));
    return { file: s.file, baseline: first.file, ratios, runs: compareRuns(first, s) };
  });
  return { format: SUMMARY_FORMAT, version: SUMMARY_VERSION, reports: summaries, comparisons };
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

// ---- formatting (shared by the text and HTML renderers) ----

/** A run's verification in words: whether its final revision's tests ran and passed. */
function formatVerified(s: ReportSummary): string {
  return s.verified === null ? NONE : s.verified ? "verified" : "NOT verified";
}

const NOT_REPORTED = "not reported";
const NONE = "—";

export function formatOutcome(s: ReportSummary): string {
  if (s.outcome !== null) return s.outcome;
  const parts = Object.entries(s.outcomes).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${n} ${k}`);
  return `${s.runs} runs: ${parts.join(", ") || "none"}`;
}

function describeUsageScope(s: ReportSummary): string {
  if (s.usage_scope === "final") return "final (the run ended normally)";
  if (s.usage_scope === "partial") return "partial (observed before the run ended with an error)";
  return s.kind === "aggregate" ? "sum over all runs" : "sum over all calls";
}

/** One row of the side-by-side table: a cell per report, and a ratio against the first for later reports. */
export type TableRow = { label: string; cells: string[]; ratios: (number | null)[]; heading?: boolean };

export function comparisonRows(doc: SummaryDocument): TableRow[] {
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

/** The width text output keeps to: a wider table wraps by design (report columns in groups, long values on more
 * lines, long run names clipped in the middle). */
const WIDTH = 100;
/** The widest a text cell of a comparison grows before it continues on the next line. */
const TEXT_CELL = 24;

/** Key-value lines whose values wrap under themselves past WIDTH. */
function keyValues(rows: [string, string][]): string {
  const keyWidth = Math.max(...rows.map(([k]) => k.length));
  const room = Math.max(20, WIDTH - keyWidth - 2);
  return rows.flatMap(([key, value]) =>
    wrapText(value, room).map((line, i) => `${(i === 0 ? key : "").padEnd(keyWidth)}  ${line}`.trimEnd())
  ).join("\n");
}

/** Words on lines of at most `width` characters (a longer word stays whole on its own line). */
function wrapText(text: string, width: number): string[] {
  if (text.length <= width) return [text];
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line];
}

/** A table whose cells may hold several lines: each row as tall as its tallest cell, the others blank below. */
function tallTable(rows: string[][][], options: { right?: number[] } = {}): string {
  return table(
    rows.flatMap((row) => {
      const height = Math.max(...row.map((cell) => cell.length));
      return Array.from({ length: height }, (_, line) => row.map((cell) => cell[line] ?? ""));
    }),
    options,
  );
}

/** A name cut into pieces of at most `width` characters, so a long one keeps every character on more lines. */
function chunks(name: string, width: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < name.length; i += width) pieces.push(name.slice(i, i + width));
  return pieces.length > 0 ? pieces : [""];
}

function table(rows: string[][], { right = [] as number[] } = {}): string {
  // a row shorter than the first has empty cells at its end
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  return rows
    .map((r) =>
      r.map((cell, c) => (right.includes(c) ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0))).join("  ")
        .trimEnd()
    )
    .join("\n");
}

/** One labelled fact of a summary's text: a pair, typed as one. */
function fact(label: string, value: string): [string, string] {
  return [label, value];
}

function renderOne(s: ReportSummary): string {
  const usage = (n: number | null) => (n === null ? NOT_REPORTED : formatCount(n));
  const head = s.kind === "aggregate" ? `Aggregate report ${s.file} (${s.runs} runs)` : `Context report ${s.file}`;
  const facts: [string, string][] = [
    ["policy", s.policy],
    ...(s.step_protocol ? [fact("step protocol", s.step_protocol)] : []),
    ...(s.previews ? [fact("previews", s.previews)] : []),
    ...(s.context_budget
      ? [fact(
        "context budget",
        `sized to the server's ${
          formatCount(s.context_budget.context_tokens)
        }-token context (${s.context_budget.source}): ` +
          `ceiling ${formatBytes(s.context_budget.ceiling_bytes)}, trigger ${
            formatBytes(s.context_budget.trigger_bytes)
          }, target ${formatBytes(s.context_budget.target_bytes)}`,
      )]
      : []),
    ...(s.sandbox
      ? [fact("sandbox", `${s.sandbox.mode} (${s.sandbox.active ? "processes ran sandboxed" : "not sandboxed"})`)]
      : []),
    ...(s.kind === "run" ? [fact("slice", s.slice ?? NONE)] : []),
    [s.kind === "run" ? "outcome" : "outcomes", formatOutcome(s)],
    ...(s.kind === "run" ? [fact("verified", formatVerified(s))] : []),
    ...(s.kind === "run" ? [fact("error", s.error ? `${s.error.code}: ${s.error.message}` : NONE)] : []),
    ["loom version", s.loom_version],
  ];
  const phaseRows = [
    ["phase", "requests", "bytes total", "bytes max", "elapsed"],
    ...PHASES.map((p) => {
      const ph = s.phases[p];
      const model = p !== "execution";
      return [
        p,
        formatCount(ph.requests),
        model ? formatBytes(ph.request_bytes.total) : NONE,
        model ? formatBytes(ph.request_bytes.max) : NONE,
        formatMs(ph.elapsed_ms),
      ];
    }),
    [
      "model phases",
      formatCount(s.model_calls),
      formatBytes(s.request_bytes.total),
      formatBytes(s.request_bytes.max),
      formatMs(sum(MODEL_PHASES.map((p) => s.phases[p].elapsed_ms))),
    ],
  ];
  const counts: [string, string][] = [
    [
      "model calls",
      formatCount(s.model_calls) +
      (s.calls_recorded === null ? "" : ` (per-call series: ${formatCount(s.calls_recorded)})`),
    ],
    ...(s.steps === null ? [] : [fact("steps", formatCount(s.steps))]),
    ["checkpoints", formatCount(s.checkpoints)],
    ["prefix changes", formatCount(s.prefix_changes)],
    ...(s.retired_events === null ? [] : [fact("retired events", formatCount(s.retired_events))]),
    ...(s.retrievals === null
      ? []
      : [fact("retrievals", Object.entries(s.retrievals).map(([k, n]) => `${k} ${formatCount(n)}`).join(" · "))]),
    ...(s.refusals === null ? [] : [fact("refusals", formatCount(s.refusals))]),
    ...(s.archive === null
      ? []
      : [fact("archive", `${formatCount(s.archive.events)} events · ${formatBytes(s.archive.bytes)}`)]),
    ["total elapsed", formatMs(s.total_elapsed_ms)],
    ["usage", describeUsageScope(s)],
    ...USAGE_COUNTERS.map((c): [string, string] => [`  ${c.replace("_", " ")}`, usage(s.usage[c])]),
    s.replayed
      ? fact("recorded cost", s.cost === null ? missingCost(s) : `$${s.cost.toFixed(4)} (the recorded run's calls)`)
      : fact("cost", s.cost === null ? missingCost(s) : `$${s.cost.toFixed(4)}`),
    ...(s.server_timings
      ? [fact(
        "server time",
        `${formatCount(s.server_timings.prompt_n)} prompt tokens evaluated in ${
          formatMs(s.server_timings.prompt_ms)
        } (${formatCount(s.server_timings.cache_n)} reused); ${
          formatCount(s.server_timings.predicted_n)
        } generated in ${formatMs(s.server_timings.predicted_ms)}`,
      )]
      : []),
  ];
  const parts = [
    head,
    "",
    keyValues(facts),
    "",
    table(phaseRows, { right: [1, 2, 3, 4] }),
    "",
    keyValues(counts),
  ];
  if (s.step_log !== null && s.step_log.length > 0) parts.push("", renderSteps(s.step_log));
  if (s.changes !== null) parts.push("", renderChanges(s.changes));
  const said = renderSaid(s);
  if (said !== "") parts.push("", said);
  if (s.cache !== null) parts.push("", renderCache(s.cache));
  if (s.run_rows !== null) {
    const rows = [
      ["run", "outcome", "calls", "request bytes", "largest request", "checkpoints"],
      ...s.run_rows.map((r) => [
        r.name,
        r.outcome,
        formatCount(r.model_calls),
        formatBytes(r.request_bytes),
        formatBytes(r.max_request_bytes),
        formatCount(r.checkpoints),
      ]),
    ];
    // The other columns are short; a long run name continues on the next line so the table fits the width.
    const others = (rows[0] ?? []).slice(1).map((_, c) => Math.max(...rows.map((r) => (r[c + 1] ?? "").length)) + 2);
    const room = Math.max(12, WIDTH - others.reduce((a, b) => a + b, 0));
    parts.push(
      "",
      tallTable(rows.map(([name = "", ...rest]) => [chunks(name, room), ...rest.map((cell) => [cell])]), {
        right: [2, 3, 4, 5],
      }),
    );
  }
  return parts.join("\n") + "\n";
}

const lineCount = (n: number | null | undefined, sign: string) =>
  n === undefined ? "" : n === null ? `${sign}?` : `${sign}${formatCount(n)}`;

/** What the agent did, one line per step: action, target, status (a refusal with its code), exit, revision, lines;
 * long runs of similar steps collapsed (step-rows.ts). */
function renderSteps(steps: StepRecord[]): string {
  const shown = stepRows(steps);
  const rows = [
    ["step", "action", "target", "status", "exit", "rev", "+", "-"],
    ...shown.map((row) =>
      row.kind === "gap" ? ["", "", "", "", "", "", "", ""] : [
        String(row.step.step),
        row.step.action ?? NONE,
        clipCell(row.step.target ?? "", 36),
        stepStatus(row.step),
        row.step.exit_code === null ? "" : String(row.step.exit_code),
        row.step.revision,
        lineCount(row.step.lines_added, "+"),
        lineCount(row.step.lines_removed, "-"),
      ]
    ),
  ];
  // A gap's line is its own, not a cell: it would widen the action column to its length.
  const lines = table(rows, { right: [0, 4, 6, 7] }).split("\n");
  shown.forEach((row, i) => {
    if (row.kind === "gap") lines[i + 1] = `      ${gapText(row, formatCount)}`;
  });
  return lines.join("\n");
}

/** A step's status as the tables show it: a refusal names its code ("refused (tests_not_current)"). */
export function stepStatus(step: StepRecord): string {
  return step.refusal ? `${step.status} (${step.refusal})` : step.status;
}

/** The model's finish summary and what the run printed, escaped (Loom's own output, not the user's content), each
 * line wrapped to the width. */
function renderSaid(s: ReportSummary): string {
  const lines: string[] = [];
  const said = (label: string, text: string) => {
    const wrapped = text.split("\n").flatMap((line) => wrapText(escapeControl(line), WIDTH - 2))
      .flatMap((line) => chunks(line, WIDTH - 2));
    lines.push(label, ...wrapped.map((line) => `  ${line}`));
  };
  if (s.finish) said(`finish: ${s.finish.status}`, s.finish.summary);
  for (const text of s.printed) said("printed:", text);
  return lines.join("\n");
}

/** The files changed against the starting revision, with lines added and removed. */
function renderChanges(changes: WorkspaceChanges): string {
  return changedFilesText(changes).join("\n");
}

/**
 * The changed files as lines of text: a heading with the count and the lines, then one row per file (at most `max`,
 * then "… N more files").
 */
export function changedFilesText(changes: WorkspaceChanges, { max = Infinity }: { max?: number } = {}): string[] {
  if (changes.files.length === 0) return ["changed files: none"];
  const total = `${lineCount(changes.lines_added, "+")} ${lineCount(changes.lines_removed, "-")}`;
  const shown = changes.files.slice(0, max);
  const rows = shown.map((f) => [
    `  ${f.change}`,
    escapeControl(f.path),
    lineCount(f.lines_added, "+"),
    lineCount(f.lines_removed, "-"),
  ]);
  const more = changes.files.length - shown.length;
  return [
    `changed files: ${formatCount(changes.files.length)} (${total} lines)`,
    ...table(rows, { right: [2, 3] }).split("\n"),
    ...(more > 0 ? [`  … ${formatCount(more)} more ${more === 1 ? "file" : "files"}`] : []),
  ];
}

/** A cell cut to `width` characters with an ellipsis. */
function clipCell(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

const percent = (share: number | null) => (share === null ? NOT_REPORTED : `${(share * 100).toFixed(1)} %`);

/** The prompt cache (#30): the read share beside Loom's expectation, then the breaks by cause. */
function renderCache(cache: ReportCache): string {
  const lines = [
    `prompt cache: ${percent(cache.read_share)} of input tokens read from the cache (Loom expected ${
      percent(cache.expected_read_share)
    }) over ${formatCount(cache.calls)} calls`,
  ];
  const causes = CacheCause.options.filter((c) => cache.breaks[c]);
  if (causes.length === 0) return [...lines, "  no cache breaks"].join("\n");
  lines.push(
    table([
      ["break cause", "calls", "tokens", "cost"],
      ...causes.map((c) => {
        // "!": causes keeps only the causes with a breaks entry (filtered above).
        const b = cache.breaks[c]!;
        return [
          c.replaceAll("_", " "),
          formatCount(b.count),
          formatCount(b.tokens),
          b.cost === null ? NOT_REPORTED : `$${b.cost.toFixed(4)}`,
        ];
      }),
    ], { right: [1, 2, 3] }),
  );
  return lines.join("\n");
}

function renderComparison(first: ReportSummary, doc: SummaryDocument): string {
  const others = doc.reports.slice(1);
  const names = doc.reports.map((s, i) => `[${i + 1}] ${s.file}`);
  const lines = [
    `Comparing ${doc.reports.length} reports; ratios are against [1] ${first.file}`,
    // The bytes never lead alone: the same pair may cost more while it sends less.
    ...others.map((s, k) => headlineText(first, s, { index: k + 1 })),
    "",
  ];
  const rows = comparisonRows(doc);
  // A long text cell (an aggregate's outcomes) goes on more lines, so two reports still fit side by side.
  const cellLines = rows.map((r) => r.cells.map((c) => (r.heading ? [""] : wrapText(c, TEXT_CELL))));
  // (cellLines has a row per row and a cell per report: the `?? []` and `?? 0` below never apply)
  const valueWidth = names.map((name, i) =>
    Math.max(name.length, ...cellLines.flatMap((cells) => (cells[i] ?? []).map((l) => l.length)))
  );
  const columns = names.map((name, i) => [
    [name],
    ...rows.map((r, k) => {
      const ratioText = i === 0 || r.heading ? "" : formatRatio(r.ratios[i] ?? null);
      return (cellLines[k]?.[i] ?? []).map((line, l) =>
        line.padStart(valueWidth[i] ?? 0) + (ratioText && l === 0 ? `  ${ratioText}` : "")
      );
    }),
  ]);
  // Reports side by side while they fit the width; the rest follow in further blocks, each with the labels again.
  const labelWidth = Math.max(...rows.map((r) => r.label.length));
  const groups: number[][] = [];
  let used = Infinity;
  for (const [i, column] of columns.entries()) {
    const width = 2 + Math.max(...column.flat().map((c) => c.length));
    if (used + width > WIDTH) {
      groups.push([]);
      used = labelWidth;
    }
    groups.at(-1)!.push(i);
    used += width;
  }
  for (const [g, group] of groups.entries()) {
    if (g > 0) lines.push("", `(continued: ${group.map((i) => `[${i + 1}]`).join(" ")})`);
    lines.push(tallTable([
      // group holds indexes of columns, each with a cell per row after its heading; a missing cell is blank
      [[""], ...group.map((i) => columns[i]?.[0] ?? [""])],
      ...rows.map((r, k) => [[r.label], ...group.map((i) => columns[i]?.[k + 1] ?? [""])]),
    ]));
  }
  const pairings = doc.comparisons.flatMap((c, k) => c.runs ? [describeRunPairing(c.runs, { index: k + 1 })] : []);
  if (pairings.length > 0) lines.push("", ...pairings);
  return lines.join("\n") + "\n";
}

/** Plain text (no colour): one report in detail, or several side by side. */
export function renderSummaryText(doc: SummaryDocument): string {
  const [first, ...others] = doc.reports;
  if (first === undefined) throw new Error("renderSummaryText: a summary of no reports");
  return others.length === 0 ? renderOne(first) : renderComparison(first, doc);
}
