// What the agent did, on a run's HTML page: the outcome, `verified`, the cost and the changed files first, then one
// row per step (action, target, status, test or command exit, revision, lines, the step's request bytes and cache
// reads) a person can scan. Paths and commands only: never file contents, output or prompts.
import type { ContextReport } from "./context-report.ts";
import type { ReportSummary } from "./report-summary.ts";
import { stepStatus } from "./report-text.ts";
import { gapText, stepRows } from "./step-rows.ts";
import { escapeControl } from "../text/safe-text.ts";
import { formatBytes, formatCount } from "../text/numbers.ts";
import { escapeHtml } from "./chart.ts";

const signed = (n: number | null | undefined, sign: string) =>
  n === undefined ? "" : n === null ? `${sign}?` : `${sign}${formatCount(n)}`;

/** The facts a person asks first after a run: how it ended, whether Loom verified it, what it cost, what it changed. */
export function runFacts(s: ReportSummary, report: ContextReport): string {
  const figure = (value: string, caption: string, cls = "") =>
    `<div class="figure${cls}"><span class="big">${escapeHtml(value)}</span><span class="caption">${
      escapeHtml(caption)
    }</span></div>`;
  const replay = report.recording !== undefined;
  const cost = s.cost === null ? "—" : `$${s.cost.toFixed(4)}`;
  const changed = s.changes === null
    ? "—"
    : `${formatCount(s.changes.files.length)} ${s.changes.files.length === 1 ? "file" : "files"}`;
  const lines = s.changes === null
    ? "not known"
    : `${signed(s.changes.lines_added, "+")} ${signed(s.changes.lines_removed, "−")} lines`;
  return `<div class="pair facts" style="border-top-color:#495057">` +
    figure(s.outcome ?? "—", s.error ? s.error.code : "outcome", s.outcome === "completed" ? "" : " bad") +
    figure(
      s.verified ? "verified" : "NOT verified",
      "final revision's tests passed",
      s.verified ? " better" : " bad",
    ) +
    // A replay's cost is the recorded run's: said so, never as money spent now.
    figure(cost, replay ? "recorded cost (of the recorded run)" : "cost") +
    figure(changed, `changed, ${lines}`) +
    `</div>`;
}

/** The files changed against the starting revision, as a list. */
export function changedFilesSection(s: ReportSummary): string {
  if (s.changes === null) return "";
  const items = s.changes.files.map((f) =>
    `<li><span class="change ${f.change}">${f.change}</span> <code>${escapeHtml(f.path)}</code> <span class="lines">${
      escapeHtml(`${signed(f.lines_added, "+")} ${signed(f.lines_removed, "−")}`)
    }</span></li>`
  ).join("");
  return `<section id="changes">
<h2>Changed files</h2>
${
    items === ""
      ? `<p class="note">No file differs from the starting revision.</p>`
      : `<ul class="changes">${items}</ul>`
  }
</section>`;
}

/** The model's finish summary and what the run printed: Loom's own output (never the user's files), escaped. */
export function saidSection(s: ReportSummary): string {
  if (s.finish === null && s.printed.length === 0) return "";
  const block = (label: string, text: string) =>
    `<div class="said"><h3>${escapeHtml(label)}</h3><pre>${
      escapeHtml(text.split("\n").map(escapeControl).join("\n"))
    }</pre></div>`;
  return `<section id="said">
<h2>What the agent said</h2>
${s.finish ? block(`finish: ${s.finish.status}`, s.finish.summary) : ""}${
    s.printed.map((text, i) => block(s.printed.length === 1 ? "printed" : `printed (${i + 1})`, text)).join("")
  }
</section>
`;
}

