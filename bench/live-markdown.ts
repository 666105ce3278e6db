// The live table of bench/RESULTS.md (bun run bench:live): figures per policy and step protocol from the rows of the
// evaluations bench/live.ts ran against a local llama-server, rendered between the markers <!-- live --> and
// <!-- /live -->. Pure: bench/live.ts reads the files and writes the section.
import type { EvalRow, PairSummary } from "../lib/eval/eval-file.ts";

export const LIVE_START = "<!-- live -->";
export const LIVE_END = "<!-- /live -->";

/** The tiers of the live suite (its tasks' first matching tag), in the order the table shows them. */
export const TIERS = ["one-step", "few-step", "long-output"] as const;

/** A task's tier: its first tag that names one, else "all" (a suite without tiers). */
export function tierOf(tags: readonly string[] | undefined): string {
  return tags?.find((tag) => (TIERS as readonly string[]).includes(tag)) ?? "all";
}

/** What a run's recording says beyond its row. */
export type RecordingFacts = {
  /** Steps without a valid answer (no action ran). */
  invalid_answers: number;
  /** Refused actions, by refusal code. */
  refusals: Record<string, number>;
  /** The model chose finish. */
  finished: boolean;
  /** The first step whose visible tests passed (exit 0), or null. */
  tests_passed_step: number | null;
};

export type LiveRun = { protocol: string; tier: string; row: EvalRow; facts: RecordingFacts };

export type LiveCell = {
  protocol: string;
  tier: string;
  policy: string;
  runs: number;
  solved: number;
  steps: number;
  /** Prompt tokens the server evaluated (not read from its prompt cache), reused from it, and generated. */
  evaluated: number;
  reused: number;
  output: number;
  /** Runs where a counter was not reported: their tokens are missing from the sums. */
  unreported: number;
  seconds: number;
  invalid_answers: number;
  context_overflows: number;
  refusals: Record<string, number>;
  /** Runs whose check passed but whose model never chose finish. */
  solved_unfinished: number;
  /** Runs whose visible tests passed at some step and that still ended at the step limit. */
  passed_then_limit: number;
};

const OVERFLOW = new Set(["provider_context_exceeded"]);

/** One cell per (protocol, tier, policy) in first-seen order, over counted rows only (a dropped pair is no result). */
export function liveCells(runs: LiveRun[]): LiveCell[] {
  const cells = new Map<string, LiveCell>();
  for (const { protocol, tier, row, facts } of runs) {
    if (!row.counted) continue;
    const key = `${protocol}\u0000${tier}\u0000${row.policy}`;
    let cell = cells.get(key);
    if (cell === undefined) {
      cell = {
        protocol,
        tier,
        policy: row.policy,
        runs: 0,
        solved: 0,
        steps: 0,
        evaluated: 0,
        reused: 0,
        output: 0,
        unreported: 0,
        seconds: 0,
        invalid_answers: 0,
        context_overflows: 0,
        refusals: {},
        solved_unfinished: 0,
        passed_then_limit: 0,
      };
      cells.set(key, cell);
    }
    cell.runs += 1;
    if (row.class === "solved") cell.solved += 1;
    cell.steps += row.steps;
    const { input, cache_read, cache_write, output } = row.usage;
    if (input === null || cache_read === null || output === null) cell.unreported += 1;
    cell.evaluated += (input ?? 0) + (cache_write ?? 0);
    cell.reused += cache_read ?? 0;
    cell.output += output ?? 0;
    cell.seconds += row.wall_ms / 1000;
    cell.invalid_answers += facts.invalid_answers;
    if (row.error_code !== null && OVERFLOW.has(row.error_code)) cell.context_overflows += 1;
    for (const [code, n] of Object.entries(facts.refusals)) cell.refusals[code] = (cell.refusals[code] ?? 0) + n;
    if (row.class === "solved" && !facts.finished) cell.solved_unfinished += 1;
    if (facts.tests_passed_step !== null && row.outcome === "step_limit") cell.passed_then_limit += 1;
  }
  return [...cells.values()];
}

