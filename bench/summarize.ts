// From per-run numbers to the benchmark's figures: per system and overall, and each target from issue 5 with
// met / not met.
import { CEILING_BYTES, RETIRE_TRIGGER_BYTES } from "../lib/context/budget.ts";
import { addAnatomy, type Anatomy, emptyAnatomy } from "./anatomy.ts";
import type { SizeSamples } from "./build-timing.ts";
import { median, quantile, ratio, sum } from "./stats.ts";
import type { RunNumbers, System } from "./workloads.ts";

export type RunRow = {
  system: System;
  name: string;
  legacy: RunNumbers;
  bounded: RunNumbers;
  historyBytes: number | null;
  /** Replay time of both policies, ms. */
  replayMs: number;
};

/** The policies agree: same outcome, same execution reports, same number of model calls. */
export const agrees = (row: RunRow): boolean =>
  row.legacy.outcome === row.bounded.outcome && row.legacy.reports === row.bounded.reports &&
  row.legacy.calls === row.bounded.calls;

/** A run whose legacy requests never pass the 48 KiB retirement trigger. */
export const staysSmall = (row: RunRow): boolean => row.legacy.maxRequestBytes <= RETIRE_TRIGGER_BYTES;

export type SystemSummary = {
  runs: number;
  agreeing: number;
  outcomes: Record<string, number>;
  model_calls: number;
  legacy_bytes: number;
  bounded_bytes: number;
  aggregate_ratio: number | null;
  median_ratio: number | null;
  small: {
    runs: number;
    legacy_bytes: number;
    bounded_bytes: number;
    ratio: number | null;
    /** The run with the highest bounded/legacy ratio among them, and how many pass 1.03. */
    worst: { name: string; ratio: number } | null;
    over_3_percent: number;
  };
  max_bounded_request: number;
  max_legacy_request: number;
  checkpoints: number;
  checkpoints_per_100_calls: number | null;
  prefix_changes_per_100_calls: number | null;
  /** Last legacy request / the original agent's message history (SPEC 3.1: within about ±25 %). */
  legacy_vs_history: { runs: number; median: number; min: number; max: number } | null;
  replay_ms: number;
  calls_per_second: number | null;
};

export function summarizeSystem(rows: readonly RunRow[]): SystemSummary {
  const outcomes: Record<string, number> = {};
  for (const r of rows) outcomes[r.bounded.outcome] = (outcomes[r.bounded.outcome] ?? 0) + 1;
  const legacy = sum(rows.map((r) => r.legacy.requestBytes));
  const bounded = sum(rows.map((r) => r.bounded.requestBytes));
  const calls = sum(rows.map((r) => r.bounded.calls));
  const small = rows.filter(staysSmall);
  const smallLegacy = sum(small.map((r) => r.legacy.requestBytes));
  const smallBounded = sum(small.map((r) => r.bounded.requestBytes));
  const honest = rows
    .filter((r) => r.historyBytes)
    .map((r) => r.legacy.callBytes[r.legacy.callBytes.length - 1] / r.historyBytes!);
  const replayMs = sum(rows.map((r) => r.replayMs));
  const checkpoints = sum(rows.map((r) => r.bounded.checkpoints));
  return {
    runs: rows.length,
    agreeing: rows.filter(agrees).length,
    outcomes,
    model_calls: calls,
    legacy_bytes: legacy,
    bounded_bytes: bounded,
    aggregate_ratio: ratio(bounded, legacy),
    median_ratio: rows.length ? median(rows.map((r) => r.bounded.requestBytes / r.legacy.requestBytes)) : null,
    small: {
      runs: small.length,
      legacy_bytes: smallLegacy,
      bounded_bytes: smallBounded,
      ratio: ratio(smallBounded, smallLegacy),
      worst: small.reduce<{ name: string; ratio: number } | null>((worst, r) => {
        const x = r.bounded.requestBytes / r.legacy.requestBytes;
        return worst && worst.ratio >= x ? worst : { name: r.name, ratio: x };
      }, null),
      over_3_percent: small.filter((r) => r.bounded.requestBytes > 1.03 * r.legacy.requestBytes).length,
    },
    max_bounded_request: Math.max(0, ...rows.map((r) => r.bounded.maxRequestBytes)),
    max_legacy_request: Math.max(0, ...rows.map((r) => r.legacy.maxRequestBytes)),
    checkpoints,
    checkpoints_per_100_calls: calls ? (100 * checkpoints) / calls : null,
    prefix_changes_per_100_calls: calls ? (100 * sum(rows.map((r) => r.bounded.prefixChanges))) / calls : null,
    legacy_vs_history: honest.length
      ? { runs: honest.length, median: median(honest), min: Math.min(...honest), max: Math.max(...honest) }
      : null,
    replay_ms: replayMs,
    // Both policies' calls over both policies' replay time.
    calls_per_second: replayMs > 0 ? (2 * calls) / (replayMs / 1000) : null,
  };
}

