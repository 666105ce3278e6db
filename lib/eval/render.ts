// The text of an evaluation's summary: plain sentences first (who solved how many tasks, the difference with its
// interval, the verdict at the stated margin and why, what the run could detect, the cost ratio), then what to do
// next (the disagreeing runs' artifacts, or the --resume command), then the per-task table.
import type { EvalFile, PolicySummary } from "./eval-file.ts";
import { UNSANDBOXED_NOTE } from "./summary.ts";
import { formatCount, plural } from "../text/numbers.ts";

const pct = (x: number) => `${Math.round(x * 100)}`;
export const usd = (x: number | null) => (x === null ? "n/a" : `$${x < 0.01 ? x.toFixed(5) : x.toFixed(4)}`);
/** Seconds as the summary prints them ("23.4 s"); n/a when unknown. */
export const secondsText = (x: number | null | undefined) =>
  x === null || x === undefined ? "n/a" : `${x < 10 ? x.toFixed(2) : x.toFixed(1)} s`;
const tokensText = (
  x: number | null | undefined,
) => (x === null || x === undefined ? "n/a" : formatCount(Math.round(x)));

/**
 * No run of the evaluation had a price, counted or not: its cost is its time (a local model), shown in seconds and
 * tokens. An interrupted priced evaluation with no counted run still shows cost (n/a, and what it spent uncounted).
 */
export const unpriced = (file: EvalFile) => file.rows.every((row) => row.cost === null);

/** A policy's time and tokens, per run and per solved run: what a local model's runs cost. */
function timeText(p: PolicySummary): string {
  return `time ${secondsText(p.seconds_per_run)} per run, ${secondsText(p.seconds_per_solved)} per solved; tokens ${
    tokensText(p.tokens_per_run)
  } per run, ${tokensText(p.tokens_per_solved)} per solved`;
}

/** What the runs outside the statistics spent, in one line; null when there are none. */
export function uncountedText(file: EvalFile): string | null {
  const u = file.summary.uncounted;
  if (!u || u.runs === 0) return null;
  return `not counted: ${plural(u.runs, "run")} (interrupted, or re-run after an infra failure) spent ${
    u.cost === null ? "no priced money" : usd(u.cost)
  } in ${plural(u.model_calls, "call")} and ${secondsText(u.seconds)}; kept in eval.json, not in the figures`;
}

/** One disagreeing run: where its hidden check's output and its recording are. */
export type NextRun = { task: string; policy: string; solved: string; check: string; recording: string };

/** What to do next: continue an unfinished evaluation, or look at the runs where the policies disagree. */
export type WhatNext = { line: string; resume: string | null; runs: NextRun[] };

