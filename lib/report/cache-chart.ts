// The prompt cache per model call, for the HTML report (#30): one stacked bar per call, input tokens read from the
// cache, written to it and sent uncached, with a mark under each call that broke the cache and its cause.
import { escapeHtml, type Frame, WIDE } from "./chart.ts";
import type { ReportCache } from "./report-summary.ts";
import { formatCount } from "../text/numbers.ts";

const CACHE_COLORS = { read: "#2b8a3e", write: "#e8590c", uncached: "#868e96" } as const;
const PARTS = ["read", "write", "uncached"] as const;
const fixed = (n: number) => String(Math.round(n * 10) / 10);

export function cacheBars({ id, cache, frame = WIDE, label }: {
  id: string;
  cache: ReportCache;
  frame?: Frame;
  label: string;
}): string {
  const calls = cache.per_call;
  // Two lines above the plot: the title, then the legend on its own line (on a phone's narrow frame the two shared a
  // line and overlapped).
  const top = 50;
  const height = frame.height + top;
  const plotW = frame.width - frame.left - frame.right, plotH = height - top - frame.bottom;
  const peak = Math.max(1, ...calls.map((c) => c.read + c.write + c.uncached));
  const y = (tokens: number) => top + plotH - (tokens / peak) * plotH;
  const slot = plotW / Math.max(1, calls.length);
  const bar = Math.max(0.5, slot * 0.8);
  const out = [
    `<svg id="${id}" class="chart" viewBox="0 0 ${frame.width} ${height}" width="${frame.width}" height="${height}" role="img" data-calls="${calls.length}">`,
    `<rect class="plot" x="${frame.left}" y="${top}" width="${plotW}" height="${plotH}"/>`,
    ...[0, 0.5, 1].map((f) =>
      `<text class="tick" x="${frame.left - 6}" y="${fixed(y(peak * f) + 4)}" text-anchor="end">${
        formatCount(Math.round(peak * f))
      }</text>`
    ),
    `<text class="axis-title" x="6" y="16">input tokens per call · ${escapeHtml(label)}</text>`,
  ];
  PARTS.forEach((part, k) => {
    out.push(
      `<rect x="${frame.left + k * 95}" y="${top - 22}" width="12" height="12" fill="${
        CACHE_COLORS[part]
      }"/><text class="legend" x="${frame.left + 16 + k * 95}" y="${top - 12}">${part}</text>`,
    );
  });
  calls.forEach((c, i) => {
    const x = frame.left + i * slot + slot * 0.1;
    let base = 0;
    const rects = PARTS.map((part) => {
      const v = c[part];
      if (v <= 0) return "";
      const y0 = y(base + v), y1 = y(base);
      base += v;
      return `<rect class="cache-${part}" x="${fixed(x)}" y="${fixed(y0)}" width="${fixed(bar)}" height="${
        fixed(Math.max(0, y1 - y0))
      }" fill="${CACHE_COLORS[part]}"/>`;
    }).join("");
    const title = `call ${i + 1}: read ${formatCount(c.read)} · write ${formatCount(c.write)} · uncached ${
      formatCount(c.uncached)
    }${c.cause ? ` · break: ${c.cause.replaceAll("_", " ")}` : ""}`;
    const mark = c.cause
      ? `<circle class="cache-break" data-cause="${c.cause}" cx="${fixed(x + bar / 2)}" cy="${
        top + plotH + 8
      }" r="3" fill="#c2255c"/>`
      : "";
    out.push(`<g data-call="${i + 1}"><title>${escapeHtml(title)}</title>${rects}${mark}</g>`);
  });
  out.push(
    `<text class="axis-title" x="${frame.left + plotW / 2}" y="${
      height - 10
    }" text-anchor="middle">model call (dots: cache breaks)</text>`,
    `</svg>`,
  );
  return out.join("\n");
}
