// Renders the step-protocol section of bench/RESULTS.md: protocol × policy × peer, the floor, the price scenarios.
import type { StepProtocol } from "../lib/policy.ts";
import type { Contender } from "./compare.ts";
import { PRICE_SCENARIOS } from "./prices.ts";
import type { FloorSummary, ProtocolCell, ProtocolTable, ProtocolTarget } from "./protocols.ts";
import type { System } from "./workloads.ts";

const fix = (n: number | null | undefined, digits = 3) =>
  n === null || n === undefined || Number.isNaN(n) ? "n/a" : n.toFixed(digits);
const int = (n: number) => Math.round(n).toLocaleString("en-US");

function table(header: string[], rows: string[][], textColumns = 2): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map((_, i) => (i < textColumns ? "---" : "---:"))), ...rows.map(line)].join("\n");
}

const LABELS: Record<Contender, string> = {
  legacy: "legacy",
  bounded: "bounded",
  "masking-5": "masking M=5 (peer)",
  "masking-10": "masking M=10 (peer)",
  clearing: "tool-result clearing (peer)",
};

export type ProtocolResults = {
  shipped: ProtocolTable;
  systems: Partial<Record<System, ProtocolTable>>;
  floors: { shipped: FloorSummary[]; systems: Partial<Record<System, FloorSummary[]>> };
  targets: ProtocolTarget[];
};

const name = (c: ProtocolCell) => `${c.protocol === "single-call" ? "**single-call**" : "two-call"}`;

/** What a user pays: every cell's cost under each price scenario, as a ratio to legacy two-call's. */
function costRows(cells: ProtocolTable): string[][] {
  return cells.map((c) => [
    name(c),
    LABELS[c.contender],
    fix(c.bytes_ratio),
    ...PRICE_SCENARIOS.map((s) => fix(c.cost_ratio[s.id])),
    fix(c.calls_per_step, 2),
  ]);
}

function floorRows(cells: ProtocolTable): string[][] {
  return cells.map((c) => [
    name(c),
    LABELS[c.contender],
    fix(c.over_own_f2.anthropic, 2),
    fix(c.over_f2.anthropic, 2),
    fix(c.over_f1.anthropic, 2),
    fix(c.over_own_f2["gpt-5"], 2),
    fix(c.visibility),
    fix(c.recovered_ratio.anthropic),
    fix(c.recovered_ratio["gpt-5"]),
    fix(c.calls_per_step_with_recovery, 2),
    c.checkpoints_per_100_calls === null ? "–" : fix(c.checkpoints_per_100_calls, 2),
    int(c.max_request_bytes),
  ]);
}

export function renderProtocols(p: ProtocolResults): string[] {
  const systems = Object.entries(p.systems).filter(([, t]) => t && t[0].calls > 0) as [System, ProtocolTable][];
  const single = (t: ProtocolTable, c: Contender) => t.find((x) => x.protocol === "single-call" && x.contender === c)!;
  const floorLine = (f: FloorSummary[], protocol: StepProtocol) => f.find((x) => x.protocol === protocol)!;
  return [
    "## What a user pays, per step protocol",
    "",
    "Every workload replayed under both step protocols (`--step-protocol two-call`, the default, and `single-call`: " +
    "the recorded selection and arguments answers of a step merged into one answer) and both policies, with the " +
    "peers rendered from legacy's requests of the same protocol. Costs are input cost under each price scenario (the " +
    "same cache hits, priced differently) as a ratio to **legacy two-call**'s under that scenario, over the shipped " +
    "workloads. Calls per step: model round trips, recorded lookups included (a latency proxy).",
    "",
    table(
      ["protocol", "policy / peer", "bytes", ...PRICE_SCENARIOS.map((s) => s.label), "calls / step"],
      costRows(p.shipped),
    ),
    "",
    "### Against the floor, with recovery",
    "",
    "The floor of a protocol: every call shows the tools, prefix and candidates and the newest output at least once; " +
    "F2 = w·P₁ + r·Σ_{k≥2} P_k + Σ_k c_k + Σ_g min(w + r(k_g − 1), k_g)·n_g (P: tools + instructions + intent + tasks; " +
    "c: candidates and lookup responses; g: the calls that share one newest event, k_g calls, n_g its bytes; w, r: " +
    "write and read prices), measured on legacy's requests of that protocol; F1 (strict) counts each newest output " +
    "once, uncached. No policy pays less than its protocol's F2. **Cost with recovery**: each step whose action uses " +
    "an identifier its request did not show pays one lookup call (its request again, read from the cache up to the " +
    "candidates, plus 1 KiB of response).",
    "",
    table(
      [
        "protocol",
        "policy / peer",
        "× own F2 (Anthropic)",
        "× two-call F2 (Anthropic)",
        "× two-call F1 (Anthropic)",
        "× own F2 (GPT-5)",
        "visibility",
        "with recovery / legacy (Anthropic)",
        "with recovery / legacy (GPT-5)",
        "calls / step with recovery",
        "checkpoints / 100 calls",
        "max request",
      ],
      floorRows(p.shipped),
    ),
    "",
    "The floors themselves, as a share of legacy two-call's cost:",
    "",
    table(
      ["system", "floor", ...PRICE_SCENARIOS.map((s) => s.label)],
      [...systems.map(([s]) => [s, p.floors.systems[s]!] as const), ["all shipped", p.floors.shipped] as const]
        .flatMap(([s, f]) =>
          (["two-call", "single-call"] as const).flatMap((protocol) => [
            [s, `F2 ${protocol}`, ...PRICE_SCENARIOS.map((x) => fix(floorLine(f, protocol).f2[x.id]))],
            [s, `F1 ${protocol}`, ...PRICE_SCENARIOS.map((x) => fix(floorLine(f, protocol).f1[x.id]))],
          ])
        ),
    ),
    "",
    "Per system, single-call's cost as a share of two-call's for the same policy, visibility, and cost with recovery " +
    "against the peers (Anthropic 5m):",
    "",
    table(
      [
        "system",
        "protocol",
        "legacy 1/2",
        "bounded 1/2 (Anthropic)",
        "bounded 1/2 (GPT-5)",
        "bounded × own F2",
        "visibility bounded / masking-5",
        "with recovery: bounded / masking-5 / clearing",
      ],
      systems.flatMap(([s, t]) =>
        (["two-call", "single-call"] as const).map((protocol) => {
          const at = (c: Contender) => t.find((x) => x.protocol === protocol && x.contender === c)!;
          return [
            s,
            protocol,
            fix(single(t, "legacy").vs_two_call.anthropic),
            fix(single(t, "bounded").vs_two_call.anthropic),
            fix(single(t, "bounded").vs_two_call["gpt-5"]),
            fix(at("bounded").over_own_f2.anthropic, 2),
            `${fix(at("bounded").visibility)} / ${fix(at("masking-5").visibility)}`,
            `${fix(at("bounded").recovered_ratio.anthropic)} / ${fix(at("masking-5").recovered_ratio.anthropic)} / ${
              fix(at("clearing").recovered_ratio.anthropic)
            }`,
          ];
        })
      ),
    ),
    "",
    "Targets of the step protocols (shipped workloads; the synthetic system per system only):",
    "",
    table(["target", "figure", "status"], p.targets.map((t) => [t.target, t.figure, t.met ? "met" : "**not met**"]), 3),
    "",
  ];
}