/** Paths are under `dir`, the folder of eval.json as the user named it. */
export function whatNext(file: EvalFile, { dir }: { dir: string }): WhatNext {
  const under = (...parts: string[]) => [dir, ...parts].join("/").replace(/^\.\//, "");
  if (!file.complete && file.stopped !== null) {
    const resume = resumeCommand(file, dir);
    return {
      line: `continue: ${resume} (with the same --task, --tag and --prices, if you gave any)`,
      resume,
      runs: [],
    };
  }
  const runs: NextRun[] = [];
  for (const pair of file.summary.pairs) {
    for (const d of pair.disagreements) {
      for (const row of file.rows) {
        if (!row.counted || row.task !== d.task || (row.policy !== pair.baseline && row.policy !== pair.candidate)) {
          continue;
        }
        if (runs.some((r) => r.check.includes(`/${row.id}/`))) continue;
        const at = ["runs", row.id, `attempt-${row.attempt}`];
        runs.push({
          task: row.task,
          policy: row.policy,
          solved: row.class,
          check: under(...at, "check.txt"),
          recording: under(...at, "recording.jsonl"),
        });
      }
    }
  }
  if (runs.length === 0) {
    return { line: "next: the policies agree on every task; more tasks narrow the interval", resume: null, runs };
  }
  const tasks = [...new Set(runs.map((r) => r.task))];
  return {
    line: `next: read the check output and recording of the ${tasks.length} task${
      tasks.length === 1 ? "" : "s"
    } where the policies disagree (${tasks.join(", ")})`,
    resume: null,
    runs,
  };
}

/** The command that continues this evaluation: its settings as flags, the same folder, --resume. */
function resumeCommand(file: EvalFile, dir: string): string {
  const s = file.settings;
  const quote = (x: string) => (/^[\w@%+=:,./-]+$/.test(x) ? x : `'${x.replaceAll("'", "'\\''")}'`);
  const args = [
    "loom",
    "eval",
    file.suite.path,
    ...s.models.flatMap((m) => ["-m", m]),
    "--policies",
    s.policies.join(","),
    "--repeats",
    String(s.repeats),
    "--seed",
    s.seed,
    "--margin",
    String(Math.round(s.margin * 1e6) / 1e4),
    "--cost-margin",
    String(Math.round(s.cost_margin * 1e6) / 1e4),
    "--retries",
    String(s.retries),
    "--run-timeout",
    String(s.run_timeout_ms / 1000),
    "--step-protocol",
    s.step_protocol,
    ...(s.cache_marker ? [] : ["--no-cache-marker"]),
    ...(s.sandbox.mode === "off" ? ["--sandbox", "off"] : []),
    ...(file.shard ? ["--shard", `${file.shard.index}/${file.shard.count}`] : []),
    "--out",
    dir,
    "--resume",
  ];
  return args.map(quote).join(" ");
}

function policyLine(p: PolicySummary, file: EvalFile): string {
  const cost = unpriced(file)
    ? timeText(p)
    : `cost ${usd(p.cost)}${
      p.runs_without_cost ? ` (+${plural(p.runs_without_cost, "run")} without a cost)` : ""
    }; per solved ${usd(p.cost_per_solved)}; on common tasks ${usd(p.cost_on_common)}`;
  return `  ${p.policy.padEnd(8)} solved ${p.solved}/${p.runs} runs; solve rate ${
    pct(p.solve_rate.estimate)
  } % (95 % CI ${pct(p.solve_rate.low)}–${pct(p.solve_rate.high)}); pass^${file.settings.repeats} ${
    pct(p.pass_all)
  } %; pass@1 ${pct(p.pass_at_1)} %; ${cost}; median ${
    p.median_steps === null ? "n/a" : formatCount(p.median_steps)
  } steps; ${plural(p.model_calls, "call")}; ${
    p.cache_read === null ? "n/a" : formatCount(p.cache_read)
  } cache-read tokens`;
}

/** The first line: suite, counts, and whether it is complete, rescored or unsandboxed. */
export function headline(file: EvalFile): string {
  const s = file.summary;
  const shard = file.shard ? ` (shard ${file.shard.index}/${file.shard.count})` : "";
  return `eval ${
    file.suite.name ?? file.suite.path
  }${shard}: ${s.runs} runs counted (${s.attempts} started, ${s.infra_retries} infra retries, ${s.dropped_pairs.length} pairs dropped)${
    file.complete ? "" : " — INCOMPLETE"
  }${file.stopped ? `; stopped: ${file.stopped}` : ""}${
    s.rescored
      ? `; rescored${
        file.rescore?.changed_checks.length
          ? ` with ${file.rescore.changed_checks.length} changed check(s): ${
            file.rescore.changed_checks.map((c) => c.task).join(", ")
          }`
          : ""
      }`
      : ""
  }; sandbox ${file.settings.sandbox.mode}`;
}

export function renderEvalText(file: EvalFile, { dir }: { dir: string }): string {
  const s = file.summary;
  const note = s.unsandboxed_runs ? `; ${UNSANDBOXED_NOTE}` : "";
  const lines: string[] = [headline(file) + note];
  for (const p of s.policies) lines.push(policyLine(p, file) + note);
  const uncounted = uncountedText(file);
  if (uncounted) lines.push(uncounted);
  for (const pair of s.pairs) {
    lines.push(pair.sentence);
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
  const next = whatNext(file, { dir });
  lines.push(next.line);
  for (const run of next.runs) {
    lines.push(`  ${run.task} ${run.policy} (${run.solved}): ${run.check}  ${run.recording}`);
  }
  const policies = file.settings.policies;
  if (s.per_tag.length) {
    lines.push("", "by tag (mean per-task solve rate):");
    for (const t of s.per_tag) {
      lines.push(
        `  ${t.tag.padEnd(16)} ${plural(t.tasks, "task").padEnd(9)}  ${
          policies.map((p) => `${p} ${pct(t.policies[p]?.solve_rate ?? 0)} %`).join("  ")
        }`,
      );
    }
  }
  const timed = unpriced(file);
  const measure = timed ? "time" : "cost";
  lines.push("", ["task".padEnd(28), ...policies.map((p) => `${p} solved / ${measure} / steps`.padEnd(34))].join(" "));
  for (const row of s.per_task) {
    lines.push(
      [
        row.task.padEnd(28),
        ...policies.map((p) => {
          const c = row.policies[p];
          const spent = timed ? secondsText(c?.mean_seconds) : usd(c?.mean_cost ?? null);
          return (c ? `${c.solved}/${c.runs}  ${spent}  ${c.median_steps ?? "-"}` : "-").padEnd(34);
        }),
      ].join(" ").trimEnd(),
    );
  }
  return `${lines.join("\n")}\n`;
}
