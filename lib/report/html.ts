// One self-contained HTML page for `loom report --html`: the summary table and two SVG charts, no scripts, no network.
import type { NamedReport } from "./load.ts";
import { CONTEXT_POLICIES, type ContextPolicyName } from "../policy.ts";
import { alignRuns, type RunRow } from "./pairs.ts";
import { comparisonRows, describeRunPairing, headlineOf, ratio } from "./comparison.ts";
import { formatOutcome } from "./report-summary.ts";
import { summarizeReports, type SummaryDocument } from "./summary.ts";
import { formatBytes, formatCount, formatMs, formatRatio } from "../text/numbers.ts";

import {
  colorOf,
  distributionChart,
  escapeHtml,
  type Frame,
  lineChart,
  NARROW,
  runBars,
  type RunSeries,
  type Series,
  THRESHOLDS,
  WIDE,
} from "./chart.ts";

import { cacheBars } from "./cache-chart.ts";
import { changedFilesSection, runFacts, saidSection, STEPS_STYLE, stepTimeline } from "./steps-html.ts";
import { type Transcript, TRANSCRIPT_STYLE, transcriptHtml } from "./transcript.ts";

export { SERIES_COLORS } from "./chart.ts";

/** The same chart twice: wide for desktops, narrow for phones (CSS shows one), so text stays readable at 420 px. */
function responsive(draw: (frame: Frame, suffix: string) => string): string {
  return `<div class="wide">${draw(WIDE, "")}</div><div class="narrow">${draw(NARROW, "-narrow")}</div>`;
}

/** The ratios people look for first, large, at the top: each report's request bytes and largest request against [1].
 * One run's page leads with what a person asks first: outcome, verified, cost and changed files. */
function headline(doc: SummaryDocument, reports: NamedReport[]): string {
  const [first, ...rest] = doc.reports;
  if (!first) return "";
  const only = reports[0];
  const facts = rest.length === 0 && only?.kind === "run" ? runFacts(first, only.report) : "";
  const figure = (value: string, caption: string, cls = "") =>
    `<div class="figure${cls}"><span class="big">${value}</span><span class="caption">${caption}</span></div>`;
  if (rest.length === 0) {
    return `<div class="headline">${facts}<div class="pair" data-series="0" style="border-top-color:${colorOf(0)}">${
      figure(formatBytes(first.request_bytes.total), "request bytes")
    }${figure(formatBytes(first.request_bytes.max), "largest request")}${
      figure(formatCount(first.model_calls), "model calls")
    }</div></div>`;
  }
  return `<div class="headline">` + rest.map((s, k) => {
    const i = k + 1;
    const { bytes: total, largest: max, cost, cost_text } = headlineOf(first, s, { index: i });
    const who = `[${i + 1}] ${escapeHtml(s.file)} vs [1] ${escapeHtml(first.file)}`;
    // Green only for what is lower, red for what is higher: the cost stands beside the bytes, never 3,000 px down.
    const mark = (r: number | null) => (r === null ? "" : r < 1 ? " better" : r > 1 ? " worse" : "");
    return `<div class="pair" data-series="${i}" style="border-top-color:${colorOf(i)}">` +
      figure(formatRatio(total) || "—", `request bytes, ${who}`, mark(total)) +
      figure(formatRatio(max) || "—", "largest request", mark(max)) +
      figure(formatRatio(cost) || "—", `cost: ${escapeHtml(cost_text)}`, mark(cost)) +
      `</div>`;
  }).join("") + `</div>`;
}

/** One card per report with the numbers people look for first, and the ratio against report [1]. */
function cards(doc: SummaryDocument): string {
  const [first] = doc.reports;
  if (first === undefined) return `<div class="cards"></div>`;
  return `<div class="cards">` + doc.reports.map((s, i) => {
    const vs = (value: number, base: number, format: (n: number) => string) => {
      const r = i === 0 ? null : ratio(value, base);
      return `${format(value)}${r === null ? "" : `<span class="ratio">${formatRatio(r)}</span>`}`;
    };
    const bad = s.outcome !== null && s.outcome !== "completed";
    return `<div class="card" data-series="${i}" style="border-left-color:${colorOf(i)}">` +
      `<h3>[${i + 1}] ${escapeHtml(s.file)}</h3>` +
      `<p class="meta">${s.policy} · <span${bad ? ` class="failed"` : ""}>${escapeHtml(formatOutcome(s))}</span>${
        s.error ? ` · ${escapeHtml(s.error.code)}` : ""
      }</p><dl>` +
      `<dt>request bytes</dt><dd>${vs(s.request_bytes.total, first.request_bytes.total, formatBytes)}</dd>` +
      `<dt>largest request</dt><dd>${vs(s.request_bytes.max, first.request_bytes.max, formatBytes)}</dd>` +
      `<dt>model calls</dt><dd>${vs(s.model_calls, first.model_calls, formatCount)}</dd>` +
      `<dt>checkpoints</dt><dd>${formatCount(s.checkpoints)}</dd><dt>prefix changes</dt><dd>${
        formatCount(s.prefix_changes)
      }</dd>` +
      // A replay's time is not comparable with a live run's: no ratio between them.
      `<dt>elapsed</dt><dd>${
        s.replayed === first.replayed
          ? vs(s.total_elapsed_ms, first.total_elapsed_ms, formatMs)
          : `${formatMs(s.total_elapsed_ms)}${s.replayed ? " (replay)" : ""}`
      }</dd>` +
      `</dl></div>`;
  }).join("") + `</div>`;
}

