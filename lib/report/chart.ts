// SVG charts for the HTML report: the y scale (linear, or log when one series dwarfs another), line charts of request
// bytes per call with threshold lines whose labels never collide, and per-run bars and distributions for aggregates.
import { CEILING_BYTES, RETIRE_TARGET_BYTES, RETIRE_TRIGGER_BYTES } from "../context/budget.ts";
import { formatBytes } from "../text/numbers.ts";

const kib = (bytes: number) => `${bytes / 1024} KiB`;

/** Distinct, colour-blind-friendly series colours; series i is report i everywhere on the page. */
export const SERIES_COLORS = ["#1f77b4", "#e8590c", "#2b8a3e", "#c2255c", "#7048e8", "#0c8599", "#a07e00", "#8c564b"];

export type Threshold = { bytes: number; label: string; color: string; dash: string };

/** The lines SPEC §3.2 draws its rules on (grey, so no series colour is mistaken for one): retirement target, retirement trigger, hard ceiling. */
export const THRESHOLDS: readonly Threshold[] = [
  { bytes: RETIRE_TARGET_BYTES, label: `${kib(RETIRE_TARGET_BYTES)} retirement target`, color: "#868e96", dash: "3 4" },
  {
    bytes: RETIRE_TRIGGER_BYTES,
    label: `${kib(RETIRE_TRIGGER_BYTES)} retirement trigger`,
    color: "#5c636a",
    dash: "8 5",
  },
  { bytes: CEILING_BYTES, label: `${kib(CEILING_BYTES)} hard ceiling`, color: "#212529", dash: "14 4" },
] as const;

/** A chart's drawing box: the page draws each chart twice, wide for desktops and narrow (readable at 420 px) for phones. */
export type Frame = { width: number; height: number; left: number; right: number; bottom: number; font: number };
export const WIDE: Frame = { width: 1080, height: 380, left: 84, right: 28, bottom: 56, font: 13 };
export const NARROW: Frame = { width: 400, height: 300, left: 60, right: 10, bottom: 48, font: 13 };

export type Series = { index: number; label: string; values: number[]; checkpoints: boolean[] };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export const colorOf = (i: number) => SERIES_COLORS[i % SERIES_COLORS.length];
const fixed = (n: number) => String(Math.round(n * 10) / 10);

export type YScale = { kind: "linear" | "log"; max: number; ticks: number[]; at: (bytes: number) => number };

/** When one series' peak is this many times another's, a linear axis would flatten the smaller: use a log axis. */
const DWARF_RATIO = 4;

/**
 * Linear with power-of-two KiB steps (so 32/48/64 KiB fall on or between ticks), unless one series dwarfs another
 * (`peaks` differ by DWARF_RATIO or more) or everything dwarfs the 64 KiB ceiling: then a log2 scale, so a bounded
 * series stays readable beside a legacy one that grows to hundreds of KiB.
 */
