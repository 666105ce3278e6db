// `bun run bench [--workloads DIR]` (default ../shared/workloads, or LOOM_WORKLOADS): replays every shipped workload
// under legacy and bounded, measures request building, memory and the binary's start-up, and writes bench/RESULTS.md
// and bench/results.json. Ratios are the headline; absolute times depend on the machine.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Anatomy, MeasuringProvider } from "./anatomy.ts";
import { compareRecording, type ContenderRun, measureBounded, withRetirementTarget } from "./compare.ts";
import { type ComparisonRow, evaluateComparisonTargets, summarizeComparison, summarizeFrontier } from "./comparison.ts";
import { NEWEST_PREVIEW_BYTES, PREVIEW_MODES, type PreviewSizes } from "../lib/context/render-event.ts";
import { DEFAULT_PREVIEW_MODE } from "../lib/policy.ts";
import { evaluateProtocolTargets, type ProtocolRow, summarizeProtocols } from "./protocols.ts";

const DEFAULT_PREVIEWS_LABEL = "512 B-2 KiB by room (default; --previews balanced)";
/** Retained previews the frontier measures besides the default: the floor alone, fixed larger sizes, and wide. */
const FRONTIER_PREVIEWS: [string, PreviewSizes][] = [
  ...[512, 1024, 2048, 4096].map((size): [string, PreviewSizes] => [
    size === 512 ? "512 B (the floor; --previews compact)" : `${size / 1024} KiB`,
    { retained: size, upTo: size, newest: NEWEST_PREVIEW_BYTES },
  ]),
  ["1-4 KiB by room (--previews wide)", PREVIEW_MODES.wide],
];
import { measureBuildTimes, stepsOf } from "./build-timing.ts";
import { describeMachine, measureStartup, PeakRss } from "./machine.ts";
import type { BenchResults } from "./results.ts";
import { keepStartupSection, renderComparisonTable, renderResults } from "./results-markdown.ts";
import { keepLiveSection } from "./live-markdown.ts";
import { keepSessionsSection } from "./sessions-markdown.ts";
import {
  evaluateTargets,
  type RunRow,
  staysSmall,
  sumAnatomy,
  summarizeBuildTimes,
  summarizeSystem,
  type SystemSummary,
} from "./summarize.ts";
import {
  listWorkloads,
  loadWorkload,
  missingWorkloads,
  replayRecording,
  runNumbers,
  type System,
  SYSTEMS,
  type Workload,
  workloadsDir,
} from "./workloads.ts";

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
const started = new Date();
const t0 = performance.now();
const peak = new PeakRss();
const workloads = listWorkloads(workloadsFolder());

function workloadsFolder(): string {
  let dir: string;
  try {
    dir = workloadsDir({ argv: process.argv.slice(2) });
  } catch (error) {
    log((error as Error).message);
    process.exit(2);
  }
  const missing = missingWorkloads(dir);
  if (missing) {
    log(missing);
    process.exit(2);
  }
  return dir;
}

