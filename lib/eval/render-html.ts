// A self-contained HTML page of an evaluation: the verdict first (the same sentence as the text), what to do next with
// links to the disagreeing runs' artifacts, per-policy figures (cost, cost per solved task) with interval bars, the
// paired comparison against the margin, and the per-task table. Reads on a phone: tables scroll in their own box.
import type { EvalFile, PairSummary } from "./eval-file.ts";
import { headline, secondsText, uncountedText, unpriced, usd, whatNext } from "./render.ts";
import { ratioText, UNSANDBOXED_NOTE } from "./summary.ts";

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
const pct = (x: number) => `${Math.round(x * 100)} %`;
/** A link to a run's artifact, relative to the page; encoded so a path is never markup. */
const link = (path: string, label: string) => `<a href="${escape(encodeURI(path))}">${escape(label)}</a>`;

/**
 * An interval bar on [from, to]: the interval as a band, the estimate as a tick, optional reference lines, and tick
 * labels at both ends and the middle (the scale is uniform, so the labels are never stretched).
 */
function bar(
  { low, high, estimate }: { low: number; high: number; estimate: number },
  { from, to, lines = [], format = (v) => String(v) }: {
    from: number;
    to: number;
    lines?: { at: number; label: string }[];
    format?: (v: number) => string;
  },
): string {
  const w = 320, pad = 16, inner = w - 2 * pad;
  const x = (v: number) => pad + (Math.min(to, Math.max(from, v)) - from) / (to - from) * inner;
  const ticks = [from, (from + to) / 2, to].map((v) =>
    `<line x1="${x(v)}" x2="${x(v)}" y1="18" y2="21" stroke="#999"/>` +
    `<text x="${x(v)}" y="31" text-anchor="middle" font-size="10" fill="#555">${escape(format(v))}</text>`
  ).join("");
  const marks = lines.map((l) =>
    `<line x1="${x(l.at)}" x2="${x(l.at)}" y1="0" y2="18" stroke="#b00" stroke-dasharray="3 2"><title>${
      escape(l.label)
    }</title></line>`
  ).join("");
  return `<svg class="bar" viewBox="0 0 ${w} 34" role="img" aria-label="${
    escape(`${estimate} (${low} to ${high})`)
  }">` +
    `<rect x="${pad}" y="8" width="${inner}" height="2" fill="#ddd"/>` +
    `<rect x="${x(low)}" y="4" width="${Math.max(1, x(high) - x(low))}" height="10" fill="#8ab"/>` +
    `<rect x="${x(estimate) - 1}" y="1" width="3" height="16" fill="#123"/>${marks}${ticks}</svg>`;
}

function pairBlock(pair: PairSummary): string {
  return `<section><h2>${escape(pair.candidate)} vs ${escape(pair.baseline)}: ${
    escape(pair.verdict.replaceAll("_", " "))
  }</h2>
<p>difference in solve rate, points (−100 to +100; red: −margin and 0)<br>${
    bar(pair.difference, {
      from: -1,
      to: 1,
      lines: [{ at: -pair.margin, label: "−margin" }, { at: 0, label: "0" }],
      format: (v) => (v > 0 ? `+${Math.round(v * 100)}` : v < 0 ? `−${Math.round(-v * 100)}` : "0"),
    })
  }</p>
${
    pair.cost_ratio
      ? ratioBlock("cost ratio", pair.cost_ratio, pair)
      : pair.seconds_ratio
      ? ratioBlock("no price: time ratio (seconds per task, the cost of a local model)", pair.seconds_ratio, pair)
      : "<p>cost ratio: n/a (no task has a price, or a time, under both policies)</p>"
  }</section>`;
}

/** A ratio (cost, or time without a price) as an interval bar on 0× to 2×, with 1 − cost margin and 1× marked. */
function ratioBlock(
  label: string,
  ratio: { estimate: number; low: number; high: number | null },
  pair: PairSummary,
): string {
  return `<p>${escape(label)} ${escape(ratioText(ratio.estimate))}× (0× to 2×; red: 1 − cost margin and 1×)<br>${
    bar({ ...ratio, high: Math.min(ratio.high ?? 2, 2) }, {
      from: 0,
      to: 2,
      lines: [{ at: 1 - pair.cost_margin, label: "1 − cost margin" }, { at: 1, label: "1×" }],
      format: (v) => `${v}×`,
    })
  }</p>`;
}

const table = (head: string, rows: string) => `<div class="scroll"><table>${head}\n${rows}</table></div>`;

