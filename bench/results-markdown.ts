// Renders bench/RESULTS.md from the benchmark's results.
import type { Anatomy } from "./anatomy.ts";
import type { BenchResults } from "./results.ts";
import { type Contender, CONTENDERS } from "./compare.ts";
import type { Comparison } from "./comparison.ts";
import {
  ANTHROPIC,
  ANTHROPIC_LOOKBACK_BLOCKS,
  ANTHROPIC_MODEL,
  COST_SECTIONS,
  type CostModel,
  minCacheTokens,
  OPENAI_CACHED,
} from "./cost.ts";
import type { SystemSummary } from "./summarize.ts";
import { SYSTEMS } from "./workloads.ts";
import { renderClosingNote, renderProtocols } from "./protocols-markdown.ts";

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const fix = (
  n: number | null | undefined,
  digits = 3,
) => (n === null || n === undefined || Number.isNaN(n) ? "n/a" : n.toFixed(digits));
const pct = (part: number, whole: number) => (whole === 0 ? "n/a" : `${((100 * part) / whole).toFixed(1)} %`);
const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

/** A Markdown table; the first `textColumns` columns are left-aligned, the rest (figures) right-aligned. */
function table(header: string[], rows: string[][], { textColumns = 1 }: { textColumns?: number } = {}): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map((_, i) => (i < textColumns ? "---" : "---:"))), ...rows.map(line)].join("\n");
}

function systemRows(columns: SystemSummary[]): string[][] {
  const row = (label: string, cell: (s: SystemSummary) => string, target = "") => [label, ...columns.map(cell), target];
  return [
    row("runs", (s) => int(s.runs)),
    row("model calls (each policy)", (s) => int(s.model_calls)),
    row("policies agree (outcome, execution reports)", (s) => `${s.agreeing} / ${s.runs}`, "all"),
    row("outcomes", (s) => Object.entries(s.outcomes).map(([k, v]) => `${v} ${k}`).join(", ")),
    row("Σ legacy request bytes", (s) => int(s.legacy_bytes)),
    row("Σ bounded request bytes", (s) => int(s.bounded_bytes)),
    row("**aggregate ratio** Σ bounded / Σ legacy", (s) => `**${fix(s.aggregate_ratio)}**`, "≤ 0.55 (mini-swe-agent)"),
    row("median per-run ratio", (s) => fix(s.median_ratio)),
    row("runs never over 48 KiB under legacy", (s) => int(s.small.runs)),
    row("ratio on those runs, Σ bounded / Σ legacy", (s) => fix(s.small.ratio)),
    row(
      "**… runs among them over 1.03** (worst ratio)",
      (s) => (s.small.worst ? `**${s.small.over_3_percent}** (${fix(s.small.worst.ratio)})` : "–"),
      "0 (each ≤ 1.03)",
    ),
    row("max legacy request bytes", (s) => int(s.max_legacy_request)),
    row("**max bounded request bytes**", (s) => `**${int(s.max_bounded_request)}**`, "≤ 65,536"),
    row("**checkpoints per 100 calls** (bounded)", (s) => `**${fix(s.checkpoints_per_100_calls, 2)}**`, "≤ 4"),
    row("prefix changes per 100 calls (bounded)", (s) => fix(s.prefix_changes_per_100_calls, 2), "≤ 4"),
    row(
      "last legacy request / original history, median [min–max]",
      (
        s,
      ) => (s.legacy_vs_history
        ? `${fix(s.legacy_vs_history.median, 2)} [${fix(s.legacy_vs_history.min, 2)}–${
          fix(s.legacy_vs_history.max, 2)
        }]`
        : "n/a"),
      "≈ 1 (±25 %)",
    ),
    row("replay throughput, calls/s (both policies)", (s) => int(s.calls_per_second ?? 0)),
  ];
}

