// One self-contained HTML page for `loom report --html`: the summary table and two SVG charts, no scripts, no network.
import type { NamedReport } from "./report-load.ts";
import {
  comparisonRows,
  formatBytes,
  formatCount,
  formatMs,
  formatOutcome,
  formatRatio,
  ratio,
  summarizeReports,
  type SummaryDocument,
} from "./report-summary.ts";

/** Distinct, colour-blind-friendly series colours; series i is report i everywhere on the page. */
export const SERIES_COLORS = ["#1f77b4", "#e8590c", "#2b8a3e", "#c2255c", "#7048e8", "#0c8599", "#a07e00", "#8c564b"];

/** The lines SPEC §3.2 draws its rules on (grey, so no series colour is mistaken for one): retirement target, retirement trigger, hard ceiling. */
export const THRESHOLDS = [
  { bytes: 32_768, label: "32 KiB retirement target", color: "#868e96", dash: "3 4" },
  { bytes: 49_152, label: "48 KiB retirement trigger", color: "#5c636a", dash: "8 5" },
  { bytes: 65_536, label: "64 KiB hard ceiling", color: "#212529", dash: "14 4" },
] as const;

const W = 1080, H = 380, LEFT = 84, RIGHT = 28, BOTTOM = 56, LEGEND_ROW = 22;

type Series = { index: number; label: string; values: number[]; checkpoints: boolean[] };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const colorOf = (i: number) => SERIES_COLORS[i % SERIES_COLORS.length];
const fixed = (n: number) => String(Math.round(n * 10) / 10);

type YScale = { kind: "linear" | "log"; max: number; ticks: number[]; at: (bytes: number) => number };

/**
 * Linear with power-of-two KiB steps (so 32/48/64 KiB fall on or between ticks), unless the peak dwarfs the 64 KiB
 * ceiling: then a log2 scale, so a bounded series stays readable beside a legacy one that grows to megabytes.
 */
export function yScale(values: number[], { allowLog = true }: { allowLog?: boolean } = {}): YScale {
  const peak = Math.max(1, ...values);
  if (allowLog && peak > 8 * 65_536) {
    const positive = values.filter((v) => v > 0);
    const lo = 2 ** Math.floor(Math.log2(Math.max(1024, Math.min(...positive, 65_536) / 1.2)));
    const hi = 2 ** Math.ceil(Math.log2(peak * 1.05));
    const span = Math.log2(hi / lo);
    const every = Math.ceil(span / 10);
    const ticks: number[] = [];
    for (let e = 0; e <= span; e += every) ticks.push(lo * 2 ** e);
    return { kind: "log", max: hi, ticks, at: (b) => Math.log2(Math.max(b, lo) / lo) / span };
  }
  let step = 1024;
  while ((peak * 1.05) / step > 8) step *= 2;
  const max = Math.ceil((peak * 1.05) / step) * step;
  const ticks: number[] = [];
  for (let b = 0; b <= max; b += step) ticks.push(b);
  return { kind: "linear", max, ticks, at: (b) => b / max };
}

function callStep(count: number): number {
  for (const base of [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000]) {
    if (count / base <= 10) return base;
  }
  return 10_000;
}

export function formatAxisBytes(bytes: number): string {
  const trim = (n: number) => String(Number(n.toFixed(2)));
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${trim(bytes / 1024)} KiB`;
  return `${trim(bytes / (1024 * 1024))} MiB`;
}

function legend(series: Series[], { markers }: { markers: boolean }): { svg: string; height: number } {
  const items = series.map((s) => ({
    label: s.label,
    swatch: `<line x1="0" y1="0" x2="22" y2="0" stroke="${colorOf(s.index)}" stroke-width="3"/>`,
    series: s.index,
  }));
  if (markers) {
    items.push({
      label: "checkpoint (prefix changed)",
      swatch: `<polygon points="11,-6 17,0 11,6 5,0" class="legend-checkpoint"/>`,
      series: -1,
    });
  }
  let x = 0, row = 0;
  const placed = items.map((item) => {
    const width = 34 + item.label.length * 7.2;
    if (x > 0 && LEFT + x + width > W - RIGHT) (x = 0), row++;
    const at = { ...item, x, y: row * LEGEND_ROW };
    x += width + 18;
    return at;
  });
  const svg = placed.map((p) =>
    `<g class="legend-item"${p.series >= 0 ? ` data-series="${p.series}"` : ""} transform="translate(${
      fixed(LEFT + p.x)
    },${18 + p.y})">` +
    `${p.swatch}<text x="30" y="4">${escapeHtml(p.label)}</text></g>`
  ).join("");
  return { svg: `<g class="legend">${svg}</g>`, height: (row + 1) * LEGEND_ROW + 14 };
}