export type BuildTiming = {
  archived: number;
  samples: number;
  build_p50_us: number;
  build_p99_us: number;
  stringify_median_us: number;
  p99_over_stringify: number;
  p50_over_stringify: number;
  checkpoint_builds: number;
  median_request_bytes: number;
};

export function summarizeBuildTimes(samples: readonly SizeSamples[]): BuildTiming[] {
  return samples.map((s) => {
    const stringify = median(s.stringifyMs);
    return {
      archived: s.archived,
      samples: s.buildMs.length,
      build_p50_us: 1000 * quantile(s.buildMs, 0.5),
      build_p99_us: 1000 * quantile(s.buildMs, 0.99),
      stringify_median_us: 1000 * stringify,
      p99_over_stringify: quantile(s.buildMs, 0.99) / stringify,
      p50_over_stringify: quantile(s.buildMs, 0.5) / stringify,
      checkpoint_builds: s.checkpoints,
      median_request_bytes: median(s.requestBytes),
    };
  });
}

/** Build cost does not grow with the archive: p50 and p99 at each size within 1.5x of those at the smallest. */
export function isFlat(timings: readonly BuildTiming[]): boolean {
  const [first, ...rest] = timings;
  return rest.every((t) => t.build_p50_us <= 1.5 * first.build_p50_us && t.build_p99_us <= 1.5 * first.build_p99_us);
}

export type Target = { target: string; figure: string; met: boolean };

export function evaluateTargets(
  { systems, overall, timings, miniSeconds, anatomy }: {
    systems: Record<System, SystemSummary>;
    overall: SystemSummary;
    timings: BuildTiming[];
    miniSeconds: number;
    anatomy: Anatomy;
  },
): Target[] {
  const mini = systems["mini-swe-agent"];
  const fmt = (n: number | null, digits = 3) => (n === null ? "n/a" : n.toFixed(digits));
  const worstTiming = Math.max(...timings.map((t) => t.p99_over_stringify));
  return [
    {
      target: `Every bounded request <= ${CEILING_BYTES.toLocaleString("en-US")} bytes on every workload`,
      figure: `max ${overall.max_bounded_request.toLocaleString("en-US")} B over ${overall.runs} runs`,
      met: overall.max_bounded_request <= CEILING_BYTES,
    },
    {
      target: "Aggregate bounded/legacy on mini-swe-agent <= 0.55, previews at the SPEC floor",
      figure:
        `${fmt(mini.aggregate_ratio)}; floor held on ${anatomy.floor.checked.toLocaleString("en-US")} previews, ` +
        `${anatomy.floor.violations} short`,
      met: mini.aggregate_ratio !== null && mini.aggregate_ratio <= 0.55 && anatomy.floor.violations === 0,
    },
    {
      target: "Runs under 48 KiB under legacy cost <= 3% more under bounded (each run's ratio <= 1.03)",
      figure:
        `${overall.small.over_3_percent} of ${overall.small.runs} runs over 1.03, worst ${
          fmt(overall.small.worst?.ratio ?? null)
        } ` +
        `(${overall.small.worst?.name ?? "none"}); Σ over the ${overall.small.runs}: ${fmt(overall.small.ratio)}`,
      met: overall.small.over_3_percent === 0,
    },
    {
      target: "<= 4 checkpoints (prefix changes) per 100 calls",
      figure: `${fmt(overall.checkpoints_per_100_calls, 2)} checkpoints, ${
        fmt(overall.prefix_changes_per_100_calls, 2)
      } prefix changes`,
      met: (overall.checkpoints_per_100_calls ?? 0) <= 4 && (overall.prefix_changes_per_100_calls ?? 0) <= 4,
    },
    {
      target: "Request build p99 <= 5x one JSON.stringify of the same request",
      figure: timings.map((t) => `${t.archived}: ${t.p99_over_stringify.toFixed(2)}x`).join(", "),
      met: worstTiming <= 5,
    },
    {
      target: "…flat from 64 to 4,096 archived events (p50 and p99 within 1.5x of 64's)",
      figure: timings.map((t) => `${t.archived}: ${t.build_p50_us.toFixed(1)}/${t.build_p99_us.toFixed(1)} µs`).join(
        ", ",
      ),
      met: isFlat(timings),
    },
    {
      target: "Importing and replaying all 80 mini-swe-agent runs under both policies takes seconds (< 60 s)",
      figure: `${miniSeconds.toFixed(2)} s for ${mini.runs} runs`,
      met: miniSeconds < 60,
    },
  ];
}

/** Anatomy of several runs' requests, summed. */
export function sumAnatomy(list: readonly Anatomy[]): Anatomy {
  const total = emptyAnatomy();
  for (const a of list) addAnatomy(total, a);
  return total;
}