function yScale(
  values: number[],
  { allowLog = true, peaks = [] }: { allowLog?: boolean; peaks?: number[] } = {},
): YScale {
  const peak = Math.max(1, ...values);
  const positivePeaks = peaks.filter((p) => p > 0);
  const dwarfs = positivePeaks.length > 1 && Math.max(...positivePeaks) >= DWARF_RATIO * Math.min(...positivePeaks);
  if (allowLog && (dwarfs || peak > 8 * CEILING_BYTES)) {
    const positive = values.filter((v) => v > 0);
    const lo = 2 ** Math.floor(Math.log2(Math.max(256, Math.min(...positive, CEILING_BYTES) / 1.2)));
    const hi = 2 ** Math.ceil(Math.log2(peak * 1.05));
    const span = Math.max(1, Math.log2(hi / lo));
    const every = Math.ceil(span / 8);
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

function callStep(count: number, most: number): number {
  for (const base of [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000]) {
    if (count / base <= most) return base;
  }
  return 10_000;
}

function formatAxisBytes(bytes: number): string {
  const trim = (n: number) => String(Number(n.toFixed(2)));
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${trim(bytes / 1024)} KiB`;
  return `${trim(bytes / (1024 * 1024))} MiB`;
}

/**
 * Label positions for lines at `ys` (any order): each label sits just above its line, and labels closer than `gap`
 * are pushed apart (upwards first, downwards when they would leave the plot), so no two overprint.
 */
export function spreadLabels(
  ys: number[],
  { gap, top, bottom }: { gap: number; top: number; bottom: number },
): number[] {
  const order = ys.map((y, i) => ({ y: y - 4, i })).sort((a, b) => b.y - a.y); // lowest line first
  const placed: number[] = [];
  for (const [k, item] of order.entries()) {
    placed[k] = k === 0 ? Math.min(item.y, bottom) : Math.min(item.y, (placed[k - 1] ?? bottom) - gap);
  }
  // Pushed past the top: shift the whole stack down, keeping the gaps.
  const highest = placed.at(-1) ?? top;
  if (highest < top + gap) {
    const shift = top + gap - highest;
    placed.forEach((p, k) => (placed[k] = p + shift));
  }
  const out: number[] = new Array(ys.length);
  order.forEach((item, k) => (out[item.i] = placed[k] ?? item.y));
  return out;
}

function legend(
  items: { label: string; swatch: string; series: number }[],
  frame: Frame,
): { svg: string; height: number } {
  const row = frame.font + 9;
  let x = 0, line = 0;
  const charWidth = frame.font * 0.56;
  const placed = items.map((item) => {
    const width = 34 + item.label.length * charWidth;
    if (x > 0 && frame.left + x + width > frame.width - frame.right) (x = 0), line++;
    const at = { ...item, x, y: line * row };
    x += width + 18;
    return at;
  });
  // Narrow frames start the legend at the left edge, not at the plot, to fit longer names.
  const start = frame.width < 600 ? 8 : frame.left;
  const svg = placed.map((p) =>
    `<g class="legend-item"${p.series >= 0 ? ` data-series="${p.series}"` : ""} transform="translate(${
      fixed(start + p.x)
    },${18 + p.y})">` +
    `${p.swatch}<text x="30" y="4">${escapeHtml(p.label)}</text></g>`
  ).join("");
  // Narrow frames put the y axis title under the legend.
  return { svg: `<g class="legend">${svg}</g>`, height: (line + 1) * row + 14 + (frame.width < 600 ? 18 : 0) };
}

function seriesLegend(series: Series[], { markers }: { markers: boolean }) {
  const items = series.map((s) => ({
    label: s.label,
    swatch: `<line x1="0" y1="0" x2="22" y2="0" stroke="${colorOf(s.index)}" stroke-width="3"/>`,
    series: s.index,
  }));
  if (markers && series.some((s) => s.checkpoints.some(Boolean))) {
    items.push({
      label: "checkpoint (prefix changed)",
      swatch: `<polygon points="11,-6 17,0 11,6 5,0" class="legend-checkpoint"/>`,
      series: -1,
    });
  }
  return items;
}

function yAxis(scale: YScale, frame: Frame, { y, top, plotH, title }: {
  y: (b: number) => number;
  top: number;
  plotH: number;
  title: string;
}): string {
  const ticks = scale.ticks.map((b) =>
    `<line class="grid" x1="${frame.left}" x2="${frame.width - frame.right}" y1="${fixed(y(b))}" y2="${
      fixed(y(b))
    }"/>` +
    `<text class="tick" x="${frame.left - 6}" y="${fixed(y(b) + 4)}" text-anchor="end">${formatAxisBytes(b)}</text>`
  ).join("");
  const label = `${title}${scale.kind === "log" ? " (log scale)" : ""}`;
  // Narrow frames have no room beside the tick labels: the title goes above the plot instead.
  if (frame.width < 600) {
    return `<g class="axis y-axis">${ticks}</g><text class="axis-title" x="6" y="${top - 8}">${label}</text>`;
  }
  return `<g class="axis y-axis">${ticks}</g><text class="axis-title" transform="translate(${frame.font + 1},${
    fixed(top + plotH / 2)
  }) rotate(-90)" text-anchor="middle">${label}</text>`;
}