/**
 * Steps without a valid answer, from a run's recording (JSON lines): steps the model answered but where no action ran
 * (the recording holds an execution for every action that ran), i.e. an answer invalid twice, cut at the output limit
 * or refused. `cutShort`: the run ended with an error in its last step (a context overflow, a timeout), which is then
 * not counted.
 */
export function countInvalidAnswers(recording: string, { cutShort = false } = {}): number {
  return recordingFacts(recording, { cutShort }).invalid_answers;
}

/** Invalid answers, refusals by code, whether the model finished and when its visible tests first passed. */
export function recordingFacts(recording: string, { cutShort = false } = {}): RecordingFacts {
  const answered = new Set<number>();
  const executed = new Set<number>();
  const refusals: Record<string, number> = {};
  let finished = false;
  let passed: number | null = null;
  for (const line of recording.split("\n")) {
    let entry: {
      type?: unknown;
      step?: unknown;
      action?: unknown;
      report?: { kind?: unknown; code?: unknown; exit_code?: unknown };
    };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof entry.step !== "number" || entry.step < 1) continue; // classification answers are step 0
    if (entry.type === "answer") answered.add(entry.step);
    if (entry.type !== "execution") continue;
    executed.add(entry.step);
    const report = entry.report ?? {};
    if (report.kind === "refusal" && typeof report.code === "string") {
      refusals[report.code] = (refusals[report.code] ?? 0) + 1;
    }
    if (entry.action === "finish") finished = true;
    if (report.kind === "test" && report.exit_code === 0 && passed === null) passed = entry.step;
  }
  const last = Math.max(0, ...answered);
  const invalid = [...answered].filter((step) => !executed.has(step) && !(cutShort && step === last)).length;
  return { invalid_answers: invalid, refusals, finished, tests_passed_step: passed };
}

/** A protocol's evaluation, and its verdict per tier (bench/live.ts summarises each tier's rows alone). */
export type LiveVerdict = {
  protocol: string;
  tier: string;
  pair: PairSummary | null;
  runs: number;
  stopped: string | null;
};

export type LiveMeta = {
  date: string;
  minutes_budget: number;
  minutes_used: number;
  loom_commit: string;
  server_commit: string;
  model: string;
  weights_file: string;
  weights_sha256: string;
  context: number;
  threads: number;
  cores: number;
  suite: string;
  tasks: string[];
  /** The command that produced the table, for the reader to repeat it. */
  command?: string;
  /** Tasks per tier. */
  tiers?: Record<string, number>;
  /** What the build of the server used (its cmake flags past the portable ones), when known. */
  build?: string;
};

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const per = (total: number, by: number, digits = 0) =>
  by === 0 ? "—" : digits === 0 ? int(total / by) : (total / by).toFixed(digits);
const pct = (a: number, b: number) => (b === 0 ? "—" : `${((100 * a) / b).toFixed(0)} %`);
const codes = (refusals: Record<string, number>) =>
  Object.entries(refusals).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([c, n]) => `${c} ${n}`)
    .join(", ") || "0";

