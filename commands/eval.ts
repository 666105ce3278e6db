// loom eval SUITE …: matched live evaluations (SPEC §12). `loom eval validate SUITE` proves a suite's checks honest;
// `loom eval rescore DIR` re-runs the checks on the saved workspace changes without calling a model.
import { errorMessage } from "../lib/errors.ts";
import { join, relative, resolve } from "node:path";
import { describeFsError, StartupError, UsageError } from "../lib/errors.ts";
import type { EvalSettings } from "../lib/eval/eval-file.ts";
import { parseShard } from "../lib/eval/matrix.ts";
import { bestAgreeingInterval, tasksNeeded } from "../lib/eval/stats.ts";
import { lowerPrices, mergePrices, parsePrices, priceOf, pricesOf, type PriceTable } from "../lib/prices.ts";
import { readTableFile, tableInUse, todayOf } from "./models-table.ts";
import { ContextPolicyName, DEFAULT_POLICY, DEFAULT_PREVIEW_MODE, DEFAULT_STEP_PROTOCOL } from "../lib/policy.ts";
import { evalKey, type EvalProgress, runEval } from "../lib/eval/run/eval-run.ts";
import { providerForModel } from "../lib/run/provider-for-model.ts";
import { evalPlans } from "../lib/eval/run/eval-attempt.ts";
import { parseModelRef, PROVIDER_KINDS } from "../lib/models/provider-kinds.ts";
import { formatCount } from "../lib/text/numbers.ts";
import { escapeControl } from "../lib/text/safe-text.ts";
import { checkHashes, type LoadedSuite, loadSuiteFile, taskHashes } from "../lib/eval/run/eval-suite-file.ts";
import { chooseSandbox } from "../lib/workspace/create-workspace-executor.ts";
import type { SandboxMode } from "../lib/workspace/sandbox.ts";
import { rescoreEval } from "../lib/eval/run/eval-rescore.ts";
import { validateSuite } from "../lib/eval/run/eval-validate.ts";
import type { Io } from "./io.ts";
import { parseCommand } from "./cli-spec.ts";
import { millisecondsOption, outputPathOption } from "./options.ts";
import { EVAL_SPEC } from "./specs.ts";
import { Reporter } from "./reporter.ts";
import { refuseFolderInside } from "./output-paths.ts";
import { sweepLeftoversOnce } from "../lib/workspace/scratch.ts";

function count(flag: string, value: string | undefined, fallback: number, { min = 1 } = {}): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: expected a whole number ≥ ${min}`);
  }
  return n;
}

/**
 * The prices of the model table in use (the built-in one, or one loom models update installed), then --prices: a
 * rate below the table's (--max-cost rests on it) only with --allow-lower-prices, and then listed on stderr.
 */
function readPrices(
  file: string | undefined,
  { allowLower }: { allowLower: boolean },
  { cwd, env, now, stderr }: Io,
): PriceTable {
  const base = pricesOf(tableInUse(env, { today: todayOf(now?.()) }).table);
  if (file === undefined) return base;
  let text: string;
  try {
    text = readTableFile(resolve(cwd, file));
  } catch (error) {
    const why = error instanceof UsageError ? error.message : describeFsError(error);
    throw new UsageError(`--prices ${JSON.stringify(file)}: ${why}`);
  }
  const override = parsePrices(text, { file });
  const lowered = lowerPrices(base, override);
  if (lowered.length > 0 && !allowLower) {
    throw new UsageError(
      `Invalid price table ${JSON.stringify(file)}: ${lowered[0]} is below the model table's price (the cost and ` +
        "--max-cost rest on it; --allow-lower-prices accepts it)",
      "prices_invalid",
    );
  }
  for (const line of lowered) {
    stderr(`loom eval: lower price accepted (--allow-lower-prices): ${escapeControl(line)}\n`);
  }
  return mergePrices(base, override);
}