export function lineChart({ id, series, thresholds, markers, frame = WIDE, peaks = [] }: {
  id: string;
  series: Series[];
  thresholds: readonly Threshold[];
  markers: boolean;
  frame?: Frame;
  /** Each series' peak, to decide whether one dwarfs another (log scale). */
  peaks?: number[];
}): string {
  const { svg: legendSvg, height: top } = legend(seriesLegend(series, { markers }), frame);
  const height = frame.height + top;
  const plotW = frame.width - frame.left - frame.right, plotH = height - top - frame.bottom;
  const calls = Math.max(1, ...series.map((s) => s.values.length));
  const scale = yScale([...series.flatMap((s) => s.values), ...thresholds.map((t) => t.bytes)], {
    allowLog: thresholds.length > 0 || peaks.length > 0,
    peaks,
  });
  const x = (call: number) => frame.left + (calls === 1 ? plotW / 2 : ((call - 1) / (calls - 1)) * plotW);
  const y = (bytes: number) => top + plotH - scale.at(bytes) * plotH;
  const out: string[] = [];
  out.push(
    `<svg id="${id}" class="chart" viewBox="0 0 ${frame.width} ${height}" width="${frame.width}" height="${height}" role="img" data-calls="${calls}" data-y-max="${scale.max}" data-scale="${scale.kind}">`,
  );
  out.push(`<rect class="plot" x="${frame.left}" y="${top}" width="${plotW}" height="${plotH}"/>`);
  const cStep = callStep(calls, frame.width < 600 ? 5 : 10);
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
  out.push(yAxis(scale, frame, { y, top, plotH, title: "request bytes" }));
  out.push(`<g class="axis x-axis">${xTicks.join("")}</g>`);
  out.push(
    `<text class="axis-title" x="${frame.left + plotW / 2}" y="${height - 10}" text-anchor="middle">model call</text>`,
  );
  const labelYs = spreadLabels(thresholds.map((t) => y(t.bytes)), {
    gap: frame.font + 2,
    top,
    bottom: top + plotH - 4,
  });
  // The lines go under the series; their labels are drawn last (SVG paints in document order), so no series covers them.
  thresholds.forEach((t) => {
    const ly = y(t.bytes);
    out.push(
      `<g class="threshold" data-bytes="${t.bytes}"><line x1="${frame.left}" x2="${frame.width - frame.right}" y1="${
        fixed(ly)
      }" y2="${fixed(ly)}" stroke="${t.color}" stroke-dasharray="${t.dash}"/></g>`,
    );
  });
  const thresholdLabels = thresholds.map((t, i) =>
    `<g class="threshold-label" data-bytes="${t.bytes}"><text x="${frame.left + 8}" y="${
      fixed(labelYs[i] ?? 0)
    }" fill="${t.color}">${t.label}</text></g>`
  );
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
            const cx = x(i + 1), cy = y(s.values[i] ?? 0);
            return `<polygon class="checkpoint" data-call="${i + 1}" points="${fixed(cx)},${fixed(cy - size)} ${
              fixed(cx + size)
            },${fixed(cy)} ${fixed(cx)},${fixed(cy + size)} ${fixed(cx - size)},${
              fixed(cy)
            }"><title>checkpoint before call ${i + 1}</title></polygon>`;
          }).join("") + `</g>`,
      );
    }
  }
  out.push(...thresholdLabels, legendSvg, `</svg>`);
  return out.join("\n");
}

