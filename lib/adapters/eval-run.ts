// Runs an evaluation: every pair of the (shard of the) matrix in its seeded order, each run a real `loom run` lifecycle
// (startRun, sandbox included) in a fresh workspace copy, then the hidden check in a fresh sandbox. Artifacts land
// under DIR/runs/; DIR/eval.json is rewritten atomically after every pair, so an interrupt keeps what finished and
// --resume continues from it — only when every content hash still matches.
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requestBytes } from "../context-report.ts";
import { canonicalJson, digestOf } from "../digest.ts";
import { InterruptedError, UsageError } from "../errors.ts";
import { EvalFile, type EvalKey, type EvalRow, type EvalSettings } from "../eval/eval-file.ts";
import { buildEvalFile as assemble, keyMismatch } from "../eval/assemble.ts";
import { failureClass } from "../eval/failure-class.ts";
import {
  allPairs,
  type Pair,
  pairKey,
  runId,
  type RunKey,
  schedule,
  type ScheduledPair,
  type Shard,
  shardPairs,
} from "../eval/matrix.ts";
import type { PriceTable } from "../prices.ts";
import type { SliceRequest } from "../slice.ts";
import { readJson } from "../json-text.ts";
import { formatZodError } from "../zod-error.ts";
import { VERSION } from "../version.ts";
import type { Provider } from "../turn.ts";
import { changesSince, createWorkspace, describeChanges, snapshot } from "./eval-workspace.ts";
import { runCheck } from "./eval-check.ts";
import type { LoadedSuite } from "./eval-suite-file.ts";
import { writeFileAtomic } from "./files.ts";
import type { SandboxMode } from "./sandbox.ts";
import { secretEnvNames, startRun } from "./start-run.ts";

export type EvalOptions = {
  out: string;
  settings: EvalSettings;
  shard: Shard | null;
  jobs: number;
  resume: boolean;
  prices: PriceTable;
  maxCost: number | null;
  sandbox: SandboxMode;
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
  http?: { timeoutMs?: number; deadlineMs?: number };
  /** Tests and the benchmark: a provider per run instead of the one the model names. */
  provider?: (run: RunKey) => Provider | undefined;
  onProgress?: (progress: EvalProgress) => void;
  warn?: (message: string) => void;
  now?: () => number;
};

export type EvalProgress = {
  done: number;
  total: number;
  solved: number;
  infra: number;
  spent: number;
  eta_ms: number | null;
};

export function evalKey(loaded: LoadedSuite, { tasks, prices, settings }: {
  tasks: Record<string, string>;
  prices: PriceTable;
  settings: EvalSettings;
}): EvalKey {
  return {
    suite: digestOf(loaded.text),
    tasks,
    prices: digestOf(canonicalJson(prices)),
    loom_version: VERSION,
    settings: digestOf(canonicalJson(settings)),
  };
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

const pairStem = (p: Pair) => runId({ ...p, policy: "legacy" }).replace(/\.legacy\./, ".");

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
  }
  const whole = schedule(allPairs({ tasks: taskIds, models: settings.models, repeats: settings.repeats }), {
    policies: settings.policies,
    seed: settings.seed,
  });
  const mine = new Set(
    shardPairs(allPairs({ tasks: taskIds, models: settings.models, repeats: settings.repeats }), shard).map(pairKey),
  );
  const order = new Map(whole.map((p, i) => [pairKey(p), i]));
  const finished = (p: Pair) =>
    rows.some((r) => r.counted && pairKey(r) === pairKey(p)) || dropped.includes(pairStem(p));
  const queue = whole.filter((p) => mine.has(pairKey(p)) && !finished(p));
  const total = whole.filter((p) => mine.has(pairKey(p))).length * settings.policies.length;

  let stopped: string | null = null;
  let interrupted = false;
  const base = () => ({
    suite: { name: loaded.suite.name ?? null, path: loaded.file, tasks: taskIds },
    key,
    settings,
    shard,
    complete: whole.every((p) => !mine.has(pairKey(p)) || finished(p)),
    stopped,
  });
  const write = () => {
    const file = assemble(base(), { rows, dropped, version: VERSION });
    writeFileAtomic(evalPath, `${JSON.stringify(file, null, 2)}\n`);
    return file;
  };
  write();

  const started = now();
  let doneAtStart = rows.filter((r) => r.counted).length;
  const spent = () => rows.reduce((s, r) => s + (r.cost?.total ?? 0), 0);
  const progress = () => {
    const counted = rows.filter((r) => r.counted);
    const done = counted.length + dropped.length * settings.policies.length;
    const rate = (now() - started) / Math.max(1, done - doneAtStart);
    options.onProgress?.({
      done,
      total,
      solved: counted.filter((r) => r.class === "solved").length,
      infra: rows.filter((r) => r.class === "infra").length,
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
      const pair = queue.shift()!;
      const result = await runPair(pair, order.get(pairKey(pair))!, { loaded, options, rows, now });
      if (result === "interrupted") {
        interrupted = true;
        break;
      }
      rows = [...rows, ...result.rows];
      if (result.dropped) dropped = [...dropped, pairStem(pair)];
      write();
      progress();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.jobs) }, () => next()));
  if (interrupted) stopped = "interrupted";
  doneAtStart = 0;
  return { file: write(), interrupted };
}