// 1. Import and replay everything under both policies, timed, with nothing else running in the loop.
const rows: RunRow[] = [];
const importMs = Object.fromEntries(SYSTEMS.map((s) => [s, 0])) as Record<System, number>;
for (const workload of workloads) {
  const i0 = performance.now();
  const loaded = loadWorkload(workload);
  const i1 = performance.now();
  const legacy = runNumbers(await replayRecording(loaded.recording, "legacy"));
  const bounded = runNumbers(await replayRecording(loaded.recording, "bounded"));
  const i2 = performance.now();
  importMs[workload.system] += i1 - i0;
  rows.push({
    system: workload.system,
    name: workload.name,
    legacy,
    bounded,
    historyBytes: loaded.historyBytes,
    replayMs: i2 - i1,
  });
  peak.sample();
}
const replayPeak = peak.read();
log(`replayed ${rows.length} workloads under both policies in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const bySystem = (system: System) => rows.filter((r) => r.system === system);
const systems = Object.fromEntries(SYSTEMS.map((s) => [s, summarizeSystem(bySystem(s))])) as Record<
  System,
  SystemSummary
>;
// Overall figures are over the shipped workloads; the synthetic system is reported beside them, never pooled.
const isShipped = (s: System) => s !== "synthetic openhands-calibrated";
const overall = summarizeSystem(rows.filter((r) => isShipped(r.system)));

// 2. Where the bytes go: every request of every run measured section by section (a second, untimed replay).
const anatomy: { workload: Workload; legacy: Anatomy; bounded: Anatomy }[] = [];
for (const workload of workloads) {
  const { recording } = loadWorkload(workload);
  const measured = { legacy: null as MeasuringProvider | null, bounded: null as MeasuringProvider | null };
  for (const policy of ["legacy", "bounded"] as const) {
    await replayRecording(recording, policy, { wrap: (p) => (measured[policy] = new MeasuringProvider(p)) });
  }
  anatomy.push({ workload, legacy: measured.legacy!.anatomy, bounded: measured.bounded!.anatomy });
  // The section-by-section sums must add up to what the context reports counted: request bytes are exact.
  const row = rows.find((r) => r.system === workload.system && r.name === workload.name)!;
  for (const policy of ["legacy", "bounded"] as const) {
    if (measured[policy]!.anatomy.bytes !== row[policy].requestBytes) {
      throw new Error(
        `${workload.name} (${policy}): measured ${measured[policy]!.anatomy.bytes} request bytes, the report counted ${
          row[policy].requestBytes
        }`,
      );
    }
  }
}
peak.sample();
const small = new Set(rows.filter(staysSmall).map((r) => `${r.system}/${r.name}`));
const anatomyOf = (filter: (w: Workload) => boolean) => {
  const chosen = anatomy.filter((a) => filter(a.workload));
  return {
    runs: chosen.length,
    legacy: sumAnatomy(chosen.map((a) => a.legacy)),
    bounded: sumAnatomy(chosen.map((a) => a.bounded)),
  };
};
const isSmall = (w: Workload) => small.has(`${w.system}/${w.name}`);
const anatomies = {
  ...(Object.fromEntries(
    SYSTEMS.map((
      s,
    ) => [s, { ...anatomyOf((w) => w.system === s), small: anatomyOf((w) => w.system === s && isSmall(w)) }]),
  ) as Record<System, ReturnType<typeof anatomyOf> & { small: ReturnType<typeof anatomyOf> }>),
  overall: anatomyOf((w) => isShipped(w.system)),
  small: anatomyOf((w) => isShipped(w.system) && isSmall(w)),
};
// What the runs under 48 KiB would cost with the preview wrapper dropped where the whole output is shown, and also
// without the working state: the two parts a lean bounded request could still shed there.
const smallRuns = anatomy
  .filter((a) => isSmall(a.workload))
  .map(({ workload, legacy, bounded }) => ({
    system: workload.system,
    name: workload.name,
    calls: bounded.requests,
    ratio: bounded.bytes / legacy.bytes,
    working_state_per_call: bounded.parts.working_state / bounded.requests,
    whole_preview_framing_per_call: bounded.events.framingWhole / bounded.requests,
    ratio_without_whole_preview_framing: (bounded.bytes - bounded.events.framingWhole) / legacy.bytes,
    ratio_without_framing_and_working_state:
      (bounded.bytes - bounded.events.framingWhole - bounded.parts.working_state) / legacy.bytes,
  }));
log(`measured ${anatomies.overall.bounded.requests + anatomies.overall.legacy.requests} requests section by section`);

// 2b. Side by side with the peers: bytes, effective cost under the caching models, information visibility.
const comparisonRows: ComparisonRow[] = [];
for (const workload of workloads) {
  comparisonRows.push({
    system: workload.system,
    name: workload.name,
    runs: await compareRecording(loadWorkload(workload).recording),
  });
}
peak.sample();
const comparison = {
  systems: Object.fromEntries(
    SYSTEMS.map((s) => [s, summarizeComparison(comparisonRows.filter((r) => r.system === s))]),
  ) as Record<System, ReturnType<typeof summarizeComparison>>,
  shipped: summarizeComparison(comparisonRows.filter((r) => isShipped(r.system))),
  runs: comparisonRows.map((r) => ({
    system: r.system,
    name: r.name,
    ...Object.fromEntries(
      Object.entries(r.runs).map(([c, run]) => [c, {
        bytes: run.bytes,
        cost: run.costs.cost,
        visibility: run.visibility,
        checkpoints: run.checkpoints,
      }]),
    ),
  })),
};
const comparisonTargets = evaluateComparisonTargets({ shipped: comparison.shipped, systems: comparison.systems });
log(`compared ${comparisonRows.length} workloads with the peers under the caching cost models`);

// 2d. Both step protocols: the same comparison with each step's answers merged into one call (single-call).
const protocolRows: ProtocolRow[] = [];
for (const [i, workload] of workloads.entries()) {
  const { recording } = loadWorkload(workload);
  protocolRows.push({
    system: workload.system,
    name: workload.name,
    runs: {
      "two-call": comparisonRows[i].runs,
      "single-call": await compareRecording(recording, { protocol: "single-call" }),
    },
  });
}
peak.sample();
const protocolSystems = Object.fromEntries(
  SYSTEMS.map((s) => [s, summarizeProtocols(protocolRows.filter((r) => r.system === s))]),
) as Record<System, ReturnType<typeof summarizeProtocols>>;
const protocolShipped = summarizeProtocols(protocolRows.filter((r) => isShipped(r.system)));
const protocols = {
  shipped: protocolShipped.cells,
  systems: Object.fromEntries(SYSTEMS.map((s) => [s, protocolSystems[s].cells])) as Record<
    System,
    typeof protocolShipped.cells
  >,
  floors: {
    shipped: protocolShipped.floors,
    systems: Object.fromEntries(SYSTEMS.map((s) => [s, protocolSystems[s].floors])) as Record<
      System,
      typeof protocolShipped.floors
    >,
  },
  targets: evaluateProtocolTargets({
    shipped: protocolShipped.cells,
    systems: Object.fromEntries(
      SYSTEMS.filter((s) => protocolRows.some((r) => r.system === s)).map((s) => [s, protocolSystems[s].cells]),
    ),
  }),
};
log(`compared ${protocolRows.length} workloads under both step protocols`);

// 2c. The frontier: bounded with other retained previews (the 48/32 KiB rule unchanged), against the same legacy runs.
const variants = new Map<string, ContenderRun[]>([[DEFAULT_PREVIEWS_LABEL, comparisonRows.map((r) => r.runs.bounded)]]);
for (const [label, previews] of FRONTIER_PREVIEWS) {
  const runs: ContenderRun[] = [];
  for (const workload of workloads) runs.push(await measureBounded(loadWorkload(workload).recording, previews));
  variants.set(label, runs);
}
const frontier = summarizeFrontier(comparisonRows, variants, isShipped);
log(`measured bounded at ${variants.size} retained-preview sizes`);

// 2e. The note's numbers: bounded with a smaller retirement target (the 48 KiB trigger, the ceiling and the default
// previews unchanged), two-call, against the same legacy runs; bounded's own figures above stay the 32 KiB ones.
const targetVariants = new Map<string, ContenderRun[]>([
  ["32 KiB (the note's; bounded)", comparisonRows.map((r) => r.runs.bounded)],
]);
for (const kib of [24, 16]) {
  const runs: ContenderRun[] = [];
  await withRetirementTarget(kib * 1024, async () => {
    for (const workload of workloads) {
      runs.push(await measureBounded(loadWorkload(workload).recording, PREVIEW_MODES[DEFAULT_PREVIEW_MODE]));
    }
  });
  targetVariants.set(`${kib} KiB`, runs);
}
const retirementTargets = summarizeFrontier(comparisonRows, targetVariants, isShipped);
log("measured bounded at 24 and 16 KiB retirement targets");

// 3. Request-build cost against JSON.stringify, with 64, 1,024 and 4,096 archived events (real mini-swe-agent steps).
const mini = workloads.filter((w) => w.system === "mini-swe-agent").map((w) => loadWorkload(w).recording);
const timingSamples = measureBuildTimes({
  instructions: mini[0].header.slice.instructions,
  intent: mini[0].header.slice.intent,
  steps: stepsOf(mini),
});
mini.length = 0;
const timings = summarizeBuildTimes(timingSamples);
log("measured request building");

// 4. The binary's start-up.
const startup = measureStartup();
const finalPeak = peak.read();
log(`start-up ${startup.median_ms.toFixed(1)} ms (median of ${startup.runs})`);

const miniSeconds = (importMs["mini-swe-agent"] + systems["mini-swe-agent"].replay_ms) / 1000;
const targets = evaluateTargets({ systems, overall, timings, miniSeconds, anatomy: anatomies.overall.bounded });
const results: BenchResults = {
  machine: describeMachine(started),
  bench_seconds: (performance.now() - t0) / 1000,
  systems,
  overall,
  import_ms: importMs,
  mini_import_and_replay_seconds: miniSeconds,
  anatomy: anatomies,
  small_runs: smallRuns,
  build_timing: timings,
  peak_rss: { replay: replayPeak, whole_bench: finalPeak },
  startup,
  targets,
  comparison,
  comparison_targets: comparisonTargets,
  protocols,
  frontier,
  retirement_targets: retirementTargets,
  runs: rows.map((r) => ({
    system: r.system,
    name: r.name,
    outcome: r.bounded.outcome,
    policies_agree: r.legacy.outcome === r.bounded.outcome && r.legacy.reports === r.bounded.reports,
    model_calls: r.bounded.calls,
    legacy_bytes: r.legacy.requestBytes,
    bounded_bytes: r.bounded.requestBytes,
    ratio: r.bounded.requestBytes / r.legacy.requestBytes,
    max_legacy_request: r.legacy.maxRequestBytes,
    max_bounded_request: r.bounded.maxRequestBytes,
    checkpoints: r.bounded.checkpoints,
    history_bytes: r.historyBytes,
    last_legacy_request: r.legacy.callBytes[r.legacy.callBytes.length - 1] ?? 0,
  })),
};
results.bench_seconds = (performance.now() - t0) / 1000;

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
writeFileSync(here("results.json"), `${JSON.stringify(results, null, 2)}\n`);
// The start-up, live and sessions sections between their markers are kept verbatim from the previous RESULTS.md.
const previous = existsSync(here("RESULTS.md")) ? readFileSync(here("RESULTS.md"), "utf8") : "";
writeFileSync(
  here("RESULTS.md"),
  keepSessionsSection(keepLiveSection(keepStartupSection(renderResults(results), previous), previous), previous),
);
log(`wrote bench/RESULTS.md and bench/results.json in ${results.bench_seconds.toFixed(1)} s`);
process.stdout.write(`${renderComparisonTable(results)}\n`);
for (const t of [...targets, ...comparisonTargets, ...protocols.targets]) {
  log(`${t.met ? "met    " : "NOT MET"}  ${t.target}: ${t.figure}`);
}
