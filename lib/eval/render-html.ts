// A self-contained HTML page of an evaluation: the plain-language summary, per-policy figures with interval bars, the
// paired comparison with its interval against the margin, and the per-task table.
import type { EvalFile, PairSummary } from "./eval-file.ts";
import { pairSentence } from "./render.ts";

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
const pct = (x: number) => `${Math.round(x * 100)} %`;
const usd = (x: number | null) => (x === null ? "n/a" : `$${x.toFixed(4)}`);

/** An interval bar on [lo, hi]: the interval as a band, the estimate as a tick, optional reference lines. */
function bar(
  { low, high, estimate }: { low: number; high: number; estimate: number },
  { from, to, lines = [] }: { from: number; to: number; lines?: { at: number; label: string }[] },
): string {
  const w = 320;
  const x = (v: number) => (Math.min(to, Math.max(from, v)) - from) / (to - from) * w;
  const marks = lines.map((l) =>
    `<line x1="${x(l.at)}" x2="${x(l.at)}" y1="0" y2="18" stroke="#b00" stroke-dasharray="3 2"><title>${
      escape(l.label)
    }</title></line>`
  ).join("");
  return `<svg width="${w}" height="18" role="img" aria-label="${escape(`${estimate} (${low} to ${high})`)}">` +
    `<rect x="0" y="8" width="${w}" height="2" fill="#ddd"/>` +
    `<rect x="${x(low)}" y="4" width="${Math.max(1, x(high) - x(low))}" height="10" fill="#8ab"/>` +
    `<rect x="${x(estimate) - 1}" y="1" width="3" height="16" fill="#123"/>${marks}</svg>`;
}

function pairBlock(pair: PairSummary, file: EvalFile): string {
  return `<h2>${escape(pair.candidate)} vs ${escape(pair.baseline)}</h2>
<p>${escape(pairSentence(pair, file.summary.policies))}</p>
<p>difference in solve rate (points, −100 to +100; red: −margin and 0)<br>${
    bar(pair.difference, {
      from: -1,
      to: 1,
      lines: [{ at: -pair.margin, label: "−margin" }, { at: 0, label: "0" }],
    })
  }</p>
${
    pair.cost_ratio
      ? `<p>cost ratio (0× to 2×; red: 1×)<br>${
        bar(pair.cost_ratio, { from: 0, to: 2, lines: [{ at: 1, label: "1×" }] })
      }</p>`
      : ""
  }`;
}

export function renderEvalHtml(file: EvalFile): string {
  const s = file.summary;
  const policies = file.settings.policies;
  const policyRows = s.policies.map((p) =>
    `<tr><td>${escape(p.policy)}</td><td>${p.solved}/${p.runs}</td><td>${pct(p.solve_rate.estimate)}</td><td>${
      bar(p.solve_rate, { from: 0, to: 1 })
    }</td><td>${pct(p.pass_all)}</td><td>${usd(p.cost)}</td><td>${usd(p.cost_per_solved)}</td><td>${
      p.median_steps ?? "n/a"
    }</td><td>${p.model_calls}</td></tr>`
  ).join("\n");
  const taskRows = s.per_task.map((t) =>
    `<tr><td>${escape(t.task)}</td>${
      policies.map((p) => {
        const c = t.policies[p];
        return c
          ? `<td>${c.solved}/${c.runs}</td><td>${usd(c.mean_cost)}</td><td>${c.median_steps ?? "-"}</td>`
          : "<td>-</td><td>-</td><td>-</td>";
      }).join("")
    }</tr>`
  ).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>loom eval: ${escape(file.suite.name ?? file.suite.path)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:72em}table{border-collapse:collapse}
td,th{border-bottom:1px solid #ddd;padding:.2em .6em;text-align:left}</style></head><body>
<h1>loom eval: ${escape(file.suite.name ?? file.suite.path)}</h1>
<p>${s.runs} runs counted (${s.attempts} started, ${s.infra_retries} infra retries, ${s.dropped_pairs.length} pairs dropped); ${
    escape(file.settings.models.join(", "))
  }; ${file.settings.repeats} repeat(s); seed ${escape(file.settings.seed)}${
    file.complete ? "" : "; <b>incomplete</b>"
  }</p>
<table><tr><th>policy</th><th>solved</th><th>solve rate</th><th>95 % interval (0–100 %)</th><th>pass^${file.settings.repeats}</th><th>cost</th><th>per solved</th><th>median steps</th><th>calls</th></tr>
${policyRows}</table>
${s.pairs.map((pair) => pairBlock(pair, file)).join("\n")}
${
    s.per_tag.length
      ? `<h2>Tags</h2>
<table><tr><th>tag</th><th>tasks</th>${policies.map((p) => `<th>${escape(p)} solve rate</th>`).join("")}</tr>
${
        s.per_tag.map((t) =>
          `<tr><td>${escape(t.tag)}</td><td>${t.tasks}</td>${
            policies.map((p) => `<td>${pct(t.policies[p]?.solve_rate ?? 0)}</td>`).join("")
          }</tr>`
        ).join("\n")
      }</table>`
      : ""
  }
<h2>Tasks</h2>
<table><tr><th>task</th>${
    policies.map((p) => `<th>${escape(p)} solved</th><th>mean cost</th><th>median steps</th>`).join("")
  }</tr>
${taskRows}</table>
</body></html>
`;
}
