// One report in detail as plain text: its facts, phases and counts, its steps, changed files, what it said, its
// prompt cache, and an aggregate's runs.
import { escapeControl } from "../text/safe-text.ts";
import type { StepRecord } from "./context-report.ts";
import type { WorkspaceChanges } from "../vocabulary/reports.ts";
import { gapText, stepRows } from "./step-rows.ts";
import { formatBytes, formatCount, formatMs } from "../text/numbers.ts";
import { CacheCause } from "../cache-explanation.ts";
import {
  describeUsageScope,
  formatOutcome,
  formatVerified,
  missingCost,
  MODEL_PHASES,
  NONE,
  NOT_REPORTED,
  PHASES,
  type ReportCache,
  type ReportSummary,
  USAGE_COUNTERS,
} from "./report-summary.ts";
import { chunks, clipCell, keyValues, table, tallTable, WIDTH, wrapText } from "./text-table.ts";

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** One labelled fact of a summary's text: a pair, typed as one. */
function fact(label: string, value: string): [string, string] {
  return [label, value];
}

export function renderOne(s: ReportSummary): string {
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
