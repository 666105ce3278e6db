// Both step protocols side by side: every contender (legacy, bounded, the peers) replayed under two-call and
// single-call on the same recordings, priced under every scenario, against the floor of each protocol, with the
// lookups a missed identifier would cost, and the round trips per step.
import type { StepProtocol } from "../lib/policy.ts";
import { addContenderRun, type Contender, type ContenderRun, CONTENDERS, emptyContenderRun } from "./compare.ts";
import { PRICE_SCENARIOS, recoveryCost, SCENARIO_IDS, scenarioCosts, type ScenarioId } from "./prices.ts";
import { ratio } from "./stats.ts";
import type { System } from "./workloads.ts";

export const PROTOCOLS = ["two-call", "single-call"] as const satisfies readonly StepProtocol[];

export type ProtocolRow = { system: System; name: string; runs: Record<StepProtocol, Record<Contender, ContenderRun>> };

type ByScenario = Record<ScenarioId, number | null>;

export type ProtocolCell = {
  protocol: StepProtocol;
  contender: Contender;
  runs: number;
  calls: number;
  steps: number;
  bytes: number;
  max_request_bytes: number;
  /** Σ bytes / Σ legacy two-call bytes. */
  bytes_ratio: number | null;
  /** Input cost (token units) per scenario, and as a ratio to legacy two-call's under the same scenario. */
  cost: Record<ScenarioId, number>;
  cost_ratio: ByScenario;
  /** This protocol's cost / the same contender's two-call cost. */
  vs_two_call: ByScenario;
  /** Cost / the floor: F2 and F1 of the two-call step, and F2 of this cell's own protocol. */
  over_f2: ByScenario;
  over_f1: ByScenario;
  over_own_f2: ByScenario;
  /**
   * Bounded: cost / its seed-conformant floor F_seed (bench/seed-floor.ts), and F_seed's own parts as multiples of this
   * protocol's F2: the whole, the tail re-read on every call, the tail re-written after checkpoints, the events written
   * as they enter. null for the other contenders.
   */
  over_seed: ByScenario | null;
  seed_over_own_f2:
    | Record<
      ScenarioId,
      { total: number | null; tail_reads: number | null; rewrites: number | null; entering: number | null }
    >
    | null;
  /** Cost including one lookup call per step whose request missed an identifier its action uses, / legacy two-call. */
  recovered_ratio: ByScenario;
  recovery_calls: number;
  visibility: number | null;
  /** Share of input tokens read from the cache: Anthropic (1,024- and 4,096-token minimum) and OpenAI. */
  read_share: { anthropic: number | null; anthropic_min4096: number | null; openai: number | null };
  checkpoints_per_100_calls: number | null;
  calls_per_step: number | null;
  calls_per_step_with_recovery: number | null;
  /** Runs over 1.03x legacy of the same protocol under some scenario or in bytes; the worst. */
  runs_over_legacy: {
    count: number;
    worst: { name: string; scenario: string; ratio: number } | null;
    /** Runs over 1.03x per figure (bytes, each scenario). */
    by_figure: Record<string, number>;
  };
  /** Legacy and bounded: runs whose outcome and execution reports equal legacy two-call's. */
  agreeing: number | null;
};

export type ProtocolTable = ProtocolCell[];

/** The floors of each protocol as a share of legacy two-call's cost, per scenario. */
export type FloorSummary = { protocol: StepProtocol; f2: ByScenario; f1: ByScenario };