/** `dir`: the eval folder as seen from the page (links to runs/ are relative to it). */
export function renderEvalHtml(file: EvalFile, { dir }: { dir: string }): string {
  const s = file.summary;
  const policies = file.settings.policies;
  const next = whatNext(file, { dir });
  const unsandboxed = s.unsandboxed_runs
    ? `<p class="warn">${escape(UNSANDBOXED_NOTE)} (${s.unsandboxed_runs} runs; sandbox ${
      escape(file.settings.sandbox.mode)
    })</p>`
    : "";
  const verdicts = s.pairs.map((pair) =>
    `<div class="verdict ${escape(pair.verdict)}"><b>${escape(pair.candidate)} vs ${escape(pair.baseline)}: ${
      escape(pair.verdict.replaceAll("_", " "))
    }</b><p>${escape(pair.sentence)}</p></div>`
  ).join("\n");
  const nextRuns = next.runs.length
    ? `<ul>${
      next.runs.map((r) =>
        `<li>${escape(r.task)} · ${escape(r.policy)} (${escape(r.solved)}): ${link(r.check, "check.txt")} · ${
          link(r.recording, "recording.jsonl")
        } · ${link(r.check.replace(/check\.txt$/, "report.json"), "report.json")} · ${
          link(r.check.replace(/check\.txt$/, "changes.txt"), "changes.txt")
        }</li>`
      ).join("\n")
    }</ul>`
    : "";
  // Cost and cost per solved task come right after the counts, so a narrow screen shows them without scrolling.
  // Without a price, a local model's cost is its time: seconds (and tokens) per run and per solved run.
  const timed = unpriced(file);
  const tokens = (x: number | null | undefined) => (x === null || x === undefined ? "n/a" : String(Math.round(x)));
  const spent = (p: (typeof s.policies)[number]) =>
    timed
      ? `<td>${secondsText(p.seconds_per_run)} · ${tokens(p.tokens_per_run)} tokens</td><td>${
        secondsText(p.seconds_per_solved)
      } · ${tokens(p.tokens_per_solved)} tokens</td>`
      : `<td>${usd(p.cost)}${p.runs_without_cost ? ` (+${p.runs_without_cost} without)` : ""}</td><td>${
        usd(p.cost_per_solved)
      }</td>`;
  const policyRows = s.policies.map((p) =>
    `<tr><td>${escape(p.policy)}</td><td>${p.solved}/${p.runs}</td>${spent(p)}<td>${pct(p.solve_rate.estimate)} (${
      pct(p.solve_rate.low)
    }–${pct(p.solve_rate.high)})</td><td>${bar(p.solve_rate, { from: 0, to: 1, format: pct })}</td><td>${
      pct(p.pass_all)
    }</td><td>${p.median_steps ?? "n/a"}</td><td>${p.model_calls}</td></tr>`
  ).join("\n");
  const taskRows = s.per_task.map((t) =>
    `<tr><td>${escape(t.task)}</td>${
      policies.map((p) => {
        const c = t.policies[p];
        return c
          ? `<td>${c.solved}/${c.runs}</td><td>${timed ? secondsText(c.mean_seconds) : usd(c.mean_cost)}</td><td>${
            c.median_steps ?? "-"
          }</td>`
          : "<td>-</td><td>-</td><td>-</td>";
      }).join("")
    }</tr>`
  ).join("\n");
  const title = escape(file.suite.name ?? file.suite.path);
  const uncountedLine = uncountedText(file);
  const uncounted = uncountedLine ? `<p>${escape(uncountedLine)}</p>\n` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>loom eval: ${title}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:1em auto;padding:0 1em;max-width:72em}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.2em .6em;text-align:left;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}.bar{width:100%;min-width:14em;max-width:36em;height:auto;display:block}
.verdict{border-left:6px solid #888;background:#f6f6f6;padding:.4em .8em;margin:.6em 0}
.verdict b{font-size:1.2em}.verdict.inferior{border-color:#b00}.verdict.non_inferior_and_cheaper{border-color:#080}
.verdict p{margin:.3em 0;overflow-wrap:anywhere}.warn{color:#b00;font-weight:bold}li{overflow-wrap:anywhere}
h1{font-size:1.4em;overflow-wrap:anywhere}</style></head><body>
<h1>loom eval: ${title}</h1>
${verdicts}
${unsandboxed}
<p><b>${escape(next.line)}</b></p>
${nextRuns}
${uncounted}<p>${escape(headline(file))}; ${
    escape(file.settings.models.join(", "))
  }; ${file.settings.repeats} repeat(s); seed ${escape(file.settings.seed)}</p>
<h2>Policies</h2>
${
    table(
      `<tr><th>policy</th><th>solved</th>${
        timed ? "<th>time per run</th><th>per solved</th>" : "<th>cost</th><th>per solved</th>"
      }<th>solve rate (95 % CI)</th><th>0–100 %</th><th>pass^${file.settings.repeats}</th><th>median steps</th><th>calls</th></tr>`,
      policyRows,
    )
  }
${s.pairs.map(pairBlock).join("\n")}
${
    s.per_tag.length
      ? `<h2>Tags</h2>
${
        table(
          `<tr><th>tag</th><th>tasks</th>${policies.map((p) => `<th>${escape(p)} solve rate</th>`).join("")}</tr>`,
          s.per_tag.map((t) =>
            `<tr><td>${escape(t.tag)}</td><td>${t.tasks}</td>${
              policies.map((p) => `<td>${pct(t.policies[p]?.solve_rate ?? 0)}</td>`).join("")
            }</tr>`
          ).join("\n"),
        )
      }`
      : ""
  }
<h2>Tasks</h2>
${
    table(
      `<tr><th>task</th>${
        policies.map((p) =>
          `<th>${escape(p)} solved</th><th>${timed ? "mean time" : "mean cost"}</th><th>median steps</th>`
        ).join("")
      }</tr>`,
      taskRows,
    )
  }
</body></html>
`;
}
