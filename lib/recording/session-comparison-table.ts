// The session comparison as a person reads it: a text table with a total line, or a self-contained HTML page with the
// same table. Counts, sizes and money only.
import { escapeHtml } from "../report/chart.ts";
import { ContextPolicyName } from "../policy.ts";
import type { SessionComparison, SessionRow } from "./session-comparison.ts";
import { escapeControl } from "../text/safe-text.ts";

const HEAD = [
  "session",
  "model",
  "events",
  "compactions",
  ">64 KiB (legacy)",
  ...ContextPolicyName.options, // each policy's bytes
  "bytes ×",
  "modeled legacy",
  "modeled bounded",
  "cost ×",
  "recorded spend",
];

function kib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(0)} KiB`;
}
const usd = (n: number | null | undefined) => (n === null || n === undefined ? "n/a" : `$${n.toFixed(2)}`);
const times = (n: number | null) => (n === null ? "n/a" : n.toFixed(2));

function cells(r: SessionRow): string[] {
  const name = r.subagent ? `${r.file} (subagent)` : r.file;
  if (r.error !== null || !r.legacy || !r.bounded) return [name, "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—"];
  return [
    name,
    r.model,
    String(r.events),
    String(r.compactions),
    `${r.legacy.over_64k}/${r.legacy.requests}`,
    kib(r.legacy.bytes),
    kib(r.bounded.bytes),
    times(r.bytes_ratio),
    usd(r.legacy.modeled_cost),
    usd(r.bounded.modeled_cost),
    times(r.cost_ratio),
    r.recorded ? usd(r.recorded.cost) : "—",
  ];
}

function totalCells(c: SessionComparison): string[] {
  const t = c.total;
  return [
    `total (${t.sessions} sessions${t.refused > 0 ? `, ${t.refused} refused` : ""})`,
    "",
    String(t.events),
    String(t.compactions),
    `${t.legacy.over_64k}/${t.legacy.requests}`,
    kib(t.legacy.bytes),
    kib(t.bounded.bytes),
    times(t.bytes_ratio),
    usd(t.legacy.modeled_cost),
    usd(t.bounded.modeled_cost),
    times(t.cost_ratio),
    usd(t.recorded_cost),
  ];
}

/** The comparison as a text table, a total line, and one line per refused file. */
export function renderSessionComparisonText(c: SessionComparison): string {
  // A file's name may hold anything a file system allows: escaped before the widths, so a row stays one inert line.
  const rows = [HEAD, ...c.sessions.filter((r) => r.error === null).map(cells), totalCells(c)]
    .map((r) => r.map(escapeControl));
  const widths = HEAD.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ");
  const out = rows.map(line);
  out.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
  out.splice(out.length - 1, 0, widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of c.sessions) {
    if (r.error !== null) out.push(escapeControl(`refused ${r.file}: ${r.error}`));
    else if (r.skipped_sidechain_lines > 0) {
      out.push(
        `${escapeControl(r.file)}: ${r.skipped_sidechain_lines} side-chain line${
          r.skipped_sidechain_lines === 1 ? "" : "s"
        } left out (a subagent's turns, not this session's)`,
      );
    }
  }
  out.push(
    "modeled: input only, at the session model's prices (tokens as bytes / 4); recorded: the file's own usage at the same prices",
  );
  return `${out.join("\n")}\n`;
}

/** A self-contained HTML page with the same table. */
export function renderSessionComparisonHtml(c: SessionComparison): string {
  const row = (r: string[], tag = "td") =>
    `<tr>${r.map((x, i) => `<${tag}${i > 0 ? ' class="n"' : ""}>${escapeHtml(x)}</${tag}>`).join("")}</tr>`;
  const refused = c.sessions.filter((r) => r.error !== null)
    .map((r) => `<li>${escapeHtml(r.file)}: ${escapeHtml(r.error ?? "")}</li>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Loom: sessions under legacy and bounded</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:.3em .6em;border-bottom:1px solid #ddd;text-align:left}.n{text-align:right}tfoot td{font-weight:bold}</style>
</head><body><h1>Sessions under legacy and bounded</h1><p>${escapeHtml(c.folder)}</p>
<table><thead>${row(HEAD, "th")}</thead><tbody>${
    c.sessions.filter((r) => r.error === null).map((r) => row(cells(r))).join("")
  }</tbody>
<tfoot>${row(totalCells(c))}</tfoot></table>
${refused ? `<h2>Refused</h2><ul>${refused}</ul>` : ""}
<p>Modeled: input only, at the session model's prices (tokens as bytes / 4). Recorded: the file's own usage at the same prices.</p>
</body></html>
`;
}