function anatomyRows(columns: Anatomy[]): string[][] {
  const row = (label: string, part: (a: Anatomy) => number) => [
    label,
    ...columns.map((a) => `${int(a.requests ? part(a) / a.requests : 0)} (${pct(part(a), a.bytes)})`),
  ];
  return [
    row("whole request", (a) => a.bytes),
    row("response schema", (a) => a.parts.response_schema),
    row("instructions + intent + tasks (prefix)", (a) => a.parts.instructions + a.parts.intent + a.parts.tasks),
    row("checkpoint (prefix)", (a) => a.parts.checkpoint),
    row("retained events", (a) => a.parts.events),
    row("… output shown in previews", (a) => a.events.shown),
    row("… preview framing (ref, bytes, keys)", (a) => a.events.framing),
    row("… event metadata (step, action, inline args and reason, status)", (a) => a.events.metadata),
    row("newest event's larger view", (a) => a.parts.newest),
    row("working state", (a) => a.parts.working_state),
    row("candidates", (a) => a.parts.candidates),
    row("lookup responses", (a) => a.parts.lookups),
    row("JSON envelope", (a) => a.parts.envelope),
  ];
}

function overheadRows(columns: { legacy: Anatomy; bounded: Anatomy }[]): string[][] {
  const rows: [string, (l: Anatomy, b: Anatomy) => number][] = [
    ["legacy request", (l) => l.bytes],
    ["bounded request", (_, b) => b.bytes],
    ["**difference** (bounded − legacy)", (l, b) => b.bytes - l.bytes],
    ["… working state section", (_, b) => b.parts.working_state],
    ["… checkpoint section", (_, b) => b.parts.checkpoint],
    ["… events section (bounded − legacy)", (l, b) => b.parts.events - l.parts.events],
    ["…… preview framing on whole outputs", (_, b) => b.events.framingWhole],
    ["…… preview framing on cut outputs", (_, b) => b.events.framing - b.events.framingWhole],
    ["…… output not sent (cut previews, retired events)", (l, b) => b.parts.events - l.parts.events - b.events.framing],
    ["… lookup responses (bounded − legacy)", (l, b) => b.parts.lookups - l.parts.lookups],
    ["… envelope (bounded − legacy)", (l, b) => b.parts.envelope - l.parts.envelope],
  ];
  return rows.map(([label, value]) => [
    label,
    ...columns.map(({ legacy, bounded }) =>
      bounded.requests === 0
        ? "–"
        : `${int(value(legacy, bounded) / bounded.requests)} (${pct(value(legacy, bounded), legacy.bytes)})`
    ),
  ]);
}

