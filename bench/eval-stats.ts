// bun run bench:eval-stats [--sims N]: the calibration of loom eval's verdict. Simulates many evaluations over a grid
// (true solve rates 0 to 1, task heterogeneity, 4 / 12 / 50 / 200 tasks, 1 and 3 repeats, true differences −margin,
// 0, +margin), summarises each with lib/eval/summary.ts, and writes the coverage of every interval, the rate of a false
// non-inferior at −margin, of a false cheaper, and the power at 0 into bench/RESULTS.md (its eval-stats section).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BOUNDS, COST_MARGIN, grid, MARGIN, outOfBounds, type SimResult, simulateCell } from "./eval-stats-sim.ts";

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
/** Simulations per cell: fewer where a summary costs more (200 tasks × 3 repeats is 1,200 rows and a bootstrap). */
const SIMS: Record<number, number> = { 4: 1000, 12: 1000, 50: 400, 200: 150 };
const scale = Number(arg("--sims") ?? 1000) / 1000;
const cells = grid({ rates: [0, 0.1, 0.5, 0.9, 1], tasks: [4, 12, 50, 200], repeats: [1, 3] });
const started = performance.now();
const results: SimResult[] = [];
for (const [i, cell] of cells.entries()) {
  results.push(simulateCell(cell, { sims: Math.max(50, Math.round(SIMS[cell.tasks] * scale)), seed: "calibration" }));
  process.stderr.write(`\r${i + 1}/${cells.length} cells, ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
process.stderr.write("\n");

const pct = (x: number) => `${(x * 100).toFixed(1)}`;
const failing = results.filter((r) => outOfBounds(r).length > 0);
const worst = (f: (r: SimResult) => number, rows = results) => Math.min(...rows.map(f));
const highest = (f: (r: SimResult) => number, rows = results) => Math.max(...rows.map(f));
const atLoss = results.filter((r) => r.shift === -1);
const lines = [
  "<!-- eval-stats -->",
  "## Eval verdict calibration",
  "",
  `Written by \`bun run bench:eval-stats\` (bench/eval-stats.ts; per cell ${
    Object.entries(SIMS).map(([t, n]) => `${Math.round(n * scale)} at ${t} tasks`).join(", ")
  } simulated evaluations, seeded, each`,
  "summarised by lib/eval/summary.ts — the code `loom eval` runs). Margin " +
  `${MARGIN * 100} points, cost margin ${COST_MARGIN * 100} %. Task rates: *none* = every task at the rate; *strong* =`,
  "Beta(2·rate, 2·(1 − rate)) per task. The candidate's rate moves by shift × margin (losses in proportion to the",
  "rate, gains to its complement). Costs: per task lognormal(σ 1), per run × lognormal(σ 0.3), the candidate's × a",
  "per-task lognormal(σ 0.2) × 0.95, so the true cost ratio is exactly 1 − cost margin and every *cheaper* is false.",
  `Bounds: coverage ≥ ${pct(BOUNDS.coverage)} % for every interval; false non-inferior (shift −1) ≤ ${
    pct(BOUNDS.false_non_inferior)
  } %; false cheaper ≤ ${
    pct(BOUNDS.false_cheaper)
  } %; each less (or plus) two Monte Carlo standard errors at the cell's simulations. Measured ${
    new Date().toISOString().slice(0, 10)
  }, ${((performance.now() - started) / 1000).toFixed(0)} s.`,
  "",
  `**${results.length - failing.length} of ${results.length} cells within every bound.** Lowest coverage: solve rate ${
    pct(worst((r) => r.coverage.rate))
  } %, difference ${pct(worst((r) => r.coverage.difference))} %, cost ratio ${
    pct(worst((r) => r.coverage.cost))
  } %; highest false non-inferior ${pct(highest((r) => r.non_inferior, atLoss))} %; highest false cheaper ${
    pct(highest((r) => r.cheaper))
  } %.${
    failing.length
      ? ` Out of bounds: ${failing.map((r) => `${label(r)} (${outOfBounds(r).join(", ")})`).join("; ")}.`
      : ""
  }`,
  "",
  "| tasks | repeats | rate | tasks vary | shift | sims | solve-rate coverage % | difference coverage % | cost-ratio coverage % | non-inferior % | cheaper % |",
  "|---|---|---|---|---|---|---|---|---|---|---|",
  ...results.map((r) =>
    `| ${r.tasks} | ${r.repeats} | ${r.rate} | ${r.heterogeneity} | ${r.shift > 0 ? "+" : r.shift < 0 ? "−" : ""}${
      Math.abs(r.shift) ? "margin" : "0"
    } | ${r.sims} | ${pct(r.coverage.rate)} | ${pct(r.coverage.difference)} | ${pct(r.coverage.cost)} | ${
      pct(r.non_inferior)
    }${r.shift === -1 ? " (false)" : r.shift === 0 ? " (power)" : ""} | ${pct(r.cheaper)} |`
  ),
  "",
  "Reading it: at shift 0 the non-inferior column is the power to show a 5-point margin; it stays near 0 below ~50",
  "tasks, which is what the pre-flight line and the inconclusive reason say before and after an evaluation.",
  "<!-- /eval-stats -->",
];

function label(r: SimResult): string {
  return `${r.tasks} tasks × ${r.repeats}, rate ${r.rate} ${r.heterogeneity}, shift ${r.shift}`;
}

const path = join(import.meta.dirname ?? "bench", "RESULTS.md");
const text = readFileSync(path, "utf8");
const section = lines.join("\n");
const start = text.indexOf("<!-- eval-stats -->");
const end = text.indexOf("<!-- /eval-stats -->");
writeFileSync(
  path,
  start === -1
    ? `${text.trimEnd()}\n\n${section}\n`
    : `${text.slice(0, start)}${section}${text.slice(end + "<!-- /eval-stats -->".length)}`,
);
console.log(`${results.length - failing.length}/${results.length} cells within bounds; wrote ${path}`);
if (failing.length) process.exitCode = 1;
