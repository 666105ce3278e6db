// The shape of bench/results.json: what run.ts measures and results-markdown.ts renders (a module of its own, so the
// renderer does not import the script that runs it).
import type { Anatomy } from "./anatomy.ts";
import type { Comparison, ComparisonTarget, FrontierPoint } from "./comparison.ts";
import type { ProtocolResults } from "./protocols-markdown.ts";
import type { Machine, PeakRss, Startup } from "./machine.ts";
import type { BuildTiming, SystemSummary, Target } from "./summarize.ts";
import type { System } from "./workloads.ts";

type AnatomySum = { runs: number; legacy: Anatomy; bounded: Anatomy };

export type BenchResults = {
  machine: Machine;
  bench_seconds: number;
  systems: Record<System, SystemSummary>;
  overall: SystemSummary;
  import_ms: Record<System, number>;
  mini_import_and_replay_seconds: number;
  anatomy: Record<System, AnatomySum & { small: AnatomySum }> & { overall: AnatomySum; small: AnatomySum };
  small_runs: {
    system: System;
    name: string;
    calls: number;
    ratio: number;
    working_state_per_call: number;
    whole_preview_framing_per_call: number;
    ratio_without_whole_preview_framing: number;
    ratio_without_framing_and_working_state: number;
  }[];
  build_timing: BuildTiming[];
  peak_rss: { replay: ReturnType<PeakRss["read"]>; whole_bench: ReturnType<PeakRss["read"]> };
  startup: Startup;
  targets: Target[];
  comparison: {
    systems: Record<System, Comparison>;
    shipped: Comparison;
    runs: { system: System; name: string; [contender: string]: unknown }[];
  };
  comparison_targets: ComparisonTarget[];
  /** Both step protocols × policies × peers, the floors, the price scenarios. */
  protocols: ProtocolResults;
  frontier: FrontierPoint[];
  /** Bounded with the note's 32 KiB retirement target and with 24 and 16 KiB (two-call; the rest unchanged). */
  retirement_targets: FrontierPoint[];
  runs: {
    system: System;
    name: string;
    outcome: string;
    policies_agree: boolean;
    model_calls: number;
    legacy_bytes: number;
    bounded_bytes: number;
    ratio: number;
    max_legacy_request: number;
    max_bounded_request: number;
    checkpoints: number;
    history_bytes: number | null;
    last_legacy_request: number;
  }[];
};