export function summarizeProtocols(rows: readonly ProtocolRow[]): { cells: ProtocolTable; floors: FloorSummary[] } {
  const pooled = (protocol: StepProtocol, contender: Contender) => {
    const into = emptyContenderRun();
    for (const r of rows) addContenderRun(into, r.runs[protocol][contender]);
    return into;
  };
  const base = pooled("two-call", "legacy");
  const baseCost = scenarioCosts(base.costs);
  const baseF2 = base.floors.f2;
  const baseF1 = base.floors.f1;
  const per = (f: (id: ScenarioId) => number | null): ByScenario =>
    Object.fromEntries(SCENARIO_IDS.map((id) => [id, f(id)])) as ByScenario;

  const cells: ProtocolCell[] = [];
  for (const protocol of PROTOCOLS) {
    const ownLegacy = pooled(protocol, "legacy");
    for (const contender of CONTENDERS) {
      const t = pooled(protocol, contender);
      const cost = scenarioCosts(t.costs);
      const twoCall = scenarioCosts(pooled("two-call", contender).costs);
      const recovered = (id: ScenarioId) => cost[id] + recoveryCost(t.recovery, scenario(id));
      let over = 0;
      let worst: ProtocolCell["runs_over_legacy"]["worst"] = null;
      const byFigure: Record<string, number> = Object.fromEntries(["bytes", ...SCENARIO_IDS].map((k) => [k, 0]));
      if (contender !== "legacy") {
        for (const r of rows) {
          const mine = r.runs[protocol][contender];
          const legacy = r.runs[protocol].legacy;
          const a = scenarioCosts(mine.costs);
          const b = scenarioCosts(legacy.costs);
          const figures: [string, number, number][] = [
            ["bytes", mine.bytes, legacy.bytes],
            ...SCENARIO_IDS.map((id): [string, number, number] => [id, a[id], b[id]]),
          ];
          let runOver = false;
          for (const [scenario, x, y] of figures) {
            if (y === 0) continue;
            if (x > 1.03 * y) {
              runOver = true;
              byFigure[scenario] += 1;
            }
            if (!worst || x / y > worst.ratio) worst = { name: r.name, scenario, ratio: x / y };
          }
          if (runOver) over += 1;
        }
      }
      const agreeing = contender === "legacy" || contender === "bounded"
        ? rows.filter((r) => {
          const mine = r.runs[protocol][contender].result;
          const reference = r.runs["two-call"].legacy.result;
          return mine && reference && mine.outcome === reference.outcome && mine.reports === reference.reports;
        }).length
        : null;
      cells.push({
        protocol,
        contender,
        runs: rows.length,
        calls: t.calls,
        steps: t.steps,
        bytes: t.bytes,
        max_request_bytes: t.maxBytes,
        bytes_ratio: ratio(t.bytes, base.bytes),
        cost,
        cost_ratio: per((id) => ratio(cost[id], baseCost[id])),
        vs_two_call: per((id) => ratio(cost[id], twoCall[id])),
        over_f2: per((id) => ratio(cost[id], baseF2[id])),
        over_f1: per((id) => ratio(cost[id], baseF1[id])),
        over_own_f2: per((id) => ratio(cost[id], ownLegacy.floors.f2[id])),
        over_seed: contender === "bounded" ? per((id) => ratio(cost[id], t.seed[id].total)) : null,
        seed_over_own_f2: contender === "bounded"
          ? Object.fromEntries(SCENARIO_IDS.map((id) => {
            const f2 = ownLegacy.floors.f2[id];
            const seed = t.seed[id];
            return [id, {
              total: ratio(seed.total, f2),
              tail_reads: ratio(seed.tailReads, f2),
              rewrites: ratio(seed.rewrites, f2),
              entering: ratio(seed.entering, f2),
            }];
          })) as ProtocolCell["seed_over_own_f2"]
          : null,
        recovered_ratio: per((id) => ratio(recovered(id), baseCost[id])),
        recovery_calls: t.recovery.calls,
        visibility: ratio(t.visibility.visible, t.visibility.identifiers),
        read_share: {
          anthropic: ratio(t.costs.cachedTokens.anthropic, t.costs.tokens),
          anthropic_min4096: ratio(t.costs.anthropicMin4096.cached, t.costs.tokens),
          openai: ratio(t.costs.cachedTokens.openai, t.costs.openaiTokens),
        },
        checkpoints_per_100_calls: t.checkpoints === null || t.calls === 0 ? null : (100 * t.checkpoints) / t.calls,
        calls_per_step: ratio(t.calls, t.steps),
        calls_per_step_with_recovery: ratio(t.calls + t.recovery.calls, t.steps),
        runs_over_legacy: { count: over, worst, by_figure: byFigure },
        agreeing,
      });
    }
  }
  const floors = PROTOCOLS.map((protocol): FloorSummary => {
    const legacy = pooled(protocol, "legacy");
    return {
      protocol,
      f2: per((id) => ratio(legacy.floors.f2[id], baseCost[id])),
      f1: per((id) => ratio(legacy.floors.f1[id], baseCost[id])),
    };
  });
  return { cells, floors };
}

function scenario(id: ScenarioId) {
  return PRICE_SCENARIOS.find((s) => s.id === id)!;
}

export type ProtocolTarget = { target: string; figure: string; met: boolean };

const f3 = (n: number | null | undefined) => (n === null || n === undefined ? "n/a" : n.toFixed(3));
const f2d = (n: number | null | undefined) => (n === null || n === undefined ? "n/a" : n.toFixed(2));

/**
 * The targets for the step protocols, over the shipped workloads (`shipped`) and per system (`systems`).
 * `cell(table, protocol, contender)` finds a cell.
 */