export async function evalCommand(argv: string[], io: Io): Promise<number> {
  sweepLeftoversOnce(); // scratch copies and cgroups a killed Loom left behind
  if (argv[0] === "validate" || argv[0] === "rescore") return await subcommand(argv[0], argv.slice(1), io);
  const { values, positionals } = parseCommand(EVAL_SPEC, argv, { command: "eval" });
  const [suitePath, ...extra] = positionals;
  if (suitePath === undefined || extra.length > 0) {
    throw new UsageError("Expected one SUITE (a suite file or folder; see loom eval --help)");
  }
  const models = values.model ?? [];
  if (models.length === 0) throw new UsageError("Missing --model PROVIDER/MODEL (see loom eval --help)");
  const policies = (values.policies ?? ContextPolicyName.options.join(",")).split(",").map((p) => p.trim());
  for (const p of policies) {
    if (!ContextPolicyName.safeParse(p).success) {
      throw new UsageError(
        `--policies: unknown policy ${JSON.stringify(p)} (expected ${ContextPolicyName.options.join(", ")})`,
      );
    }
  }
  if (new Set(policies).size !== policies.length) throw new UsageError("--policies names a policy twice");
  const shard = values.shard === undefined ? null : parseShard(values.shard);
  if (values.shard !== undefined && shard === null) {
    throw new UsageError(`--shard ${JSON.stringify(values.shard)}: expected i/n with 1 ≤ i ≤ n, e.g. 2/4`);
  }
  const margin = values.margin === undefined ? 5 : Number(values.margin);
  if (!(margin > 0 && margin <= 100)) {
    throw new UsageError(`--margin ${JSON.stringify(values.margin)}: expected points in (0, 100]`);
  }
  const maxCost = values["max-cost"] === undefined ? null : Number(values["max-cost"]);
  if (maxCost !== null && !(maxCost >= 0)) {
    throw new UsageError(`--max-cost ${JSON.stringify(values["max-cost"])}: expected USD ≥ 0`);
  }
  const costMargin = values["cost-margin"] === undefined ? 5 : Number(values["cost-margin"]);
  if (!(costMargin >= 0 && costMargin < 100)) {
    throw new UsageError(`--cost-margin ${JSON.stringify(values["cost-margin"])}: expected a percentage in [0, 100)`);
  }
  const stepProtocol = values["step-protocol"] ?? DEFAULT_STEP_PROTOCOL;
  const sandbox = evalSandbox(values.sandbox, io.env);
  const out = outputPathOption("--out", values.out ?? "eval-out", { cwd: io.cwd, folder: true });
  const prices = readPrices(values.prices, { allowLower: values["allow-lower-prices"] === true }, io);
  const settings: EvalSettings = {
    models,
    policies: policies as ContextPolicyName[],
    repeats: count("--repeats", values.repeats, 1),
    seed: values.seed ?? "loom",
    margin: margin / 100,
    cost_margin: costMargin / 100,
    retries: count("--retries", values.retries, 2, { min: 0 }),
    run_timeout_ms: count("--run-timeout", values["run-timeout"], 1800) * 1000,
    step_protocol: stepProtocol,
    previews: DEFAULT_PREVIEW_MODE,
    sandbox: { mode: sandbox, active: sandbox !== "off" },
    cache_marker: !values["no-cache-marker"],
  };
  const jobs = count("--jobs", values.jobs, 1);
  const http = {
    deadlineMs: millisecondsOption("--provider-deadline-ms", values["provider-deadline-ms"]),
    timeoutMs: millisecondsOption("--provider-idle-timeout-ms", values["provider-idle-timeout-ms"]),
  };
  const loaded = selectTasks(
    loadSuiteFile(suitePath, { cwd: io.cwd, allowOutside: values["allow-outside-suite"] === true }),
    { ids: values.task, tags: values.tag },
  );
  refuseFolderInside(
    { flag: "--out", path: out },
    loaded.tasks.flatMap((task) => [
      task.source.kind === "folder"
        ? { what: `task ${JSON.stringify(task.id)}'s workspace`, path: resolve(loaded.dir, task.source.path) }
        : { what: `task ${JSON.stringify(task.id)}'s git.repo`, path: resolve(loaded.dir, task.source.repo) },
      ...(task.check.files === undefined
        ? []
        : [{ what: `task ${JSON.stringify(task.id)}'s check.files`, path: resolve(loaded.dir, task.check.files) }]),
    ]),
  );
  const checks = checkHashes(loaded);
  const key = evalKey(loaded, { tasks: taskHashes(loaded, { checks }), checks, prices, settings });
  // A model Loom cannot reach (unknown provider, missing key, bad base URL) would make every run an infra failure:
  // one line and exit 3 now, before any run starts.
  // The runs' settings, resolved once per policy; each model is layered onto them as its runs' requests will be.
  const plans = evalPlans({ policies: settings.policies, stepProtocol, sandbox, http, env: io.env });
  for (const model of models) {
    const plan = plans[settings.policies[0] ?? DEFAULT_POLICY];
    const resolved = plan?.request({ file: "--model", model });
    if (resolved === undefined) throw new Error("an evaluation has a policy");
    if (!resolved.ok) throw new UsageError(resolved.message);
    providerForModel(model, resolved.settings.provider, { env: io.env, http });
  }
  if (!values.quiet) io.stderr(preflight(loaded, { settings, shard, prices }));
  // Said before any money is spent, quiet or not: a suite too small to ever show the margin.
  const small = tooSmall(loaded.tasks.length, settings.margin);
  if (small) io.stderr(`loom eval: ${small}\n`);
  const { file, interrupted } = await runEval(loaded, key, {
    out,
    settings,
    shard,
    jobs,
    resume: values.resume === true,
    prices,
    models: tableInUse(io.env, { today: todayOf(io.now?.()) }).table,
    maxCost,
    sandbox,
    plans,
    env: io.env,
    signal: io.signal,
    warn: (message) => io.stderr(`loom eval: ${message}\n`),
    onProgress: values.quiet ? undefined : progressLine(io, { priced: models.some((m) => priceOf(prices, m)) }),
  });
  if (!values.quiet && io.isTTY) io.stderr("\n");
  const dropped = file.summary.dropped_pairs.length;
  const ran = interrupted ? "interrupted" : file.complete && dropped === 0 ? "completed" : "failed";
  const reporter = new Reporter(io, { command: "eval", format: values.json ? "json" : "text", quiet: values.quiet });
  const code = reporter.evaluation(file, { dir: shown(out, io.cwd), ran });
  if (!values.quiet) io.stderr(`loom eval: wrote ${join(out, "eval.json")}\n`);
  if (dropped > 0) {
    io.stderr(`loom eval: ${dropped} pair(s) dropped after infra failures on every attempt; see eval.json's rows\n`);
  }
  return code;
}