function lineChart({ id, series, thresholds, markers }: {
  id: string;
  series: Series[];
  thresholds: readonly { bytes: number; label: string; color: string; dash: string }[];
  markers: boolean;
}): string {
  const { svg: legendSvg, height: top } = legend(series, { markers });
  const height = H + top;
  const plotW = W - LEFT - RIGHT, plotH = height - top - BOTTOM;
  const calls = Math.max(1, ...series.map((s) => s.values.length));
  const scale = yScale([...series.flatMap((s) => s.values), ...thresholds.map((t) => t.bytes)], {
    allowLog: thresholds.length > 0,
  });
  const x = (call: number) => LEFT + (calls === 1 ? plotW / 2 : ((call - 1) / (calls - 1)) * plotW);
  const y = (bytes: number) => top + plotH - scale.at(bytes) * plotH;
  const out: string[] = [];
  out.push(
    `<svg id="${id}" class="chart" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" data-calls="${calls}" data-y-max="${scale.max}" data-scale="${scale.kind}">`,
  );
  out.push(`<rect class="plot" x="${LEFT}" y="${top}" width="${plotW}" height="${plotH}"/>`);
  const yTicks: string[] = [];
  for (const b of scale.ticks) {
    yTicks.push(
      `<line class="grid" x1="${LEFT}" x2="${W - RIGHT}" y1="${fixed(y(b))}" y2="${fixed(y(b))}"/>` +
        `<text class="tick" x="${LEFT - 8}" y="${fixed(y(b) + 4)}" text-anchor="end">${formatAxisBytes(b)}</text>`,
    );
  }
  const cStep = callStep(calls);
  const xTicks: string[] = [];
  // Call 1 gets a tick unless it would crowd the first multiple of the step (steps of 2).
  const callTicks = [
    ...(cStep === 2 ? [] : [1]),
    ...Array.from({ length: Math.floor(calls / cStep) }, (_, i) => (i + 1) * cStep),
  ];
  for (const c of new Set(callTicks)) {
    xTicks.push(
      `<line class="tick-mark" x1="${fixed(x(c))}" x2="${fixed(x(c))}" y1="${top + plotH}" y2="${top + plotH + 5}"/>` +
        `<text class="tick" x="${fixed(x(c))}" y="${top + plotH + 20}" text-anchor="middle">${c}</text>`,
    );
  }
  out.push(`<g class="axis y-axis">${yTicks.join("")}</g><g class="axis x-axis">${xTicks.join("")}</g>`);
  out.push(
    `<text class="axis-title" x="${LEFT + plotW / 2}" y="${height - 12}" text-anchor="middle">model call</text>`,
  );
  out.push(
    `<text class="axis-title" transform="translate(18,${
      top + plotH / 2
    }) rotate(-90)" text-anchor="middle">request bytes${scale.kind === "log" ? " (log scale)" : ""}</text>`,
  );
  // Labels sit at the left, where early requests are still small, and stack upwards 14 px apart if lines crowd.
  let lastLabelY = Infinity;
  for (const t of thresholds) {
    const ly = y(t.bytes);
    const labelY = Math.min(ly - 4, lastLabelY - 14);
    lastLabelY = labelY;
    out.push(
      `<g class="threshold" data-bytes="${t.bytes}"><line x1="${LEFT}" x2="${W - RIGHT}" y1="${fixed(ly)}" y2="${
        fixed(ly)
      }" stroke="${t.color}" stroke-dasharray="${t.dash}"/>` +
        `<text x="${LEFT + 8}" y="${fixed(labelY)}" fill="${t.color}">${t.label}</text></g>`,
    );
  }
  for (const s of series) {
    const color = colorOf(s.index);
    const pts = s.values.map((v, i) => `${fixed(x(i + 1))},${fixed(y(v))}`);
    out.push(
      `<polyline id="${id}-series-${s.index}" class="series" data-series="${s.index}" data-points="${pts.length}" fill="none" stroke="${color}" points="${
        pts.join(" ")
      }"/>`,
    );
    // Dots carry a hover title; skipped on long series where they would only blur the line.
    if (s.values.length <= 300) {
      out.push(
        `<g class="points" data-series="${s.index}" fill="${color}">` + s.values.map((v, i) =>
          `<circle cx="${fixed(x(i + 1))}" cy="${fixed(y(v))}" r="${s.values.length > 80 ? 1.8 : 3}"><title>${
            escapeHtml(s.label)
          } · call ${i + 1} · ${formatBytes(v)}</title></circle>`
        ).join("") + `</g>`,
      );
    }
    if (markers) {
      const marks = s.checkpoints.flatMap((c, i) => (c ? [i] : []));
      const size = calls > 150 ? 4.5 : 7;
      out.push(
        `<g class="checkpoints" data-series="${s.index}" data-count="${marks.length}" stroke="${color}">` +
          marks.map((i) => {
            const cx = x(i + 1), cy = y(s.values[i]);
            return `<polygon class="checkpoint" data-call="${i + 1}" points="${fixed(cx)},${fixed(cy - size)} ${
              fixed(cx + size)
            },${fixed(cy)} ${fixed(cx)},${fixed(cy + size)} ${fixed(cx - size)},${
              fixed(cy)
            }"><title>checkpoint before call ${i + 1}</title></polygon>`;
          }).join("") + `</g>`,
      );
    }
  }
  out.push(legendSvg, `</svg>`);
  return out.join("\n");
}

