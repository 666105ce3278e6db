// A summary as plain text (no colour): one report in detail, or several side by side with their ratios against the
// first.
import type { SummaryDocument } from "./summary.ts";
import type { ReportSummary } from "./report-summary.ts";
import { comparisonRows, describeRunPairing, headlineOf } from "./comparison.ts";
import { formatRatio } from "../text/numbers.ts";
import { tallTable, WIDTH, wrapText } from "./text-table.ts";
import { renderOne } from "./report-text.ts";

/** The widest a text cell of a comparison grows before it continues on the next line. */
const TEXT_CELL = 24;

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
