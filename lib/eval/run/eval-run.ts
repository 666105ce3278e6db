// Runs an evaluation: every pair of the (shard of the) matrix in its seeded order, each run a real `loom run` lifecycle
// (startRun, sandbox included) in a fresh workspace copy, then the hidden check in a fresh sandbox. Artifacts land
// under DIR/runs/; DIR/eval.json is rewritten atomically after every pair, so an interrupt keeps what finished (and,
// uncounted, what the runs in flight spent) and --resume continues from it — only when every content hash still
// matches.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson, digestOf } from "../../text/digest.ts";
import { UsageError } from "../../errors.ts";
import { EvalFile, type EvalKey, type EvalRow, type EvalSettings } from "../eval-file.ts";
import { buildEvalFile as assemble, keyMismatch } from "../assemble.ts";
import { interruptedAttempts, wasInterrupted } from "../failure-class.ts";
import {
  allPairs,
  type Pair,
  pairId,
  pairKey,
  schedule,
  type ScheduledPair,
  type Shard,
  shardPairs,
} from "../matrix.ts";
import type { PriceTable } from "../../prices.ts";
import { readJson } from "../../text/json-text.ts";
import { formatZodError } from "../../text/zod-error.ts";
import { VERSION } from "../../version.ts";
import type { LoadedSuite } from "./eval-suite-file.ts";
import { writeFileAtomic } from "../../io/files.ts";
import { type AttemptSettings, runAttempt } from "./eval-attempt.ts";

export type EvalOptions = AttemptSettings & {
  shard: Shard | null;
  jobs: number;
  resume: boolean;
  maxCost: number | null;
  onProgress?: (progress: EvalProgress) => void;
};

export type EvalProgress = {
  done: number;
  total: number;
  solved: number;
  infra: number;
  spent: number;
  eta_ms: number | null;
};

export function evalKey(loaded: LoadedSuite, { tasks, checks, prices, settings }: {
  tasks: Record<string, string>;
  checks: Record<string, string>;
  prices: PriceTable;
  settings: EvalSettings;
}): EvalKey {
  return {
    suite: digestOf(loaded.text),
    tasks,
    checks,
    prices: digestOf(canonicalJson(prices)),
    loom_version: VERSION,
    settings: digestOf(canonicalJson(settings)),
  };
}

/**
 * Writes eval.json only when it reads back: a file the schema refuses (a counter past 2^53, say) would make the
 * results unreadable to report, --resume, --merge and rescore, so it is refused here, in one line, instead.
 */
export function writeEvalFile(path: string, file: EvalFile): void {
  const checked = EvalFile.safeParse(file);
  if (!checked.success) {
    throw new UsageError(
      `${JSON.stringify(path)} not written: it would not be a valid eval.json (${formatZodError(checked.error)})`,
      "eval_invalid",
    );
  }
  writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
}

export function readEvalFile(path: string): EvalFile {
  const json = readJson(readFileSync(path, "utf8"));
  if (!json.ok) throw new UsageError(`${JSON.stringify(path)} is not JSON`, "eval_invalid");
  const parsed = EvalFile.safeParse(json.value);
  if (!parsed.success) {
    throw new UsageError(
      `${JSON.stringify(path)} is not a valid eval.json: ${formatZodError(parsed.error)}`,
      "eval_invalid",
    );
  }
  return parsed.data;
}