export function evaluateProtocolTargets(
  { shipped, systems }: { shipped: ProtocolTable; systems: Partial<Record<System, ProtocolTable>> },
): ProtocolTarget[] {
  const targets: ProtocolTarget[] = [];
  const at = (table: ProtocolTable, protocol: StepProtocol, contender: Contender) =>
    table.find((c) => c.protocol === protocol && c.contender === contender)!;
  for (const contender of ["legacy", "bounded"] as const) {
    const one = at(shipped, "single-call", contender);
    const figure = (["anthropic", "gpt-5"] as const).map((id) => `${id} ${f3(one.vs_two_call[id])}`).join(", ");
    targets.push({
      target: `single-call Σcost / two-call Σcost ≤ 0.70 (${contender}; Anthropic and GPT-5)`,
      figure,
      met: (["anthropic", "gpt-5"] as const).every((id) => (one.vs_two_call[id] ?? Infinity) <= 0.7),
    });
  }
  const bounded1 = at(shipped, "single-call", "bounded");
  targets.push({
    target: "single-call model calls per step ≤ 1.10, lookups included (recorded lookups and recovery lookups)",
    figure: `bounded ${f2d(bounded1.calls_per_step)} recorded, ${
      f2d(bounded1.calls_per_step_with_recovery)
    } with recovery; legacy ${f2d(at(shipped, "single-call", "legacy").calls_per_step_with_recovery)} with recovery`,
    met: (bounded1.calls_per_step_with_recovery ?? Infinity) <= 1.1,
  });
  const agree = (["two-call", "single-call"] as const).flatMap((p) =>
    (["legacy", "bounded"] as const).map((c) => at(shipped, p, c))
  );
  targets.push({
    target: "outcomes and execution reports identical to legacy two-call on every recording (both protocols, policies)",
    figure: agree.map((c) => `${c.protocol} ${c.contender} ${c.agreeing}/${c.runs}`).join("; "),
    met: agree.every((c) => c.agreeing === c.runs),
  });
  const over = PROTOCOLS.map((p) => at(shipped, p, "bounded").runs_over_legacy);
  targets.push({
    target: "no bounded run over 1.03× legacy (same protocol) under any price scenario or in bytes, either protocol",
    figure: PROTOCOLS.map((p, i) =>
      `${p}: ${over[i].count} over` +
      (over[i].worst ? ` (worst ${over[i].worst!.name}, ${over[i].worst!.scenario}: ${f3(over[i].worst!.ratio)})` : "")
    ).join("; "),
    met: over.every((o) => o.count === 0),
  });
  targets.push({
    target: "bounded ≤ 1.6× the floor F2 of its protocol, pooled, Anthropic 5m",
    figure: PROTOCOLS.map((p) => `${p} ${f2d(at(shipped, p, "bounded").over_own_f2.anthropic)}×`).join(", ") +
      ` (two-call bounded over the two-call F2: ${f2d(at(shipped, "two-call", "bounded").over_f2.anthropic)}×)`,
    met: PROTOCOLS.every((p) => (at(shipped, p, "bounded").over_own_f2.anthropic ?? Infinity) <= 1.6),
  });
  const present = Object.entries(systems).filter(([, t]) => t && at(t, "two-call", "bounded").visibility !== null) as [
    System,
    ProtocolTable,
  ][];
  targets.push({
    target: "visibility of bounded ≥ masking-5's on every system",
    figure: present.map(([s, t]) =>
      `${s} ${f3(at(t, "two-call", "bounded").visibility)} (masking-5 ${f3(at(t, "two-call", "masking-5").visibility)})`
    ).join("; "),
    met: present.every(([, t]) =>
      (at(t, "two-call", "bounded").visibility ?? 0) >= (at(t, "two-call", "masking-5").visibility ?? 0)
    ),
  });
  const losing = Object.entries(systems).flatMap(([s, t]) =>
    t
      ? PROTOCOLS.flatMap((p) =>
        SCENARIO_IDS.flatMap((id) =>
          (["masking-5", "clearing"] as const).flatMap((peer) =>
            (at(t, p, "bounded").recovered_ratio[id] ?? Infinity) < (at(t, p, peer).recovered_ratio[id] ?? Infinity)
              ? []
              : [`${s}/${p}/${id} vs ${peer}`]
          )
        )
      )
      : []
  );
  targets.push({
    target: "bounded's cost including recovery below masking-5's and clearing's on every system, every scenario",
    figure: losing.length === 0 ? "below on all" : `not below: ${losing.join(", ")}`,
    met: losing.length === 0,
  });
  return targets;
}