/** An aggregate's runs as one series of per-run values (request bytes, or largest request). */
export type RunSeries = { index: number; label: string; names: string[]; values: (number | null)[] };

const present = (values: (number | null)[]): number[] => values.filter((v): v is number => v !== null);

/**
 * Per-run bars: one group per run (paired by recording: see report-pairs.ts), one bar per aggregate, none where an
 * aggregate lacks the run. A log axis
 * when one aggregate's runs dwarf another's.
 */
export function runBars({ id, series, frame = WIDE, title }: {
  id: string;
  series: RunSeries[];
  frame?: Frame;
  title: string;
}): string {
  const items = series.map((s) => ({
    label: s.label,
    swatch: `<rect x="4" y="-6" width="14" height="12" fill="${colorOf(s.index)}"/>`,
    series: s.index,
  }));
  const { svg: legendSvg, height: top } = legend(items, frame);
  const height = frame.height + top;
  const plotW = frame.width - frame.left - frame.right, plotH = height - top - frame.bottom;
  const runs = Math.max(1, ...series.map((s) => s.values.length));
  const peaks = series.map((s) => Math.max(0, ...present(s.values)));
  const scale = yScale(series.flatMap((s) => present(s.values)), { peaks });
  const y = (bytes: number) => top + plotH - scale.at(bytes) * plotH;
  const slot = plotW / runs;
  const bar = Math.max(0.6, (slot * 0.8) / Math.max(1, series.length));
  const out: string[] = [
    `<svg id="${id}" class="chart" viewBox="0 0 ${frame.width} ${height}" width="${frame.width}" height="${height}" role="img" data-runs="${runs}" data-scale="${scale.kind}">`,
    `<rect class="plot" x="${frame.left}" y="${top}" width="${plotW}" height="${plotH}"/>`,
    yAxis(scale, frame, { y, top, plotH, title }),
  ];
  const step = callStep(runs, frame.width < 600 ? 5 : 10);
  const ticks: string[] = [];
  for (let r = step === 1 ? 1 : step; r <= runs; r += step) {
    const cx = frame.left + (r - 0.5) * slot;
    ticks.push(`<text class="tick" x="${fixed(cx)}" y="${top + plotH + 18}" text-anchor="middle">${r}</text>`);
  }
  out.push(`<g class="axis x-axis">${ticks.join("")}</g>`);
  out.push(
    `<text class="axis-title" x="${frame.left + plotW / 2}" y="${height - 10}" text-anchor="middle">run</text>`,
  );
  series.forEach((s, k) => {
    out.push(
      // Pixel-snapped: bars a pixel or two wide at fractional positions otherwise beat into a moiré.
      `<g class="bars" id="${id}-series-${s.index}" data-series="${s.index}" data-bars="${
        present(s.values).length
      }" fill="${colorOf(s.index)}" shape-rendering="crispEdges">` +
        s.values.map((v, r) => {
          if (v === null) return "";
          const x0 = frame.left + r * slot + slot * 0.1 + k * bar;
          const y0 = y(v);
          return `<rect data-run="${escapeHtml(s.names[r] ?? "")}" data-slot="${r}" x="${fixed(x0)}" y="${
            fixed(y0)
          }" width="${fixed(bar)}" height="${fixed(Math.max(0, top + plotH - y0))}"><title>${
            escapeHtml(s.label)
          } · run ${r + 1} ${escapeHtml(s.names[r] ?? "")} · ${formatBytes(v)}</title></rect>`;
        }).join("") + `</g>`,
    );
  });
  out.push(legendSvg, `</svg>`);
  return out.join("\n");
}

