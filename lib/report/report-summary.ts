// One report reduced to what a reader compares (a run's or an aggregate's), and the words its text and HTML
// renderings share.
import type { ContextPolicyName } from "../policy.ts";
import { type AggregateReport, type ContextReport, requestBytes, type StepRecord } from "./context-report.ts";
import type { WorkspaceChanges } from "../vocabulary/reports.ts";
import type { NamedReport } from "./load.ts";
import { Phase, type Usage } from "../vocabulary/turn.ts";
import type { CacheCause, RunCache } from "../cache-explanation.ts";

/** The phases and usage counters a summary shows, in display order. */
export const MODEL_PHASES = Phase.options;
export const PHASES = [...MODEL_PHASES, "execution"] as const;
export const USAGE_COUNTERS = ["input", "cache_read", "cache_write", "output"] as const;

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

export function summarizeReport(named: NamedReport): ReportSummary {
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

// ---- the summary in words (shared by the text and HTML renderers) ----

/** Why a report shows no cost. */
export function missingCost(s: ReportSummary): string {
  return s.kind === "aggregate"
    ? "n/a — an aggregate carries no cost (see each run's report)"
    : s.server_timings
    ? "n/a — a local model: its cost is tokens and seconds (server time)"
    : "n/a — no price for this run's model";
}

/** A run's verification in words: whether its final revision's tests ran and passed. */
export function formatVerified(s: ReportSummary): string {
  return s.verified === null ? NONE : s.verified ? "verified" : "NOT verified";
}

export const NOT_REPORTED = "not reported";
export const NONE = "—";

export function formatOutcome(s: ReportSummary): string {
  if (s.outcome !== null) return s.outcome;
  const parts = Object.entries(s.outcomes).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${n} ${k}`);
  return `${s.runs} runs: ${parts.join(", ") || "none"}`;
}

export function describeUsageScope(s: ReportSummary): string {
  if (s.usage_scope === "final") return "final (the run ended normally)";
  if (s.usage_scope === "partial") return "partial (observed before the run ended with an error)";
  return s.kind === "aggregate" ? "sum over all runs" : "sum over all calls";
}
