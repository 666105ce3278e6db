// The text of an evaluation's summary: plain sentences first (who solved how many tasks, the difference with its
// interval, the verdict at the stated margin, what the run could detect, the cost ratio), then the per-task table.
import type { EvalFile, PairSummary, PolicySummary } from "./eval-file.ts";

const pct = (x: number) => `${Math.round(x * 100)}`;
const signed = (x: number) => {
  const points = Math.round(x * 100);
  return points === 0 ? "0" : `${points > 0 ? "+" : "−"}${Math.abs(points)}`;
};
const usd = (x: number | null) => (x === null ? "n/a" : `$${x < 0.01 ? x.toFixed(5) : x.toFixed(4)}`);
const ratio = (x: number) => `${x.toFixed(2)}×`;

function tasksSolved(p: PolicySummary): string {
  return `${p.policy} ${Math.round(p.pass_at_1 * p.tasks * 100) / 100}/${p.tasks} tasks`;
}

/** One sentence per compared pair, e.g. "bounded 41/50 vs legacy 43/50 tasks (−4 points, 95 % CI −12 to +4); …". */
export function pairSentence(pair: PairSummary, policies: readonly PolicySummary[]): string {
  const a = policies.find((p) => p.policy === pair.baseline)!;
  const b = policies.find((p) => p.policy === pair.candidate)!;
  const d = pair.difference;
  const parts = [
    `${tasksSolved(b)} vs ${tasksSolved(a).replace(/ tasks$/, "")} tasks (${signed(d.estimate)} points, 95 % CI ${
      signed(d.low)
    } to ${signed(d.high)}; sign-flip p = ${pair.permutation_p.toFixed(3)}${
      pair.mcnemar_p === null ? "" : `, McNemar p = ${pair.mcnemar_p.toFixed(3)}`
    })`,
    `${pair.verdict.replaceAll("_", " ")} at a ${pct(pair.margin)}-point margin (${pair.reason})`,
    pair.detectable_difference === null
      ? "no detectable difference computed"
      : `could detect ≥ ${pct(pair.detectable_difference)} points`,
    pair.cost_ratio === null
      ? "cost ratio n/a (no priced runs)"
      : `cost ${ratio(pair.cost_ratio.estimate)} ${pair.baseline} (${pair.cost_ratio.low.toFixed(2)}–${
        pair.cost_ratio.high.toFixed(2)
      }; geometric mean of task ratios ${pair.cost_ratio_geomean === null ? "n/a" : ratio(pair.cost_ratio_geomean)})`,
  ];
  return parts.join("; ");
}

export function renderEvalText(file: EvalFile): string {
  const s = file.summary;
  const lines: string[] = [];
  const shard = file.shard ? ` (shard ${file.shard.index}/${file.shard.count})` : "";
  lines.push(
    `eval ${
      file.suite.name ?? file.suite.path
    }${shard}: ${s.runs} runs counted (${s.attempts} started, ${s.infra_retries} infra retries, ${s.dropped_pairs.length} pairs dropped)${
      file.complete ? "" : " — INCOMPLETE"
    }${file.stopped ? `; stopped: ${file.stopped}` : ""}`,
  );
  for (const p of s.policies) {
    lines.push(
      `  ${p.policy.padEnd(8)} solved ${p.solved}/${p.runs} runs; solve rate ${pct(p.solve_rate.estimate)} % (95 % CI ${
        pct(p.solve_rate.low)
      }–${pct(p.solve_rate.high)}); pass^${file.settings.repeats} ${pct(p.pass_all)} %; pass@1 ${
        pct(p.pass_at_1)
      } %; cost ${usd(p.cost)}${
        p.runs_without_cost ? ` (+${p.runs_without_cost} runs without a cost)` : ""
      }; per solved ${usd(p.cost_per_solved)}; on common tasks ${usd(p.cost_on_common)}; median ${
        p.median_steps ?? "n/a"
      } steps; ${p.model_calls} calls; ${p.cache_read ?? "n/a"} cache-read tokens`,
    );
  }
  for (const pair of s.pairs) {
    lines.push(pairSentence(pair, s.policies));
    if (pair.disagreements.length) {
      lines.push(
        `  disagree: ${
          pair.disagreements.map((t) =>
            `${t.task} (${pair.baseline} ${pct(t.baseline)} %, ${pair.candidate} ${pct(t.candidate)} %)`
          )
            .join(", ")
        }`,
      );
    }
  }
  const policies = file.settings.policies;
  if (s.per_tag.length) {
    lines.push("", "by tag (mean per-task solve rate):");
    for (const t of s.per_tag) {
      lines.push(
        `  ${t.tag.padEnd(16)} ${t.tasks} tasks  ${
          policies.map((p) => `${p} ${pct(t.policies[p]?.solve_rate ?? 0)} %`).join("  ")
        }`,
      );
    }
  }
  lines.push("", ["task".padEnd(28), ...policies.map((p) => `${p} solved / cost / steps`.padEnd(34))].join(" "));
  for (const row of s.per_task) {
    lines.push(
      [
        row.task.padEnd(28),
        ...policies.map((p) => {
          const c = row.policies[p];
          return (c ? `${c.solved}/${c.runs}  ${usd(c.mean_cost)}  ${c.median_steps ?? "-"}` : "-").padEnd(34);
        }),
      ].join(" ").trimEnd(),
    );
  }
  return `${lines.join("\n")}\n`;
}