export function renderResults(r: BenchResults): string {
  const m = r.machine;
  const columns = [...SYSTEMS.map((s) => r.systems[s]), r.overall];
  const anatomyColumns = [...SYSTEMS.map((s) => r.anatomy[s].bounded), r.anatomy.overall.bounded];
  const out: string[] = [];
  out.push(
    "# Benchmark results",
    "",
    "Generated by `bun run bench` (`bench/run.ts`); do not edit by hand. Every workload in `../shared/workloads` " +
      "(mini-swe-agent, SWE-agent) and `testdata/workflows` is imported and replayed in-process under both context " +
      "policies and both step protocols: recorded model answers, recorded execution reports. Ratios are the headline; absolute times depend " +
      "on the machine.",
    "",
    `- date: ${m.date}`,
    `- machine: ${m.cpu}, ${m.cores} cores, ${mib(m.memory_bytes)} memory, ${m.os}`,
    `- runtime: ${m.runtime}; binary: ${r.startup.version}`,
    `- the whole benchmark took ${r.bench_seconds.toFixed(1)} s`,
    "",
    "## Targets (request bytes)",
    "",
    table(["target", "figure", "status"], r.targets.map((t) => [t.target, t.figure, t.met ? "met" : "**not met**"]), {
      textColumns: 3,
    }),
    "",
    ...renderProtocols(r.protocols),
    ...renderClosingNote({
      protocols: r.protocols,
      boundedSections: r.comparison.shipped.bounded.sections.anthropic,
      frontier: r.frontier,
      boundedCost: r.comparison.shipped.bounded.cost_ratio.anthropic,
      workingStatePerCall: r.anatomy.small.bounded.requests === 0
        ? 0
        : r.anatomy.small.bounded.parts.working_state / r.anatomy.small.bounded.requests,
    }),
    ...renderComparison(r),
    "## Request bytes, per system",
    "",
    table(["", ...SYSTEMS, "overall", "target"], systemRows(columns)),
    "",
    'A run "never over 48 KiB" is one whose largest legacy request is at most 49,152 bytes (the retirement trigger). ' +
      "The original history is the UTF-8 text of what the original agent sent in its last model call: its messages " +
      "before its last answer (mini-swe-agent `messages`, SWE-agent `history`, demonstrations left out).",
    "",
    "## Request building, memory, start-up",
    "",
    "Bounded request build (`BoundedContext.build`) against one `JSON.stringify` of the same request, driven as the " +
      "loop drives it with the real steps of the mini-swe-agent workloads (selection and arguments requests), " +
      "measured while the archive holds the last 32 events up to each size; one warm-up round, then pooled rounds.",
    "",
    table(
      [
        "archived events",
        "requests",
        "build p50 µs",
        "build p99 µs",
        "stringify median µs",
        "p99 build / stringify",
        "p50 build / stringify",
        "builds that retired",
        "median request bytes",
      ],
      r.build_timing.map((t) => [
        int(t.archived),
        int(t.samples),
        fix(t.build_p50_us, 1),
        fix(t.build_p99_us, 1),
        fix(t.stringify_median_us, 1),
        `**${fix(t.p99_over_stringify, 2)}×**`,
        `${fix(t.p50_over_stringify, 2)}×`,
        int(t.checkpoint_builds),
        int(t.median_request_bytes),
      ]),
    ),
    "",
    `- import + replay of the ${r.systems["mini-swe-agent"].runs} mini-swe-agent runs under both policies: ` +
      `${r.mini_import_and_replay_seconds.toFixed(2)} s (import ${
        (r.import_ms["mini-swe-agent"] / 1000).toFixed(2)
      } s)`,
    `- replay throughput: ${
      int(r.overall.calls_per_second ?? 0)
    } model calls/s over all workloads, both policies, one thread`,
    `- peak RSS: ${mib(r.peak_rss.replay.bytes)} after replaying everything, ${mib(r.peak_rss.whole_bench.bytes)} ` +
      `for the whole benchmark (${r.peak_rss.whole_bench.source})`,
    `- start-up of \`dist/loom --version\`: median ${fix(r.startup.median_ms, 1)} ms, p90 ${
      fix(r.startup.p90_ms, 1)
    } ms ` +
      `over ${r.startup.runs} spawns${r.startup.built ? " (binary built for this run)" : ""}`,
    "",
    "## Where the bounded request bytes go",
    "",
    "Average bytes per bounded request, and the share of all bounded request bytes.",
    "",
    table(["", ...SYSTEMS, "overall"], anatomyRows(anatomyColumns)),
    "",
    `Preview floor: ${
      int(r.anatomy.overall.bounded.floor.checked)
    } previews checked (newest output ≥ min(size, 8 KiB), ` +
      `every other ≥ min(size, 512 B)), ${r.anatomy.overall.bounded.floor.violations} short` +
      (r.anatomy.overall.bounded.floor.worst
        ? ` (worst: ${r.anatomy.overall.bounded.floor.worst.shown} of ${r.anatomy.overall.bounded.floor.worst.needed} bytes)`
        : "") +
      ".",
    "",
    `## Overhead on the ${r.anatomy.small.runs} runs that stay under 48 KiB`,
    "",
    "Bytes per model call, and the share of the legacy bytes: what the bounded request adds (working state, the " +
      "reference and size around each preview) and what it leaves out (output past the preview limits).",
    "",
    table(
      ["", ...SYSTEMS.map((s) => `${s} (${r.anatomy[s].small.runs})`), `all (${r.anatomy.small.runs})`],
      overheadRows([...SYSTEMS.map((s) => r.anatomy[s].small), r.anatomy.small]),
    ),
    "",
    "Each of those runs, with what it would cost if previews that show the whole output were sent without their " +
      "reference and size, and also without the working state section:",
    "",
    table(
      [
        "system",
        "run",
        "calls",
        "ratio",
        "working state / call",
        "whole-preview framing / call",
        "ratio without that framing",
        "… and without working state",
      ],
      r.small_runs.map((run) => [
        run.system,
        run.name.length > 60 ? `${run.name.slice(0, 57)}…` : run.name,
        int(run.calls),
        run.ratio > 1.03 ? `**${fix(run.ratio)}**` : fix(run.ratio),
        int(run.working_state_per_call),
        int(run.whole_preview_framing_per_call),
        fix(run.ratio_without_whole_preview_framing),
        fix(run.ratio_without_framing_and_working_state),
      ]),
      { textColumns: 2 },
    ),
    "",
    "## Per run",
    "",
    table(
      [
        "system",
        "run",
        "outcome",
        "agree",
        "calls",
        "legacy bytes",
        "bounded bytes",
        "ratio",
        "max legacy",
        "max bounded",
        "checkpoints",
      ],
      r.runs.map((run) => [
        run.system,
        run.name.length > 60 ? `${run.name.slice(0, 57)}…` : run.name,
        run.outcome,
        run.policies_agree ? "yes" : "**no**",
        int(run.model_calls),
        int(run.legacy_bytes),
        int(run.bounded_bytes),
        fix(run.ratio),
        int(run.max_legacy_request),
        int(run.max_bounded_request),
        int(run.checkpoints),
      ]),
      { textColumns: 4 },
    ),
    "",
  );
  return out.join("\n");
}

