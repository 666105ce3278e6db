// From per-run side-by-side measurements to per-system figures and the caching / visibility targets.
import { addContenderRun, type Contender, type ContenderRun, CONTENDERS, emptyContenderRun } from "./compare.ts";
import { COST_MODELS, COST_SECTIONS, type CostModel, type CostSection } from "./cost.ts";
import { ratio } from "./stats.ts";
import type { System } from "./workloads.ts";

export type ComparisonRow = { system: System; name: string; runs: Record<Contender, ContenderRun> };

export type ContenderSummary = {
  runs: number;
  calls: number;
  bytes: number;
  bytes_ratio: number | null;
  max_request_bytes: number;
  /** Effective input cost in token units, and its ratio to legacy's, per cost model. */
  cost: Record<CostModel, number>;
  cost_ratio: Record<CostModel, number | null>;
  /** Share of input tokens read from the cache (Anthropic, OpenAI). */
  cached_share: { anthropic: number | null; openai: number | null };
  visibility: { steps: number; identifiers: number; visible: number; share: number | null };
  checkpoints: number | null;
  checkpoints_per_100_calls: number | null;
  /** Where the cost goes, share of the contender's cost per section (Anthropic, GPT-5). */
  sections: { anthropic: Record<CostSection, number>; "gpt-5": Record<CostSection, number> };
  /** Runs that cost more than 1.03x legacy under some cost model, or send more than 1.03x its bytes. */
  runs_over_legacy: { count: number; worst: { name: string; model: string; ratio: number } | null };
};

export type Comparison = Record<Contender, ContenderSummary>;

export function summarizeComparison(rows: readonly ComparisonRow[]): Comparison {
  const total = (c: Contender) => {
    const into = emptyContenderRun();
    for (const r of rows) addContenderRun(into, r.runs[c]);
    return into;
  };
  const legacy = total("legacy");
  return Object.fromEntries(CONTENDERS.map((c) => {
    const t = total(c);
    let over = 0;
    let worst: ContenderSummary["runs_over_legacy"]["worst"] = null;
    for (const r of rows) {
      const mine = r.runs[c];
      const base = r.runs.legacy;
      const figures: [string, number, number][] = [
        ["bytes", mine.bytes, base.bytes],
        ...COST_MODELS.map((m): [string, number, number] => [m, mine.costs.cost[m], base.costs.cost[m]]),
      ];
      let runOver = false;
      for (const [model, x, y] of figures) {
        if (y === 0) continue;
        if (x > 1.03 * y) runOver = true;
        if (!worst || x / y > worst.ratio) worst = { name: r.name, model, ratio: x / y };
      }
      if (runOver) over += 1;
    }
    const shares = (model: "anthropic" | "gpt-5") => {
      const costOf = model === "anthropic" ? t.costs.cost.anthropic : t.costs.cost["gpt-5"];
      return Object.fromEntries(
        COST_SECTIONS.map((s) => [s, costOf === 0 ? 0 : t.costs.sections[model][s] / costOf]),
      ) as Record<CostSection, number>;
    };
    const summary: ContenderSummary = {
      runs: rows.length,
      calls: t.calls,
      bytes: t.bytes,
      bytes_ratio: ratio(t.bytes, legacy.bytes),
      max_request_bytes: t.maxBytes,
      cost: t.costs.cost,
      cost_ratio: Object.fromEntries(
        COST_MODELS.map((m) => [m, ratio(t.costs.cost[m], legacy.costs.cost[m])]),
      ) as Record<
        CostModel,
        number | null
      >,
      cached_share: {
        anthropic: ratio(t.costs.cachedTokens.anthropic, t.costs.tokens),
        openai: ratio(t.costs.cachedTokens.openai, t.costs.tokens),
      },
      visibility: { ...t.visibility, share: ratio(t.visibility.visible, t.visibility.identifiers) },
      checkpoints: t.checkpoints,
      checkpoints_per_100_calls: t.checkpoints === null || t.calls === 0 ? null : (100 * t.checkpoints) / t.calls,
      sections: { anthropic: shares("anthropic"), "gpt-5": shares("gpt-5") },
      runs_over_legacy: { count: over, worst: c === "legacy" ? null : worst },
    };
    return [c, summary];
  })) as Comparison;
}

export type ComparisonTarget = { target: string; figure: string; met: boolean };

const CACHED_MODELS = ["anthropic", "gpt-4.1", "gpt-5"] as const;