/** One row per step: what it did, how it went, what it sent and how much the cache served. */
export function stepTimeline(s: ReportSummary, report: ContextReport): string {
  if (s.step_log === null || s.step_log.length === 0) return "";
  const perStep = new Map<number, { bytes: number; input: number; read: number }>();
  for (const call of report.calls) {
    const entry = perStep.get(call.step) ?? { bytes: 0, input: 0, read: 0 };
    entry.bytes += call.request_bytes;
    entry.input += (call.usage.input ?? 0) + (call.usage.cache_read ?? 0) + (call.usage.cache_write ?? 0);
    entry.read += call.usage.cache_read ?? 0;
    perStep.set(call.step, entry);
  }
  const rows = stepRows(s.step_log).map((row) => {
    if (row.kind === "gap") {
      return `<tr class="gap"><td></td><td colspan="8">${escapeHtml(gapText(row, formatCount))}</td></tr>`;
    }
    const step = row.step;
    const sent = perStep.get(step.step);
    const cache = sent && sent.input > 0 ? `${Math.round((100 * sent.read) / sent.input)} %` : "—";
    const test = step.report === "test" ? (step.status === "ok" ? "passed" : step.status) : "";
    return `<tr class="${escapeHtml(step.status)}"><td>${step.step}</td><td>${escapeHtml(step.action ?? "—")}</td>` +
      `<td class="target">${escapeHtml(step.target ?? "")}</td><td class="status">${escapeHtml(stepStatus(step))}${
        step.exit_code === null ? "" : ` (exit ${step.exit_code})`
      }</td><td>${escapeHtml(test)}</td><td>${escapeHtml(step.revision)}</td>` +
      `<td>${escapeHtml(signed(step.lines_added, "+"))} ${escapeHtml(signed(step.lines_removed, "−"))}</td>` +
      `<td>${sent ? formatBytes(sent.bytes) : "—"}</td><td>${cache}</td></tr>`;
  }).join("\n");
  return `<section id="steps">
<h2>Steps</h2>
<p class="note">What the agent did, step by step: the action and what it worked on, how it went, the workspace
revision after it, lines added and removed, the bytes its model calls sent and the share of their input read from the
prompt cache.</p>
<div class="table-scroll">
<table class="steps">
<thead><tr><th>step</th><th>action</th><th>target</th><th>status</th><th>tests</th><th>rev</th><th>lines</th><th>sent</th><th>cache</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</div>
</section>`;
}

export const STEPS_STYLE = `
.headline .facts .figure.bad .big { color: #c92a2a; }
.headline .facts .big { font-size: 30px; }
table.steps { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
table.steps th, table.steps td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
table.steps td.target { white-space: normal; overflow-wrap: anywhere; min-width: 8em; }
table.steps tr.failed td.status, table.steps tr.refused td.status, table.steps tr.timed_out td.status { color: #c92a2a; font-weight: 600; }
table.steps tr.gap td { color: var(--muted); font-style: italic; }
.said pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f8f9fa; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 4px 0 10px; }
.said h3 { font-size: 14px; margin: 8px 0 0; color: var(--muted); }
ul.changes { list-style: none; padding: 0; margin: 6px 0; }
ul.changes li { padding: 2px 0; overflow-wrap: anywhere; }
ul.changes .change { display: inline-block; min-width: 5.5em; color: var(--muted); }
ul.changes .lines { color: var(--muted); margin-left: 6px; white-space: nowrap; }
@media (max-width: 640px) {
  .headline .facts .big { font-size: 24px; }
  table.steps th, table.steps td { padding: 3px 4px; font-size: 13px; }
  table.steps td.status { white-space: normal; }
  table.steps td.target { min-width: 5em; }
  /* On a phone the columns a person scans first: action, target, status, revision, lines (rows are in step order; the
     test verdict is in the status; bytes and cache are on the charts below). */
  table.steps th:nth-child(1), table.steps td:nth-child(1),
  table.steps th:nth-child(5), table.steps td:nth-child(5),
  table.steps th:nth-child(8), table.steps td:nth-child(8),
  table.steps th:nth-child(9), table.steps td:nth-child(9) { display: none; }
}
`;
