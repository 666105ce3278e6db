// Putting an eval.json together from rows: the canonical row order, the summary, and the merge of shards — pure, so
// a merge recomputes exactly what one process would have written.
import { canonicalJson } from "../text/digest.ts";
import { EVAL_SCHEMA_VERSION, type EvalFile, type EvalKey, type EvalRow, type EvalSettings } from "./eval-file.ts";
import { summarize } from "./summary.ts";

/** Why two keys cannot be mixed, in words (the first difference), or null when they match. */
export function keyMismatch(a: EvalKey, b: EvalKey): string | null {
  if (a.loom_version !== b.loom_version) return `Loom versions differ (${a.loom_version} vs ${b.loom_version})`;
  if (a.suite !== b.suite) return "the suite file changed";
  for (const task of new Set([...Object.keys(a.tasks), ...Object.keys(b.tasks)])) {
    if (a.tasks[task] !== b.tasks[task]) return `task ${JSON.stringify(task)} changed (its files, check or settings)`;
  }
  if (a.prices !== b.prices) return "the price table changed";
  if (a.settings !== b.settings) return "the settings differ (models, policies, repeats, seed, margin, retries…)";
  return null;
}

/** Canonical row order: suite task order, model, repeat, policy order, attempt. */
function sortRows(rows: EvalRow[], settings: EvalSettings, tasks: readonly string[]): EvalRow[] {
  const rank = (list: readonly string[], x: string) => list.indexOf(x);
  return [...rows].sort((a, b) =>
    rank(tasks, a.task) - rank(tasks, b.task) || rank(settings.models, a.model) - rank(settings.models, b.model) ||
    a.repeat - b.repeat || rank(settings.policies, a.policy) - rank(settings.policies, b.policy) ||
    a.attempt - b.attempt
  );
}

export type EvalBase = Omit<EvalFile, "rows" | "summary" | "kind" | "schema_version" | "loom_version">;

export function buildEvalFile(
  base: EvalBase,
  { rows, dropped, version }: { rows: EvalRow[]; dropped: readonly string[]; version: string },
): EvalFile {
  const sorted = sortRows(rows, base.settings, base.suite.tasks);
  return {
    kind: "eval",
    schema_version: EVAL_SCHEMA_VERSION,
    loom_version: version,
    ...base,
    rows: sorted,
    summary: summarize(sorted, {
      tasks: base.suite.tasks,
      tags: base.suite.tags,
      policies: base.settings.policies,
      repeats: base.settings.repeats,
      margin: base.settings.margin,
      costMargin: base.settings.cost_margin,
      rescored: base.rescore !== null,
      seed: base.settings.seed,
      droppedPairs: [...dropped].sort(),
    }),
  };
}

/**
 * The shards of one evaluation as the file one process would have written: the same key and settings, each shard
 * index of the same count at most once; rows joined and the summary recomputed. Missing shards make it incomplete.
 */
export function mergeEvalFiles(
  files: readonly EvalFile[],
  { version }: { version: string },
): { ok: true; file: EvalFile } | { ok: false; reason: string } {
  const [first] = files;
  if (!first) return { ok: false, reason: "no eval.json given" };
  for (const file of files.slice(1)) {
    const mismatch = keyMismatch(first.key, file.key);
    if (mismatch) return { ok: false, reason: `the shards cannot be merged: ${mismatch}` };
    if (canonicalJson(first.settings) !== canonicalJson(file.settings)) {
      return { ok: false, reason: "the shards cannot be merged: their settings differ" };
    }
  }
  const counts = new Set(files.map((f) => f.shard?.count ?? 1));
  if (counts.size !== 1) return { ok: false, reason: "the shards split the matrix differently (different n in i/n)" };
  const indices = files.map((f) => f.shard?.index ?? 1);
  const twice = indices.find((index, i) => indices.indexOf(index) !== i);
  if (twice !== undefined) return { ok: false, reason: `shard ${twice} is given twice` };
  const [count] = counts;
  const rows = files.flatMap((f) => f.rows);
  const dropped = files.flatMap((f) => f.summary.dropped_pairs);
  const stopped = files.map((f) => f.stopped).find((s) => s !== null) ?? null;
  const changed = files.flatMap((f) => f.rescore?.changed_checks ?? []);
  const seen = new Set<string>();
  return {
    ok: true,
    file: buildEvalFile({
      suite: first.suite,
      key: first.key,
      settings: first.settings,
      shard: null,
      complete: files.length === count && files.every((f) => f.complete),
      stopped,
      rescore: files.some((f) => f.rescore !== null)
        ? { changed_checks: changed.filter((c) => !seen.has(c.task) && seen.add(c.task)) }
        : null,
    }, { rows, dropped, version }),
  };
}