const STYLE = `
:root { color-scheme: light; --ink: #212529; --muted: #6c757d; --line: #dee2e6; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #f8f9fa; }
main { max-width: 1140px; margin: 0 auto; padding: 28px 30px 40px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 34px 0 6px; }
p.sub, p.note, footer { color: var(--muted); margin: 4px 0 12px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 4px 20px 18px; margin-top: 20px; }
table.summary { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
table.summary th, table.summary td { padding: 5px 10px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
table.summary th:first-child, table.summary td:first-child { text-align: left; }
table.summary thead th { border-bottom: 2px solid var(--ink); vertical-align: bottom; }
table.summary tr.heading td { font-weight: 600; padding-top: 12px; }
table.summary td.sub { padding-left: 26px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 14px; margin-top: 18px; }
.card { background: #fff; border: 1px solid var(--line); border-left: 6px solid; border-radius: 8px; padding: 10px 16px 12px; }
.card h3 { font-size: 15px; margin: 0; overflow-wrap: anywhere; }
.card .meta { color: var(--muted); margin: 0 0 6px; }
.card dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin: 0; font-variant-numeric: tabular-nums; }
.card dt { color: var(--muted); }
.card dd { margin: 0; text-align: right; font-weight: 600; white-space: nowrap; }
.card .failed { color: #c92a2a; }
.ratio { color: var(--muted); font-size: 13px; margin-left: 6px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
svg.chart { display: block; width: 100%; height: auto; font-size: 13px; }
svg .plot { fill: #fff; stroke: var(--line); }
svg .grid { stroke: #edf0f2; }
svg .tick-mark { stroke: #adb5bd; }
svg .tick, svg .legend text { fill: #343a40; }
svg .axis-title { fill: var(--muted); font-size: 13px; }
svg .threshold line { stroke-width: 1.5; }
svg .threshold-label text { font-size: 12px; font-weight: 600; paint-order: stroke; stroke: #fff; stroke-width: 4px; stroke-linejoin: round; }
svg polyline.series { stroke-width: 2.2; stroke-linejoin: round; }
svg .checkpoint, svg .legend-checkpoint { fill: #fff; stroke-width: 2; }
svg .legend-checkpoint { stroke: #495057; }
svg .box-label { fill: var(--ink); font-size: 13px; }
.headline { display: flex; flex-wrap: wrap; gap: 14px; margin: 14px 0 6px; }
.headline .pair { display: flex; flex-wrap: wrap; gap: 4px 28px; background: #fff; border: 1px solid var(--line); border-top: 5px solid; border-radius: 8px; padding: 10px 18px; }
.headline .figure { display: flex; flex-direction: column; }
.headline .big { font-size: 44px; font-weight: 700; line-height: 1.1; font-variant-numeric: tabular-nums; }
.headline .figure.better .big { color: #2b8a3e; }
.headline .figure.worse .big { color: #c92a2a; }
.headline .caption { color: var(--muted); font-size: 14px; overflow-wrap: anywhere; }
/* A table wider than the screen scrolls, and shows it: shadows at the edges with more columns, a scrollbar that stays
   drawn, the row labels held in place, and a hint on narrow screens. */
.table-scroll { overflow-x: auto; background:
  linear-gradient(to right, #fff 30%, rgba(255,255,255,0)) left / 40px 100% no-repeat local,
  linear-gradient(to left, #fff 30%, rgba(255,255,255,0)) right / 40px 100% no-repeat local,
  radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.25), transparent) left / 14px 100% no-repeat scroll,
  radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.25), transparent) right / 14px 100% no-repeat scroll; }
.table-scroll::-webkit-scrollbar { height: 10px; }
.table-scroll::-webkit-scrollbar-track { background: #f1f3f5; border-radius: 5px; }
.table-scroll::-webkit-scrollbar-thumb { background: #adb5bd; border-radius: 5px; }
table.summary th:first-child, table.summary td:first-child { position: sticky; left: 0; background: #fff; z-index: 1; }
.scroll-hint { display: none; }
.narrow { display: none; }
@media (max-width: 640px) {
  body { font-size: 16px; }
  main { padding: 14px 10px 28px; }
  h1 { font-size: 22px; }
  section { padding: 2px 10px 12px; }
  .wide { display: none; }
  .narrow { display: block; }
  .cards { grid-template-columns: 1fr; }
  .headline .big { font-size: 38px; }
  table.summary th, table.summary td { padding: 4px 6px; font-size: 14px; }
  /* A long cell (an aggregate's "n/a — …" cost) wraps instead of pushing every right-aligned value off-screen. */
  table.summary td { white-space: normal; min-width: 7em; }
  table.summary th:first-child, table.summary td:first-child { max-width: 9.5em; min-width: 0; }
  .scroll-hint { display: block; }
}
`;