/** Quantiles of a distribution: the five numbers a box plot draws. */
function fiveNumbers(values: number[]): { min: number; q1: number; median: number; q3: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => {
    if (sorted.length === 0) return 0;
    const pos = (sorted.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
    const [low = 0, high = 0] = [sorted[lo], sorted[hi]];
    return low + (high - low) * (pos - lo);
  };
  return { min: at(0), q1: at(0.25), median: at(0.5), q3: at(0.75), max: at(1) };
}

/** Horizontal box plots, one row per aggregate, on a shared log or linear axis. */
export function distributionChart({ id, series, frame = WIDE, title }: {
  id: string;
  series: RunSeries[];
  frame?: Frame;
  title: string;
}): string {
  const row = 34;
  const labelW = frame.width < 600 ? 0 : 220;
  const top = frame.width < 600 ? 10 : 10;
  const rowsH = series.length * (row + (frame.width < 600 ? 18 : 0));
  const height = top + rowsH + 44;
  const left = labelW + (frame.width < 600 ? 12 : 16), right = frame.width - frame.right - 10;
  const peaks = series.map((s) => Math.max(0, ...present(s.values)));
  const scale = yScale(series.flatMap((s) => present(s.values)), { peaks });
  const x = (b: number) => left + scale.at(b) * (right - left);
  const out: string[] = [
    `<svg id="${id}" class="chart" viewBox="0 0 ${frame.width} ${height}" width="${frame.width}" height="${height}" role="img" data-scale="${scale.kind}">`,
  ];
  const axisY = top + rowsH + 4;
  const ticks = scale.ticks.filter((_, i) => frame.width >= 600 || i % 2 === 0);
  out.push(
    `<g class="axis">` +
      ticks.map((b) =>
        `<line class="grid" x1="${fixed(x(b))}" x2="${fixed(x(b))}" y1="${top}" y2="${axisY}"/>` +
        `<text class="tick" x="${fixed(x(b))}" y="${axisY + 16}" text-anchor="${
          b === ticks[0] ? "start" : b === ticks.at(-1) ? "end" : "middle"
        }">${formatAxisBytes(b)}</text>`
      ).join("") + `</g>`,
    `<text class="axis-title" x="${fixed((left + right) / 2)}" y="${height - 4}" text-anchor="middle">${title}${
      scale.kind === "log" ? " (log scale)" : ""
    }</text>`,
  );
  series.forEach((s, k) => {
    const f = fiveNumbers(present(s.values));
    const narrow = frame.width < 600;
    const cy = top + k * (row + (narrow ? 18 : 0)) + (narrow ? 18 : 0) + row / 2;
    const color = colorOf(s.index);
    const label = narrow
      ? `<text class="box-label" x="${left}" y="${fixed(cy - row / 2 - 2)}">${escapeHtml(s.label)}</text>`
      : `<text class="box-label" x="${labelW}" y="${fixed(cy + 4)}" text-anchor="end">${escapeHtml(s.label)}</text>`;
    out.push(
      `<g class="box" data-series="${s.index}" data-median="${Math.round(f.median)}">${label}` +
        `<line x1="${fixed(x(f.min))}" x2="${fixed(x(f.max))}" y1="${fixed(cy)}" y2="${
          fixed(cy)
        }" stroke="${color}" stroke-width="2"/>` +
        `<rect x="${fixed(x(f.q1))}" y="${fixed(cy - 10)}" width="${
          fixed(Math.max(2, x(f.q3) - x(f.q1)))
        }" height="20" fill="${color}" fill-opacity="0.25" stroke="${color}" stroke-width="2"/>` +
        `<line x1="${fixed(x(f.median))}" x2="${fixed(x(f.median))}" y1="${fixed(cy - 12)}" y2="${
          fixed(cy + 12)
        }" stroke="${color}" stroke-width="4"/>` +
        `<title>${escapeHtml(s.label)}: min ${formatBytes(f.min)}, quartiles ${formatBytes(f.q1)} / ${
          formatBytes(f.median)
        } / ${formatBytes(f.q3)}, max ${formatBytes(f.max)} over ${present(s.values).length} runs</title></g>`,
    );
  });
  out.push(`</svg>`);
  return out.join("\n");
}