/** The caching and visibility targets, over the shipped workloads (`shipped`) and per system. */
export function evaluateComparisonTargets(
  { shipped, systems }: { shipped: Comparison; systems: Partial<Record<System, Comparison>> },
): ComparisonTarget[] {
  const f = (n: number | null) => (n === null ? "n/a" : n.toFixed(3));
  const targets: ComparisonTarget[] = [];
  for (const m of CACHED_MODELS) {
    const r = shipped.bounded.cost_ratio[m];
    targets.push({
      target: `effective cost Σ bounded / Σ legacy ≤ 0.40 (${m})`,
      figure: f(r),
      met: r !== null && r <= 0.4,
    });
  }
  const present = Object.entries(systems).filter(([, c]) => c && c.bounded.visibility.identifiers > 0) as [
    System,
    Comparison,
  ][];
  const vis = present.map(([s, c]) =>
    `${s} ${f(c.bounded.visibility.share)} (masking-5 ${f(c["masking-5"].visibility.share)})`
  );
  targets.push({
    target: "visibility of bounded ≥ 0.95 on every system, and ≥ masking-5's",
    figure: vis.join("; "),
    met: present.every(([, c]) =>
      (c.bounded.visibility.share ?? 0) >= 0.95 &&
      (c.bounded.visibility.share ?? 0) >= (c["masking-5"].visibility.share ?? 0)
    ),
  });
  const cheaper = Object.entries(systems).filter(([, c]) => c) as [System, Comparison][];
  const losing = cheaper.flatMap(([s, c]) =>
    CACHED_MODELS.flatMap((m) =>
      ["masking-5", "masking-10"].flatMap((p) =>
        c.bounded.cost[m] < c[p as Contender].cost[m] ? [] : [`${s}/${m} vs ${p}`]
      )
    )
  );
  targets.push({
    target: "bounded's cached cost below both masking peers' on every system",
    figure: losing.length === 0 ? "all below" : `not below: ${losing.join(", ")}`,
    met: losing.length === 0,
  });
  const over = shipped.bounded.runs_over_legacy;
  targets.push({
    target: "no run over 1.03× legacy under any cost model, bytes included",
    figure: `${over.count} runs over` +
      (over.worst ? ` (worst ${over.worst.name}, ${over.worst.model}: ${over.worst.ratio.toFixed(3)})` : ""),
    met: over.count === 0,
  });
  return targets;
}

/** One preview size of the frontier: bounded's figures over the shipped workloads and per system, against legacy. */
export type FrontierPoint = {
  /** Which previews: "512 B (the floor)", "512 B-4 KiB by room (default)", "2 KiB", … */
  previews: string;
  bytes_ratio: number | null;
  cost_ratio: Record<(typeof CACHED_MODELS)[number], number | null>;
  visibility: number | null;
  visibility_by_system: Partial<Record<System, number | null>>;
  checkpoints_per_100_calls: number | null;
  max_request_bytes: number;
};

/**
 * Bounded with several retained-preview sizes (`variants`, keyed by a label) against legacy (`rows`), pooled over the
 * shipped workloads (`shipped` says which system is one) with visibility per system.
 */
export function summarizeFrontier(
  rows: readonly ComparisonRow[],
  variants: ReadonlyMap<string, readonly ContenderRun[]>,
  shipped: (system: System) => boolean,
): FrontierPoint[] {
  return [...variants].map(([label, runs]) => {
    const pool = (keep: (s: System) => boolean) => {
      const mine = emptyContenderRun();
      const legacy = emptyContenderRun();
      rows.forEach((r, i) => {
        if (!keep(r.system)) return;
        addContenderRun(mine, runs[i]);
        addContenderRun(legacy, r.runs.legacy);
      });
      return { mine, legacy };
    };
    const { mine, legacy } = pool(shipped);
    const systems = [...new Set(rows.map((r) => r.system))];
    return {
      previews: label,
      bytes_ratio: ratio(mine.bytes, legacy.bytes),
      cost_ratio: Object.fromEntries(
        CACHED_MODELS.map((m) => [m, ratio(mine.costs.cost[m], legacy.costs.cost[m])]),
      ) as FrontierPoint["cost_ratio"],
      visibility: ratio(mine.visibility.visible, mine.visibility.identifiers),
      visibility_by_system: Object.fromEntries(systems.map((s) => {
        const { mine: m } = pool((x) => x === s);
        return [s, ratio(m.visibility.visible, m.visibility.identifiers)];
      })),
      checkpoints_per_100_calls: mine.calls === 0 ? null : (100 * (mine.checkpoints ?? 0)) / mine.calls,
      max_request_bytes: mine.maxBytes,
    };
  });
}