export function renderLive(cells: LiveCell[], verdicts: LiveVerdict[], meta: LiveMeta): string {
  const short = meta.minutes_budget < 30;
  const tiers = meta.tiers ? Object.entries(meta.tiers).map(([t, n]) => `${n} ${t}`).join(", ") : "";
  const lines = [
    "## Live: a real model on a local server",
    "",
    `Generated by \`${meta.command ?? `bun run bench:live --minutes ${meta.minutes_budget}`}\` on ${meta.date} (${
      meta.minutes_used.toFixed(1)
    }` +
    ` minutes used of a ${meta.minutes_budget}-minute budget; ${meta.cores} cores shared with other work, the server ` +
    `on ${meta.threads} thread(s))${
      short ? ": **a short run**, a first measurement, not a verdict" : ""
    }. Loom \`${meta.loom_commit}\`; llama.cpp's llama-server \`${meta.server_commit.slice(0, 12)}\` (built by ` +
    `scripts/live-model.sh${meta.build ? `, ${meta.build}` : ""}); \`${meta.model}\` = ${meta.weights_file} (sha256 ` +
    `\`${meta.weights_sha256}\`), context ${
      int(meta.context)
    } tokens per slot. Suite \`${meta.suite}\`: ${meta.tasks.length} tasks${tiers ? ` (${tiers})` : ""}.`,
    "",
    "| protocol | tier | policy | runs | solved | solve rate | tokens / step | s / step | tokens / solved | " +
    "s / solved | prompt evaluated | prompt reused | output | invalid answers | refusals by code | context overflows | " +
    "solved, never finished | tests passed, then step limit |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
  ];
  for (const c of cells) {
    const tokens = c.evaluated + c.reused + c.output;
    lines.push(
      `| ${c.protocol} | ${c.tier} | ${c.policy} | ${c.runs} | ${c.solved} | ${pct(c.solved, c.runs)} | ${
        per(tokens, c.steps)
      } | ${per(c.seconds, c.steps, 1)} | ${per(tokens, c.solved)} | ${per(c.seconds, c.solved, 1)} | ${
        int(c.evaluated)
      } | ${int(c.reused)} | ${int(c.output)} | ${c.invalid_answers} | ${
        codes(c.refusals)
      } | ${c.context_overflows} | ${c.solved_unfinished} | ${c.passed_then_limit} |`,
    );
  }
  if (cells.length === 0) lines.push("| — | — | — | 0 | 0 | — | — | — | — | — | — | — | — | — | — | — | — | — |");
  const unreported = cells.reduce((s, c) => s + c.unreported, 0);
  lines.push("");
  if (unreported > 0) {
    lines.push(`${unreported} run(s) had a token counter the server did not report; their tokens are not in the sums.`);
    lines.push("");
  }
  lines.push(
    "Tokens per step count every prompt token (evaluated or reused from the server's prompt cache) and every output " +
      "token; per solved task is the total over all runs divided by the runs solved. Seconds are the run's own wall " +
      "time (model calls, actions, tests), not the hidden check. Invalid answers counts the steps where no action ran " +
      "because the model gave no valid answer (invalid twice, cut at the output limit, or refused); refusals are " +
      "actions Loom refused, by code; a context overflow is a run the server refused as longer than its context " +
      "(`provider_context_exceeded`). Solved, never finished: the hidden check passed but the model never chose " +
      "finish. Tests passed, then step limit: the visible tests passed at some step and the run still ended at its " +
      "step limit.",
    "",
  );
  const points = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(0)}`;
  for (const { protocol, tier, pair, runs, stopped } of verdicts) {
    if (pair === null) {
      lines.push(`- **${protocol}, ${tier}**: no pair finished, no verdict.`);
      continue;
    }
    const d = pair.difference;
    lines.push(
      `- **${protocol}, ${tier}** (${pair.baseline} vs ${pair.candidate}, ${pair.tasks} tasks, ${runs} runs${
        stopped ? `, stopped: ${stopped}` : ""
      }): verdict \`${pair.verdict}\`; solve-rate difference ${points(d.estimate)} points (95 % ${points(d.low)} to ${
        points(d.high)
      }). ${pair.reason}`,
    );
  }
  return lines.join("\n");
}

/** `markdown` with the live section (between its markers) replaced by `section`, or appended when it has none. */
export function withLiveSection(markdown: string, section: string): string {
  const block = `${LIVE_START}\n${section.trim()}\n${LIVE_END}`;
  const start = markdown.indexOf(LIVE_START);
  const end = markdown.indexOf(LIVE_END);
  if (start >= 0 && end > start) return markdown.slice(0, start) + block + markdown.slice(end + LIVE_END.length);
  return `${markdown.trimEnd()}\n\n${block}\n`;
}

/** `fresh` (a regenerated RESULTS.md) with the live section taken verbatim from `previous`, when it has one. */
export function keepLiveSection(fresh: string, previous: string): string {
  const start = previous.indexOf(LIVE_START);
  const end = previous.indexOf(LIVE_END);
  if (start < 0 || end < start) return fresh;
  return withLiveSection(fresh, previous.slice(start + LIVE_START.length, end));
}