/** A folder as the user would type it: relative to the current folder when inside it. */
function shown(dir: string, cwd: string): string {
  const rel = relative(cwd, dir);
  return rel === "" ? "." : rel.startsWith("..") ? dir : rel;
}

/**
 * Evaluations run sandboxed: the default is required, auto is held to required (no silent fallback), and only
 * --sandbox off said on the command line runs them without (LOOM_SANDBOX does not: a planted .env could set it).
 * Refused at once, before any run, when the sandbox is required but missing.
 */
function evalSandbox(flag: SandboxMode | undefined, env: Record<string, string | undefined>): SandboxMode {
  if (flag === "off") return "off";
  try {
    chooseSandbox("required", { env });
  } catch (error) {
    throw new StartupError(
      `${errorMessage(error)}; evaluations run sandboxed unless you say --sandbox off (the results then say ` +
        `"unsandboxed: checks were exposed to the agent")`,
      "sandbox_unavailable",
    );
  }
  return "required";
}

/** Why a suite of `tasks` can never show `margin`, with the tasks it would need; null when it can. */
function tooSmall(tasks: number, margin: number): string | null {
  const needed = tasksNeeded(margin);
  if (needed !== null && tasks >= needed) return null;
  const best = bestAgreeingInterval(tasks);
  const points = (x: number) => `${x < 0 ? "−" : "+"}${Math.abs(Math.round(x * 100))}`;
  return `${tasks} task${tasks === 1 ? "" : "s"} cannot show a ${
    Math.round(margin * 100)
  }-point margin, even if the policies agree on every task (the interval would at best be ${points(best.low)} to ${
    points(best.high)
  } points); that needs ≥ ${needed ?? "100,000"} tasks. The verdict will be inconclusive; it still measures cost.`;
}

/** The tasks --task and --tag name (all without either); an unknown id is a usage error. */
function selectTasks(loaded: LoadedSuite, { ids, tags }: { ids?: string[]; tags?: string[] }): LoadedSuite {
  if (!ids && !tags) return loaded;
  for (const id of ids ?? []) {
    if (!loaded.tasks.some((t) => t.id === id)) {
      throw new UsageError(`--task ${JSON.stringify(id)}: no such task in ${loaded.name}`);
    }
  }
  const tasks = loaded.tasks.filter((t) => ids?.includes(t.id) || t.tags.some((tag) => tags?.includes(tag)));
  // "!": tasks is empty here only when --tag filtered them (ids were checked above)
  if (tasks.length === 0) throw new UsageError(`--tag: no task of ${loaded.name} has ${tags!.join(" or ")}`);
  return { ...loaded, tasks };
}

/**
 * A rough pre-flight estimate: every run at its step limit, two calls per step, each call with 16k uncached input
 * tokens (the bounded ceiling, 64 KiB, at 4 bytes per token) and 300 output tokens. Legacy can exceed it on long
 * tasks; --max-cost is the guard.
 */