const CONTENDER_LABELS: Record<Contender, string> = {
  legacy: "legacy",
  bounded: "bounded",
  "masking-5": "masking M=5 (peer)",
  "masking-10": "masking M=10 (peer)",
  clearing: "tool-result clearing (peer)",
};

function sideBySideRows(systems: [string, Comparison][]): string[][] {
  return systems.flatMap(([system, c]) =>
    CONTENDERS.map((name) => {
      const s = c[name];
      const cost = (m: CostModel) => `${fix(s.cost_ratio[m])}`;
      return [
        system,
        CONTENDER_LABELS[name],
        int(s.bytes),
        fix(s.bytes_ratio),
        cost("anthropic"),
        cost("gpt-4.1"),
        cost("gpt-5"),
        s.visibility.share === null ? "n/a" : fix(s.visibility.share),
        s.checkpoints_per_100_calls === null ? "–" : fix(s.checkpoints_per_100_calls, 2),
        int(s.max_request_bytes),
      ];
    })
  );
}

const SIDE_BY_SIDE_HEADER = [
  "system",
  "policy / peer",
  "Σ request bytes",
  "bytes / legacy",
  "Anthropic cost / legacy",
  "GPT-4.1 cost / legacy",
  "GPT-5 cost / legacy",
  "visibility",
  "checkpoints / 100 calls",
  "max request",
];

function comparisonSystems(r: BenchResults): [string, Comparison][] {
  return [
    ...SYSTEMS.filter((s) => r.comparison.systems[s].legacy.calls > 0).map((s): [string, Comparison] => [
      s === "synthetic openhands-calibrated" ? "synthetic openhands-calibrated (SYNTHETIC)" : s,
      r.comparison.systems[s],
    ]),
    ["all shipped workloads", r.comparison.shipped],
  ];
}

/** The side-by-side table `bun run bench` prints: policies × peers × systems. */
export function renderComparisonTable(r: BenchResults): string {
  return table(SIDE_BY_SIDE_HEADER, sideBySideRows(comparisonSystems(r)), { textColumns: 2 });
}

function sectionRows(c: Comparison, model: "anthropic" | "gpt-5"): string[][] {
  return COST_SECTIONS.map((section) => [
    section,
    ...CONTENDERS.map((name) => {
      const s = c[name];
      const part = s.sections[model][section] * s.cost[model];
      const legacyCost = c.legacy.cost[model];
      return `${pct(part, legacyCost)}`;
    }),
  ]);
}