/** Runs the evaluation; returns the file as last written and how it ended. */
export async function runEval(
  loaded: LoadedSuite,
  key: EvalKey,
  options: EvalOptions,
): Promise<{ file: EvalFile; interrupted: boolean }> {
  const now = options.now ?? (() => performance.now());
  const { settings, shard, out } = options;
  const evalPath = join(out, "eval.json");
  const taskIds = loaded.tasks.map((t) => t.id);
  let rows: EvalRow[] = [];
  let dropped: string[] = [];
  let rescore: EvalFile["rescore"] = null;
  if (existsSync(evalPath)) {
    if (!options.resume) {
      throw new UsageError(
        `${JSON.stringify(evalPath)} already holds an evaluation: add --resume, or choose another --out`,
      );
    }
    const previous = readEvalFile(evalPath);
    const mismatch = keyMismatch(previous.key, key);
    if (mismatch) throw new UsageError(`Cannot resume ${JSON.stringify(evalPath)}: ${mismatch}`, "eval_key_mismatch");
    if (canonicalJson(previous.shard) !== canonicalJson(shard)) {
      throw new UsageError(`Cannot resume ${JSON.stringify(evalPath)}: it holds another shard`, "eval_key_mismatch");
    }
    rows = previous.rows;
    dropped = previous.summary.dropped_pairs;
    rescore = previous.rescore;
  } else if (options.resume) {
    // Not refused (a re-run shard passes --resume from its first try), but said: a mistyped --out would otherwise
    // silently start over and spend again.
    options.warn?.(
      `--resume: ${JSON.stringify(out)} holds no evaluation yet (no eval.json), so this starts a new one`,
    );
  }
  const whole = schedule(allPairs({ tasks: taskIds, models: settings.models, repeats: settings.repeats }), {
    policies: settings.policies,
    seed: settings.seed,
  });
  const mine = new Set(
    shardPairs(allPairs({ tasks: taskIds, models: settings.models, repeats: settings.repeats }), shard).map(pairKey),
  );
  const order = new Map(whole.map((p, i) => [pairKey(p), i]));
  const finished = (p: Pair) => rows.some((r) => r.counted && pairKey(r) === pairKey(p)) || dropped.includes(pairId(p));
  const queue = whole.filter((p) => mine.has(pairKey(p)) && !finished(p));
  const total = whole.filter((p) => mine.has(pairKey(p))).length * settings.policies.length;

  let stopped: string | null = null;
  let interrupted = false;
  const base = () => ({
    suite: {
      name: loaded.suite.name ?? null,
      path: loaded.file,
      tasks: taskIds,
      tags: Object.fromEntries(loaded.tasks.map((t) => [t.id, t.tags])),
    },
    key,
    settings,
    shard,
    complete: whole.every((p) => !mine.has(pairKey(p)) || finished(p)),
    stopped,
    rescore,
  });
  const write = () => {
    const file = assemble(base(), { rows, dropped, version: VERSION });
    writeEvalFile(evalPath, file);
    return file;
  };
  write();

  const started = now();
  const doneAtStart = rows.filter((r) => r.counted).length + dropped.length * settings.policies.length;
  const spent = () => rows.reduce((s, r) => s + (r.cost?.total ?? 0), 0);
  const progress = () => {
    const counted = rows.filter((r) => r.counted);
    const done = counted.length + dropped.length * settings.policies.length;
    const rate = (now() - started) / Math.max(1, done - doneAtStart);
    options.onProgress?.({
      done,
      total,
      solved: counted.filter((r) => r.class === "solved").length,
      infra: rows.filter((r) => r.class === "infra" && !wasInterrupted(r)).length,
      spent: spent(),
      eta_ms: done > doneAtStart ? rate * (total - done) : null,
    });
  };
  progress();

  const next = async (): Promise<void> => {
    while (queue.length > 0 && !interrupted && stopped === null) {
      if (options.maxCost !== null && spent() >= options.maxCost) {
        stopped = `--max-cost ${options.maxCost} reached ($${spent().toFixed(4)} spent)`;
        break;
      }
      // "!": the loop runs while the queue is not empty; order was built from the same pairs
      const pair = queue.shift()!;
      const result = await runPair(pair, order.get(pairKey(pair))!, { loaded, options, rows, now });
      // An interrupted pair's rows are kept for what they spent (written below, once every worker has stopped).
      rows = [...rows, ...result.rows];
      if (result.interrupted) {
        interrupted = true;
        // The last progress line says what the interrupted runs spent too, as eval.json keeps it.
        progress();
        break;
      }
      if (result.dropped) dropped = [...dropped, pairId(pair)];
      write();
      progress();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.jobs) }, () => next()));
  if (interrupted) stopped = "interrupted";
  return { file: write(), interrupted };
}

/**
 * Runs both halves of a pair; an infra failure of either re-runs both, up to `retries` times, then drops it. An
 * interrupt returns every row so far, uncounted: the attempts before, the half that finished, the run in flight. An
 * interrupted attempt uses up no retry: --resume runs the pair again under the next attempt number.
 */
async function runPair(
  pair: ScheduledPair,
  position: number,
  { loaded, options, rows, now }: { loaded: LoadedSuite; options: EvalOptions; rows: EvalRow[]; now: () => number },
): Promise<{ rows: EvalRow[]; dropped: boolean; interrupted: boolean }> {
  const previous = rows.filter((r) => pairKey(r) === pairKey(pair));
  const first = previous.reduce((m, r) => Math.max(m, r.attempt), 0) + 1;
  // The attempts that ended (an interrupted one did not) use up the retries.
  const ended = new Set(previous.map((r) => r.attempt)).size - interruptedAttempts(previous, pair.policies.length).size;
  const out: EvalRow[] = [];
  for (let attempt = first; attempt < first + options.settings.retries + 1 - ended; attempt++) {
    const attemptRows: EvalRow[] = [];
    for (const [i, policy] of pair.policies.entries()) {
      const row = await runAttempt({ ...pair, policy }, {
        attempt,
        order: position * pair.policies.length + i,
        loaded,
        options,
        now,
      });
      if ("interrupted" in row) {
        const spent = [...attemptRows, ...(row.interrupted ? [row.interrupted] : [])];
        return { rows: [...out, ...spent.map((r) => ({ ...r, counted: false }))], dropped: false, interrupted: true };
      }
      attemptRows.push(row);
    }
    const infra = attemptRows.some((r) => r.class === "infra");
    out.push(...attemptRows.map((r) => ({ ...r, counted: !infra })));
    if (!infra) return { rows: out, dropped: false, interrupted: false };
  }
  return { rows: out, dropped: true, interrupted: false };
}