/** One card per report with the numbers people look for first, and the ratio against report [1]. */
function cards(doc: SummaryDocument): string {
  const [first] = doc.reports;
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
      `<dt>elapsed</dt><dd>${vs(s.total_elapsed_ms, first.total_elapsed_ms, formatMs)}</dd>` +
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
svg .threshold text { font-size: 12px; font-weight: 600; paint-order: stroke; stroke: #fff; stroke-width: 4px; stroke-linejoin: round; }
svg polyline.series { stroke-width: 2.2; stroke-linejoin: round; }
svg .checkpoint, svg .legend-checkpoint { fill: #fff; stroke-width: 2; }
svg .legend-checkpoint { stroke: #495057; }
`;

/** The page: summary table, request bytes per call (with the 32/48/64 KiB lines and checkpoints), cumulative bytes. */
export function renderReportHtml(
  reports: NamedReport[],
  { title = "Loom context report" }: { title?: string } = {},
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
  const skipped = reports.flatMap((
    r,
    i,
  ) => (r.kind === "run" && r.report.calls.length > 0 ? [] : [`[${i + 1}] ${r.file}`]));
  const skippedNote = skipped.length === 0
    ? ""
    : `<p class="note">No per-call series in ${
      escapeHtml(skipped.join(", "))
    } (an aggregate report or a run without model calls).</p>`;
  const cumulative = series.map((s) => {
    let total = 0;
    return { ...s, values: s.values.map((v) => (total += v)) };
  });
  const charts = series.length === 0
    ? `<p class="note empty">These reports hold no per-call series to plot.</p>`
    : null;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p class="sub">${
    several
      ? `${reports.length} reports compared; ratios are against [1] ${escapeHtml(reports[0].file)}.`
      : `Report ${escapeHtml(reports[0]?.file ?? "")}.`
  } Measurements only: request bytes are UTF-8 bytes of each serialized model request.</p>
${cards(doc)}
<section id="per-call">
<h2>Request bytes per model call</h2>
<p class="note">Grey dashed lines: the bounded policy retires old events when a request would pass 48 KiB, aiming for 32 KiB, and never sends more than 64 KiB. Diamonds mark checkpoints, where the cacheable prefix changed.</p>
${skippedNote}
${charts ?? lineChart({ id: "chart-per-call", series, thresholds: THRESHOLDS, markers: true })}
</section>
<section id="cumulative">
<h2>Cumulative request bytes</h2>
<p class="note">Total bytes sent up to and including each model call.</p>
${charts ?? lineChart({ id: "chart-cumulative", series: cumulative, thresholds: [], markers: false })}
</section>
<section id="summary">
<h2>All measurements</h2>
<table class="summary">
<thead>${head}</thead>
<tbody>
${body}
</tbody>
</table>
</section>
<footer><p>Generated by loom report.</p></footer>
</main>
</body>
</html>
`;
}