/** Runs both halves of a pair; an infra failure of either re-runs both, up to `retries` times, then drops it. */
async function runPair(
  pair: ScheduledPair,
  position: number,
  { loaded, options, rows, now }: { loaded: LoadedSuite; options: EvalOptions; rows: EvalRow[]; now: () => number },
): Promise<{ rows: EvalRow[]; dropped: boolean } | "interrupted"> {
  const previous = rows.filter((r) => pairKey(r) === pairKey(pair));
  const first = previous.reduce((m, r) => Math.max(m, r.attempt), 0) + 1;
  const out: EvalRow[] = [];
  for (let attempt = first; attempt <= options.settings.retries + 1; attempt++) {
    const attemptRows: EvalRow[] = [];
    for (const [i, policy] of pair.policies.entries()) {
      const row = await runOne({ ...pair, policy }, {
        attempt,
        order: position * pair.policies.length + i,
        loaded,
        options,
        now,
      });
      if (row === "interrupted") return "interrupted";
      attemptRows.push(row);
    }
    const infra = attemptRows.some((r) => r.class === "infra");
    out.push(...attemptRows.map((r) => ({ ...r, counted: !infra })));
    if (!infra) return { rows: out, dropped: false };
  }
  return { rows: out, dropped: true };
}

/** One run: fresh workspace, the run lifecycle, the hidden check, the artifacts; "interrupted" keeps nothing. */
async function runOne(
  run: RunKey,
  { attempt, order, loaded, options, now }: {
    attempt: number;
    order: number;
    loaded: LoadedSuite;
    options: EvalOptions;
    now: () => number;
  },
): Promise<EvalRow | "interrupted"> {
  const begun = now();
  const task = loaded.tasks.find((t) => t.id === run.task)!;
  const id = runId(run);
  const dir = join(options.out, "runs", id, `attempt-${attempt}`);
  rmSync(dir, { recursive: true, force: true });
  const scratch = mkdtempSync(join(tmpdir(), "loom-eval-"));
  const workspace = join(scratch, "workspace");
  try {
    let setupError: string | null = null;
    let before = new Map<string, string>();
    try {
      createWorkspace(task, { suiteDir: loaded.dir, dest: workspace });
      before = snapshot(workspace);
    } catch (error) {
      setupError = (error as Error).message;
    }
    // The marker makes each run's prefix unique, so no run can read a cache another run wrote.
    const marker = options.settings.cache_marker
      ? `[loom eval run ${id} attempt ${attempt} ${randomBytes(6).toString("hex")}]\n\n`
      : "";
    const request: SliceRequest = {
      intent: task.intent,
      instructions: marker + task.instructions,
      workspace,
      actions: task.actions,
      test: task.test!,
      model: run.model,
      limits: { max_steps: task.max_steps },
      ...(task.commands.length ? { commands: task.commands } : {}),
    };
    const afterSetup = now();
    const result = setupError === null
      ? await startRun({ request }, {
        contextPolicy: run.policy,
        contextReport: join(dir, "report.json"),
        record: join(dir, "recording.jsonl"),
        signal: options.signal,
        env: options.env,
        sandbox: options.sandbox,
        prices: options.prices,
        warn: options.warn,
        http: options.http,
        provider: options.provider?.(run),
      })
      : null;
    const runEnd = now();
    if (result?.outcome === "interrupted" && options.signal?.aborted) return "interrupted";
    const ranLoop = result !== null && result.outcome !== "startup_failed";
    let check = null;
    if (ranLoop) {
      const changes = changesSince(before, workspace);
      writeFileAtomic(join(dir, "changes.json"), `${JSON.stringify(changes)}\n`);
      writeFileAtomic(join(dir, "changes.txt"), describeChanges(changes));
      let checked;
      try {
        checked = await runCheck(task.check, workspace, {
          suiteDir: loaded.dir,
          sandbox: options.sandbox,
          env: options.env,
          signal: options.signal,
          secretEnvNames: secretEnvNames(),
        });
      } catch (error) {
        if (error instanceof InterruptedError) return "interrupted";
        throw error;
      }
      if (options.signal?.aborted) return "interrupted";
      writeFileAtomic(join(dir, "check.txt"), checked.output);
      check = checked;
    }
    const report = result?.report ?? null;
    const outcome = result?.outcome ?? "startup_failed";
    const errorCode = result ? result.error?.code ?? null : "workspace_setup_failed";
    if (setupError !== null) writeFileAtomic(join(dir, "error.txt"), `${setupError}\n`);
    const row: EvalRow = {
      id,
      task: run.task,
      model: run.model,
      policy: run.policy,
      repeat: run.repeat,
      attempt,
      counted: true,
      order,
      outcome,
      error_code: errorCode,
      check: check && {
        passed: check.passed,
        exit_code: check.exit_code,
        timed_out: check.timed_out,
        skipped_tests: check.skipped_tests,
        duration_ms: check.duration_ms,
      },
      class: failureClass({ outcome, error_code: errorCode, check }),
      steps: result?.steps ?? 0,
      model_calls: report?.model_calls ?? 0,
      usage: report?.usage ?? { input: null, cache_read: null, cache_write: null, output: null },
      cost: report?.cost ?? null,
      wall_ms: runEnd - afterSetup,
      overhead_ms: 0,
      checkpoints: report?.checkpoints ?? 0,
      lookups: report ? report.retrievals.result + report.retrievals.list_history + report.retrievals.read_history : 0,
      request_bytes: report ? requestBytes(report.phases).total : 0,
    };
    row.overhead_ms = Math.max(0, now() - begun - row.wall_ms);
    return row;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