export function renderComparison(r: BenchResults): string[] {
  const c = r.comparison.shipped;
  return [
    "## Side by side: bytes, cost under prompt caching, visibility",
    "",
    "Every workload replayed under `legacy` and `bounded`, and two peers rendered from legacy's requests in the same " +
    "TurnRequest shape (benchmark only, not in the CLI): observation masking (the last M outputs whole, older ones " +
    "a one-line placeholder; M = 5 and 10) and tool-result clearing as Anthropic's context editing does it (trigger " +
    "48 KiB, keep the last 3 results, clear at least 16 KiB, cleared results stay cleared).",
    "",
    "Effective input cost is computed on the provider bodies the adapters build, with tokens ≈ UTF-8 bytes / 4, and " +
    "shown as a ratio to legacy's (lower is cheaper):",
    "",
    `- **Anthropic** (${ANTHROPIC_MODEL}'s prices and minimum, from the model table): cache order tools → system → ` +
    "messages (tool_choice hashed in before the messages); a breakpoint writes its prefix when it is ≥ " +
    `${minCacheTokens(ANTHROPIC_MODEL).toLocaleString("en-US")} tokens, and hits when an earlier request of the run ` +
    `wrote the identical prefix ending at that block or up to ${ANTHROPIC_LOOKBACK_BLOCKS} blocks before it; write ` +
    `${ANTHROPIC.write}, read ${ANTHROPIC.read}, uncached 1.0.`,
    "- **OpenAI** (GPT-4.1, GPT-5 class): the longest prefix shared with an earlier request of the run, from 1,024 " +
    `tokens in 128-token steps, response format included (it keys the cache); cached ${OPENAI_CACHED["gpt-4.1"]} ` +
    `(GPT-4.1) or ${OPENAI_CACHED["gpt-5"]} (GPT-5); uncached 1.0.`,
    "- **No cache**: every token of the Anthropic body at 1.0.",
    "",
    "**Visibility**: for each step, the identifiers (paths, names, dotted symbols) in the action's arguments that " +
    "appeared in an earlier observation and not in the intent or instructions; the share of them present in the " +
    "request that produced the action (the checkpoint section excluded, so an index of names cannot raise it, and " +
    "the reason an arguments request repeats from its selection, the model's own words of the same step, which a " +
    "single-call request does not have; with that reason counted, as before, bounded's figure was 0.911). " +
    "Checkpoints: bounded's retirements; for clearing, its clearings.",
    "",
    renderComparisonTable(r),
    "",
    "Targets of this comparison (over the shipped workloads; the synthetic system is reported, never pooled):",
    "",
    table(
      ["target", "figure", "status"],
      r.comparison_targets.map((t) => [t.target, t.figure, t.met ? "met" : "**not met**"]),
      { textColumns: 3 },
    ),
    "",
    "### Where the cost goes (shipped workloads)",
    "",
    "Each section's cost as a share of **legacy's** total cost under the model, so a column sums to that " +
    "contender's cost ratio.",
    "",
    "Anthropic:",
    "",
    table(["section", ...CONTENDERS.map((n) => CONTENDER_LABELS[n])], sectionRows(c, "anthropic")),
    "",
    "GPT-5 (cached 0.10):",
    "",
    table(["section", ...CONTENDERS.map((n) => CONTENDER_LABELS[n])], sectionRows(c, "gpt-5")),
    "",
    `Cache reads: legacy ${pct(c.legacy.cached_share.anthropic ?? 0, 1)} of its input tokens (Anthropic), ` +
    `${pct(c.legacy.cached_share.openai ?? 0, 1)} (OpenAI); bounded ${pct(c.bounded.cached_share.anthropic ?? 0, 1)}` +
    `, ${pct(c.bounded.cached_share.openai ?? 0, 1)}.`,
    "",
    `**The floor of this design**: the tools and prefix, the candidates and the newest output cost bounded ` +
    `${fix(costFloor(c, "anthropic"))} of legacy under Anthropic and ${fix(costFloor(c, "gpt-5"))} under GPT-5 — ` +
    "the same whatever the tail holds (legacy pays the same prefix and about the same newest output). Every older " +
    "event and the working state come on top, so a cost of 0.40 would leave about " +
    `${fix(0.4 - costFloor(c, "anthropic"))} (Anthropic) for the whole retained tail, a tail several times smaller ` +
    "than the 32-48 KiB window the release note fixes.",
    "",
    ...renderFrontier(r),
  ];
}

/** Bounded's cost in the sections no tail can shrink, as a ratio to legacy's whole cost. */
function costFloor(c: Comparison, model: "anthropic" | "gpt-5"): number {
  const s = c.bounded.sections[model];
  const share = s["tools / response format"] + s.prefix + s.candidates + s.newest + s.lookups;
  return (share * c.bounded.cost[model]) / c.legacy.cost[model];
}

