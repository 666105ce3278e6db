// The one place a run's result becomes output: a JSON object, or a few human lines.
import type { RunResult } from "../api.ts";
import type { ContextReport } from "../lib/context-report.ts";
import { EXIT_CODES } from "../lib/errors.ts";

/** A RunResult for a run that never started, so a failure prints through the same reporter as a run. */
export function failedResult(report: ContextReport, reportPath: string | null | undefined): RunResult {
  return {
    outcome: report.outcome,
    error: report.error,
    finish: null,
    steps: 0,
    revision: "r0",
    last_test: null,
    tests_current: false,
    printed: [],
    reports: [],
    report,
    exit_code: EXIT_CODES[report.outcome],
    report_path: reportPath ?? null,
  };
}

export type ResultSummary = {
  outcome: string;
  exit_code: number;
  slice: string | null;
  status: string | null;
  summary: string | null;
  steps: number;
  revision: string;
  last_test: { revision: string; exit_code: number | null; timed_out: boolean } | null;
  tests_current: boolean;
  printed: string[];
  error: { code: string; message: string } | null;
  model_calls: number;
  request_bytes: { total: number; max: number };
  report_path: string | null;
  replay?: { compared: number; differing_steps: number[] };
};

export function summarizeResult(result: RunResult, extra: { replay?: ResultSummary["replay"] } = {}): ResultSummary {
  const phases = result.report.phases;
  const total = phases.classification.request_bytes.total + phases.selection.request_bytes.total +
    phases.arguments.request_bytes.total;
  const max = Math.max(
    phases.classification.request_bytes.max,
    phases.selection.request_bytes.max,
    phases.arguments.request_bytes.max,
  );
  return {
    outcome: result.outcome,
    exit_code: result.exit_code,
    slice: result.report.slice,
    status: result.finish?.status ?? null,
    summary: result.finish?.summary ?? null,
    steps: result.steps,
    revision: result.revision,
    last_test: result.last_test
      ? {
        revision: result.last_test.revision,
        exit_code: result.last_test.exit_code,
        timed_out: result.last_test.timed_out,
      }
      : null,
    tests_current: result.tests_current,
    printed: result.printed,
    error: result.error,
    model_calls: result.report.model_calls,
    request_bytes: { total, max },
    report_path: result.report_path,
    ...(extra.replay ? { replay: extra.replay } : {}),
  };
}

const n = (x: number) => x.toLocaleString("en-US");
const plural = (count: number, noun: string) => `${n(count)} ${noun}${count === 1 ? "" : "s"}`;

export function renderResultText(s: ResultSummary, { label }: { label: string }): string {
  const lines: string[] = [];
  lines.push(
    `${label}: ${s.outcome}${s.status ? ` (${s.status})` : ""} after ${
      plural(s.steps, "step")
    }, revision ${s.revision}`,
  );
  if (s.summary) lines.push(`  summary: ${s.summary}`);
  for (const text of s.printed) lines.push(`  printed: ${text}`);
  if (s.last_test) {
    const t = s.last_test;
    lines.push(
      `  last test: ${t.timed_out ? "timed out" : `exit ${t.exit_code}`} on ${t.revision}${
        s.tests_current ? " (current)" : " (not current)"
      }`,
    );
  }
  if (s.error) lines.push(`  error: ${s.error.code}: ${s.error.message}`);
  lines.push(
    `  ${plural(s.model_calls, "model call")}, ${n(s.request_bytes.total)} request bytes (max ${
      n(s.request_bytes.max)
    })`,
  );
  if (s.replay) {
    lines.push(
      s.replay.differing_steps.length === 0
        ? `  re-executed: all ${s.replay.compared} execution reports equal the recording`
        : `  re-executed: ${s.replay.differing_steps.length === 1 ? "step" : "steps"} ${
          s.replay.differing_steps.join(", ")
        } ${s.replay.differing_steps.length === 1 ? "differs" : "differ"} from the recording`,
    );
  }
  if (s.report_path) lines.push(`  report: ${s.report_path}`);
  return `${lines.join("\n")}\n`;
}