function preflight(
  loaded: LoadedSuite,
  { settings, shard, prices }: {
    settings: EvalSettings;
    shard: { index: number; count: number } | null;
    prices: PriceTable;
  },
): string {
  const runsPerModel = loaded.tasks.length * settings.policies.length * settings.repeats;
  const share = shard ? 1 / shard.count : 1;
  // Every run at its step limit, two calls per step: the most calls each model can be sent.
  const callsPerModel = loaded.tasks.reduce((s, t) => s + 2 * t.max_steps, 0) * settings.policies.length *
    settings.repeats * share;
  let estimate = 0;
  const unpriced: string[] = [];
  for (const model of settings.models) {
    const price = priceOf(prices, model);
    if (!price) {
      unpriced.push(model);
      continue;
    }
    estimate += callsPerModel * (16_000 * price.input + 300 * price.output) / 1e6;
  }
  const runs = Math.ceil(runsPerModel * settings.models.length * share);
  const calls = Math.ceil(callsPerModel * settings.models.length);
  const priced = unpriced.length < settings.models.length;
  // A model without a price is not estimated at all: "$0.00" would be a claim. A local server's cost is its time.
  const local = unpriced.some((model) => {
    const ref = parseModelRef(model);
    return ref !== null && PROVIDER_KINDS[ref.provider].unknownModel.local;
  });
  return `loom eval: ${loaded.tasks.length} tasks × ${settings.models.length} model(s) × ${settings.policies.length} policies × ${settings.repeats} repeat(s)${
    shard ? `, shard ${shard.index}/${shard.count}` : ""
  } ≈ ${runs} runs, at most ${formatCount(calls)} model calls (every run at its step limit, 2 calls per step)${
    priced
      ? `; pre-flight cost estimate ≤ $${estimate.toFixed(2)} (16k input + 300 output tokens per call)${
        unpriced.length ? ` for the priced models` : ""
      }`
      : ""
  }${
    unpriced.length
      ? `; no price for ${unpriced.join(", ")}: not estimated (cost: null${
        local ? "; a local server's cost is its time: each report's server_timings" : ""
      })`
      : ""
  }\n`;
}

/** The progress line; what was spent only when a model has a price ("$0.0000" for a local server would be a claim). */
function progressLine(io: Io, { priced }: { priced: boolean }): (p: EvalProgress) => void {
  return (p) => {
    const eta = p.eta_ms === null ? "ETA –" : `ETA ${formatDuration(p.eta_ms)}`;
    const spent = priced ? `$${p.spent.toFixed(4)} spent` : "no price";
    const line = `eval: ${p.done}/${p.total} runs · ${p.solved} solved · ${p.infra} infra · ${spent} · ${eta}`;
    io.stderr(io.isTTY ? `\r\x1b[2K${line}` : `${line}\n`);
  };
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60
    ? `${s}s`
    : s < 3600
    ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
    : `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

async function subcommand(name: "validate" | "rescore", argv: string[], io: Io): Promise<number> {
  const command = `eval ${name}`;
  const one = (positionals: string[]) => {
    const [only, ...more] = positionals;
    if (only === undefined || more.length > 0) {
      throw new UsageError(`Expected one ${name === "validate" ? "SUITE" : "DIR"} (see loom eval --help)`);
    }
    return only;
  };
  if (name === "validate") {
    const { values, positionals } = parseCommand(EVAL_SPEC.subcommands.validate, argv, { command });
    const loaded = loadSuiteFile(one(positionals), {
      cwd: io.cwd,
      allowOutside: values["allow-outside-suite"] === true,
    });
    const results = await validateSuite(loaded, {
      jobs: count("--jobs", values.jobs, 2),
      sandbox: values.sandbox ?? "auto",
      env: io.env,
      signal: io.signal,
    });
    const reporter = new Reporter(io, { command, format: values.json ? "json" : "text" });
    return reporter.validation(results, { interrupted: io.signal.aborted });
  }
  const { values, positionals } = parseCommand(EVAL_SPEC.subcommands.rescore, argv, { command });
  const dir = resolve(io.cwd, one(positionals));
  const sandbox = evalSandbox(values.sandbox, io.env);
  const file = await rescoreEval(dir, {
    jobs: count("--jobs", values.jobs, 2),
    sandbox,
    suite: values.suite === undefined ? undefined : resolve(io.cwd, values.suite),
    // The suite a results folder names is data like the folder: said before its checks run.
    note: (message) => io.stderr(`loom eval rescore: ${message}\n`),
    env: io.env,
    signal: io.signal,
    cwd: io.cwd,
    allowOutside: values["allow-outside-suite"] === true,
    acceptChangedChecks: values["accept-changed-checks"] === true,
  });
  const reporter = new Reporter(io, { command, format: values.json ? "json" : "text" });
  return reporter.evaluation(file, { dir: shown(dir, io.cwd), ran: io.signal.aborted ? "interrupted" : "completed" });
}