function renderFrontier(r: BenchResults): string[] {
  const systems = SYSTEMS.filter((s) => r.frontier.some((p) => p.visibility_by_system[s] != null));
  return [
    "### The frontier: what retained previews buy",
    "",
    "Bounded replayed with other previews of the retained events (the newest output still shows 8 KiB; the 48 KiB " +
    "trigger and 32 KiB target unchanged), over the shipped workloads, as ratios to legacy; visibility per system " +
    "in the last columns (the synthetic system is not in the pooled figures). The default gives an entering event " +
    "an eighth of the room left below the trigger, between 512 B and 2 KiB. Larger previews fill the window sooner, " +
    "so fewer events stay in the tail: what they add in the events they keep, they partly lose in the events they " +
    "retire, and every byte kept is read again on each call.",
    "",
    table(
      [
        "retained preview",
        "bytes",
        "Anthropic",
        "GPT-4.1",
        "GPT-5",
        "visibility",
        ...systems.map((s) => `visibility ${s}`),
        "checkpoints / 100 calls",
        "max request",
      ],
      r.frontier.map((p) => [
        p.previews,
        fix(p.bytes_ratio),
        fix(p.cost_ratio.anthropic),
        fix(p.cost_ratio["gpt-4.1"]),
        fix(p.cost_ratio["gpt-5"]),
        fix(p.visibility),
        ...systems.map((s) => fix(p.visibility_by_system[s])),
        fix(p.checkpoints_per_100_calls, 2),
        int(p.max_request_bytes),
      ]),
    ),
    "",
    ...renderRetirementTargets(r),
  ];
}

/** The note's numbers: what a smaller retirement target saves, and what it hides. */
function renderRetirementTargets(r: BenchResults): string[] {
  const points = r.retirement_targets ?? [];
  if (points.length === 0) return [];
  const systems = SYSTEMS.filter((s) => points.some((p) => p.visibility_by_system[s] != null));
  const [note] = points;
  const delta = (a: number | null, b: number | null) =>
    a === null || b === null ? "n/a" : `${a - b >= 0 ? "+" : "−"}${Math.abs(a - b).toFixed(3)}`;
  return [
    "### The note's numbers: a smaller retirement target",
    "",
    "Bounded replayed (two-call, default previews) with the retirement target at 24 and 16 KiB instead of the " +
    "release note's 32 KiB — the 48 KiB trigger, the 64 KiB ceiling and the previews unchanged — against the same " +
    "legacy runs. A lower target retires more events per checkpoint: later requests re-read a shorter tail, and the " +
    "model sees fewer older events. Bounded's own figures everywhere else in this file are the 32 KiB ones. Cost " +
    "and visibility as ratios to legacy over the shipped workloads, the change against 32 KiB beside them, and " +
    "visibility per system:",
    "",
    table(
      [
        "retirement target",
        "bytes",
        "Anthropic 5m",
        "change",
        "GPT-5",
        "change",
        "visibility",
        "change",
        ...systems.map((s) => `visibility ${s}`),
        "checkpoints / 100 calls",
      ],
      points.map((p) => [
        p.previews,
        fix(p.bytes_ratio),
        fix(p.cost_ratio.anthropic),
        delta(p.cost_ratio.anthropic, note.cost_ratio.anthropic),
        fix(p.cost_ratio["gpt-5"]),
        delta(p.cost_ratio["gpt-5"], note.cost_ratio["gpt-5"]),
        fix(p.visibility),
        delta(p.visibility, note.visibility),
        ...systems.map((s) => fix(p.visibility_by_system[s])),
        fix(p.checkpoints_per_100_calls, 2),
      ]),
    ),
    "",
  ];
}

const STARTUP = /<!-- startup -->[\s\S]*?<!-- \/startup -->/;

/** `fresh` with the start-up section (between its markers) taken verbatim from `previous`, when it has one. */
export function keepStartupSection(fresh: string, previous: string): string {
  const kept = previous.match(STARTUP);
  if (!kept) return fresh;
  if (STARTUP.test(fresh)) return fresh.replace(STARTUP, () => kept[0]);
  return `${fresh.trimEnd()}\n\n${kept[0]}\n`;
}