/** The page: summary table, request bytes per call (with the 32/48/64 KiB lines and checkpoints), cumulative bytes. */
export function renderReportHtml(
  reports: NamedReport[],
  { title = "Loom context report", transcript }: {
    title?: string;
    /** One run's transcript (its recording or trace beside it): shown after its steps. */
    transcript?: Transcript;
  } = {},
): string {
  const doc = summarizeReports(reports);
  const rows = comparisonRows(doc);
  const several = reports.length > 1;
  const head = `<tr><th></th>${
    doc.reports.map((s, i) =>
      `<th data-series="${i}"><span class="swatch" style="background:${colorOf(i)}"></span>[${i + 1}] ${
        escapeHtml(s.file)
      }</th>`
    ).join("")
  }</tr>`;
  const body = rows.map((r) =>
    r.heading
      ? `<tr class="heading"><td colspan="${doc.reports.length + 1}">${escapeHtml(r.label)}</td></tr>`
      : `<tr><td${r.label.startsWith("  ") ? ` class="sub"` : ""}>${escapeHtml(r.label.trim())}</td>${
        r.cells.map((c, i) => {
          const ratioText = i > 0 ? formatRatio(r.ratios[i] ?? null) : "";
          return `<td>${escapeHtml(c)}${ratioText ? `<span class="ratio">${ratioText}</span>` : ""}</td>`;
        }).join("")
      }</tr>`
  ).join("\n");
  const series: Series[] = reports.flatMap((r, index) =>
    r.kind === "run" && r.report.calls.length > 0
      ? [{
        index,
        label: `[${index + 1}] ${r.file} (${r.report.policy})`,
        values: r.report.calls.map((c) => c.request_bytes),
        checkpoints: r.report.calls.map((c) => c.checkpoint),
      }]
      : []
  );
  const aggregates = reports.flatMap((r, index) =>
    r.kind === "aggregate" && r.report.runs.length > 0 ? [{ index, file: r.file, report: r.report }] : []
  );
  // One group of bars per recording, every aggregate's run of it side by side: paired by recording, not position.
  const aligned = alignRuns(aggregates.map((a) => a.report.runs));
  const runSeries = (pick: (row: RunRow) => number, { paired }: { paired: boolean }): RunSeries[] =>
    aggregates.map(({ index, file, report }, k) => ({
      index,
      label: `[${index + 1}] ${file} (${report.policy})`,
      names: paired ? aligned.names : report.runs.map((row) => row.name),
      values: paired
        ? aligned.columns.map((column) => {
          const j = column[k] ?? null;
          const row = j === null ? undefined : report.runs[j];
          return row === undefined ? null : pick(row);
        })
        : report.runs.map(pick),
    }));
  const perRunTotal = runSeries((row) => row.request_bytes, { paired: true });
  const distributionTotal = runSeries((row) => row.request_bytes, { paired: false });
  const perRunMax = runSeries((row) => row.max_request_bytes, { paired: false });
  const pairingNotes = doc.comparisons.flatMap((c, k) =>
    c.runs
      ? [
        `<p class="note pairing" data-series="${k + 1}">${
          escapeHtml(describeRunPairing(c.runs, { index: k + 1 }))
        }</p>`,
      ]
      : []
  );
  const skipped = reports.flatMap((r, i) =>
    (r.kind === "run" && r.report.calls.length > 0) || (r.kind === "aggregate" && r.report.runs.length > 0)
      ? []
      : [`[${i + 1}] ${r.file}`]
  );
  const skippedNote = skipped.length === 0
    ? ""
    : `<p class="note">Nothing to plot in ${escapeHtml(skipped.join(", "))} (no model calls or no runs).</p>`;
  const cumulative = series.map((s) => {
    let total = 0;
    return { ...s, values: s.values.map((v) => (total += v)) };
  });
  // The 32/48/64 KiB lines are the ceiling's rules: drawn only when a run held to it is on the chart.
  const held = (policy: ContextPolicyName | undefined) => policy !== undefined && CONTEXT_POLICIES[policy].ceiling;
  const thresholds = series.some((s) => held(reports[s.index]?.report.policy)) ? THRESHOLDS : [];
  const peaks = series.map((s) => Math.max(0, ...s.values));
  const [only] = reports;
  const whatItDid = !several && only?.kind === "run" && doc.reports[0]
    ? `${changedFilesSection(doc.reports[0])}\n${saidSection(doc.reports[0])}${
      stepTimeline(doc.reports[0], only.report)
    }${transcript ? `\n${transcriptHtml(transcript)}` : ""}`
    : "";
  const runSections = series.length === 0 ? "" : `<section id="per-call">
<h2>Request bytes per model call</h2>
<p class="note">${
    thresholds.length > 0
      ? "Grey dashed lines: the bounded policy retires old events when a request would pass 48 KiB, aiming for 32 KiB, and never sends more than 64 KiB. "
      : ""
  }${
    series.some((s) => s.checkpoints.some(Boolean))
      ? "Diamonds mark checkpoints, where the cacheable prefix changed."
      : ""
  }</p>
${
    responsive((frame, suffix) =>
      lineChart({ id: `chart-per-call${suffix}`, series, thresholds, markers: true, frame, peaks })
    )
  }
</section>
<section id="cumulative">
<h2>Cumulative request bytes</h2>
<p class="note">Total bytes sent up to and including each model call.</p>
${
    responsive((frame, suffix) =>
      lineChart({
        id: `chart-cumulative${suffix}`,
        series: cumulative,
        thresholds: [],
        markers: false,
        frame,
      })
    )
  }
</section>`;
  // The prompt cache per call (#30), one chart per run report that explains its calls.
  const cached = doc.reports.flatMap((s, index) => (s.cache && s.cache.per_call.length > 0 ? [{ s, index }] : []));
  const cacheSections = cached.length === 0 ? "" : `<section id="cache">
<h2>Prompt cache per model call</h2>
<p class="note">Input tokens the provider reported read from its cache, written to it and sent uncached; a dot marks
a call that read less than the cache held before it (its cause in the tooltip and in the text report).</p>
${
    cached.map(({ s, index }) =>
      responsive((frame, suffix) =>
        cacheBars({ id: `chart-cache-${index}${suffix}`, cache: s.cache!, frame, label: `[${index + 1}] ${s.file}` })
      )
    ).join("\n")
  }
</section>`;
  const aggregateSections = perRunTotal.length === 0 ? "" : `<section id="per-run">
<h2>Request bytes per run</h2>
<p class="note">${
    perRunTotal.length > 1
      ? `One group per recording, in [${
        // "!": one series per aggregate, and there are more than one
        aggregates[0]!.index + 1}]'s order, with each aggregate's run of it: runs are paired by ${
        aligned.paired_by === "recording" ? "recording (sha256 of its bytes)" : "recording file name"
      }, never by position; a gap is a run the aggregate lacks.`
      : "One bar per run, in the batch's order."
  }</p>
${pairingNotes.join("\n")}
${
    responsive((frame, suffix) =>
      runBars({ id: `chart-per-run${suffix}`, series: perRunTotal, frame, title: "request bytes" })
    )
  }
</section>
<section id="distribution">
<h2>Distribution over runs</h2>
<p class="note">Box: the middle half of the runs; thick line: the median; whiskers: the smallest and the largest run.</p>
<h3>Request bytes per run</h3>
${
    responsive((frame, suffix) =>
      distributionChart({
        id: `chart-distribution-total${suffix}`,
        series: distributionTotal,
        frame,
        title: "request bytes per run",
      })
    )
  }
<h3>Largest request per run</h3>
${
    responsive((frame, suffix) =>
      distributionChart({ id: `chart-distribution-max${suffix}`, series: perRunMax, frame, title: "largest request" })
    )
  }
</section>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}${STEPS_STYLE}${transcript ? TRANSCRIPT_STYLE : ""}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${headline(doc, reports)}
<p class="sub">${
    several
      ? `${reports.length} reports compared; ratios are against [1] ${escapeHtml(reports[0]?.file ?? "")}.`
      : `Report ${escapeHtml(reports[0]?.file ?? "")}.`
  } Measurements only: request bytes are UTF-8 bytes of each serialized model request.</p>
${cards(doc)}
${whatItDid}
${skippedNote}
${runSections}
${cacheSections}
${aggregateSections}
${
    series.length === 0 && perRunTotal.length === 0
      ? `<p class="note empty">These reports hold nothing to plot.</p>`
      : ""
  }
<section id="summary">
<h2>All measurements</h2>
${
    several
      ? `<p class="note scroll-hint">The table scrolls sideways: one column per report →</p>\n`
      : ""
  }<div class="table-scroll">
<table class="summary">
<thead>${head}</thead>
<tbody>
${body}
</tbody>
</table>
</div>
</section>
<footer><p>Generated by loom report.</p></footer>
</main>
</body>
</html>
`;
}
