// `bun run bench:live [--minutes N] [--model M] [--suite FILE] [--protocols P,Q] [--repeats N] [--ctx N] [--threads N]
// [--out DIR] [--render]`: a matched live evaluation against a real model. Runs `loom eval` on the live suite
// (evals/live-tiers.jsonc by default) with legacy vs bounded on a local llama-server, for each step protocol (single-call,
// then two-call by default; an equal share of the budget each, as many repeats as fit unless --repeats says), and
// writes the live section of bench/RESULTS.md (bench/live-markdown.ts), per tier of the suite. Without
// LOOM_LIVE_BASE_URL in the environment it starts the server itself through scripts/live-model.sh (which builds or
// reuses it and installs the pinned weights).
// When a protocol's share of the budget is spent, the evaluation is interrupted as Ctrl-C would: the run in flight is
// dropped, every finished pair is kept. `--render` rewrites the section from a finished run's folder (DIR/meta.json).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EvalFile } from "../lib/eval/eval-file.ts";
import { readEvalFile } from "../lib/eval/run/eval-run.ts";
import { summarize } from "../lib/eval/summary.ts";
import {
  liveCells,
  type LiveMeta,
  type LiveRun,
  type LiveVerdict,
  recordingFacts,
  renderLive,
  tierOf,
  TIERS,
  withLiveSection,
} from "./live-markdown.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const MODELS = ["smollm2", "gemma3", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"];
const ALL_PROTOCOLS = ["single-call", "two-call"];
const log = (text: string) => process.stderr.write(`bench:live: ${text}\n`);

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  if (i === -1) return fallback;
  const value = process.argv[i + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`${name} needs a value`);
  return value;
}

function positive(name: string, value: string): number {
  const n = Number(value);
  if (!(n > 0) || !Number.isFinite(n)) throw new Error(`${name} ${JSON.stringify(value)}: expected a positive number`);
  return n;
}

function git(args: string[]): string {
  const r = spawnSync("git", args, { cwd: root, encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : "";
}

/** Runs `loom eval` (the source, under this runtime) until it ends or `deadline`, then interrupts it like Ctrl-C. */
function runEval(
  protocol: string,
  out: string,
  { suite, model, baseUrl, deadline, repeats }: {
    suite: string;
    model: string;
    baseUrl: string;
    deadline: number;
    repeats: string;
  },
): Promise<number> {
  const args = [
    join(root, "main.ts"),
    "eval",
    suite,
    "--model",
    model,
    "--policies",
    "legacy,bounded",
    "--step-protocol",
    protocol,
    "--repeats",
    repeats, // by default more than fit: the budget ends the evaluation
    "--seed",
    `live-${protocol}`,
    "--run-timeout",
    "600",
    "--out",
    out,
  ];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, LOOM_PROVIDER_BASE_URL: baseUrl },
    });
    const wait = Math.max(0, deadline - Date.now());
    const timer = setTimeout(() => {
      log(`${protocol}: its share of the budget is spent; interrupting (finished pairs are kept)`);
      child.kill("SIGINT");
    }, wait);
    child.on("error", fail);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      done(code ?? (signal === "SIGINT" ? 130 : 1));
    });
  });
}

function collect(protocol: string, out: string): { runs: LiveRun[]; file: EvalFile | null } {
  const path = join(out, "eval.json");
  if (!existsSync(path)) return { runs: [], file: null };
  const file = readEvalFile(path);
  const runs = file.rows.map((row) => {
    const recording = join(out, "runs", row.id, `attempt-${row.attempt}`, "recording.jsonl");
    const cutShort = row.error_code !== null && row.error_code !== "invalid_answers";
    const facts = existsSync(recording)
      ? recordingFacts(readFileSync(recording, "utf8"), { cutShort })
      : { invalid_answers: 0, refusals: {}, finished: false, tests_passed_step: null };
    return { protocol, tier: tierOf(file.suite.tags[row.task]), row, facts };
  });
  return { runs, file };
}

/**
 * Each tier's verdict: the summary of that tier's rows alone, with the evaluation's own settings. `files` are the
 * evaluations of one step protocol (one, or more when a tier was run beside it as its own evaluation).
 */
function tierVerdicts(protocol: string, files: EvalFile[]): LiveVerdict[] {
  const [first] = files;
  if (first === undefined) return [{ protocol, tier: "all", pair: null, runs: 0, stopped: null }];
  const tags = Object.assign({}, ...files.map((f) => f.suite.tags)) as Record<string, string[]>;
  const allTasks = [...new Set(files.flatMap((f) => f.suite.tasks))];
  const allRows = files.flatMap((f) => f.rows);
  const present = new Set(allTasks.map((task) => tierOf(tags[task])));
  const tiers = [...TIERS.filter((t) => present.has(t)), ...(present.has("all") ? ["all"] : [])];
  const incomplete = files.find((f) => !f.complete);
  return tiers.map((tier) => {
    const tasks = allTasks.filter((task) => tierOf(tags[task]) === tier);
    const rows = allRows.filter((row) => tasks.includes(row.task));
    const s = first.settings;
    const summary = summarize(rows, {
      tasks,
      tags,
      policies: s.policies,
      repeats: s.repeats,
      margin: s.margin,
      costMargin: s.cost_margin,
      seed: s.seed,
      droppedPairs: [],
    });
    return {
      protocol,
      tier,
      pair: summary.pairs[0] ?? null,
      runs: rows.filter((row) => row.counted).length,
      stopped: incomplete ? incomplete.stopped ?? "incomplete" : null,
    };
  });
}

async function main(): Promise<number> {
  if (process.argv.includes("--render")) {
    // Re-render the table from a finished run's folder (bench/out/live by default), without a server.
    const outRoot = option("--out", join(root, "bench/out/live"));
    render(outRoot, JSON.parse(readFileSync(join(outRoot, "meta.json"), "utf8")) as LiveMeta);
    return 0;
  }
  const minutes = positive("--minutes", option("--minutes", "60"));
  const which = option("--model", "smollm2");
  if (!MODELS.includes(which)) throw new Error(`--model: expected ${MODELS.join(", ")}, got "${which}"`);
  const suite = option("--suite", "evals/live-tiers.jsonc");
  if (!existsSync(join(root, suite))) throw new Error(`--suite: no file "${suite}" under ${root}`);
  const protocols = option("--protocols", ALL_PROTOCOLS.join(",")).split(",");
  for (const p of protocols) {
    if (!ALL_PROTOCOLS.includes(p)) throw new Error(`--protocols: expected ${ALL_PROTOCOLS.join(" or ")}, got "${p}"`);
  }
  const repeats = String(positive("--repeats", option("--repeats", "100")));
  const baseUrl = process.env.LOOM_LIVE_BASE_URL;
  const alias = process.env.LOOM_LIVE_MODEL;
  if (baseUrl === undefined || alias === undefined) {
    // Start the server for the whole benchmark, then come back here with it in the environment. The Qwen models get
    // 16K tokens (what the long-output tier is sized against); the small ones their default 8K.
    const threads = option("--threads", String(Math.min(cpus().length, 4)));
    const ctx = option("--ctx", which.startsWith("qwen") ? "16384" : "8192");
    const r = spawnSync(
      "bash",
      [
        join(root, "scripts/live-model.sh"),
        "--model",
        which,
        "--threads",
        threads,
        "--ctx",
        ctx,
        "--",
        process.execPath,
        fileURLToPath(import.meta.url),
        ...process.argv.slice(2),
      ],
      { cwd: root, stdio: "inherit", env: process.env },
    );
    return r.status ?? 1;
  }
  const started = Date.now();
  const end = started + minutes * 60_000;
  const outRoot = option("--out", join(root, "bench/out/live"));
  rmSync(outRoot, { recursive: true, force: true });
  mkdirSync(outRoot, { recursive: true });
  const model = `openai-compatible/${alias}`;
  log(
    `${model} at ${baseUrl}; ${suite}; budget ${minutes} minutes over ${protocols.join(", ")}; results in ${outRoot}`,
  );
  for (const [i, protocol] of protocols.entries()) {
    const share = (end - Date.now()) / (protocols.length - i);
    const out = join(outRoot, protocol);
    const code = await runEval(protocol, out, { suite, model, baseUrl, deadline: Date.now() + share, repeats });
    if (code !== 0 && code !== 130) log(`${protocol}: loom eval exited ${code}; what finished is counted`);
  }
  const gguf = process.env.LOOM_LIVE_WEIGHTS_FILE ?? "";
  const dirty = git(["status", "--porcelain", "--untracked-files=no"]) === "" ? "" : " (with uncommitted changes)";
  const tasks = [...readFileSync(join(root, suite), "utf8").matchAll(/"id":\s*"([^"]+)"/g)].map((m) => m[1] ?? "");
  const meta: LiveMeta = {
    date: new Date().toISOString().slice(0, 10),
    minutes_budget: minutes,
    minutes_used: (Date.now() - started) / 60_000,
    loom_commit: `${git(["rev-parse", "--short=12", "HEAD"]) || "unknown"}${dirty}`,
    server_commit: process.env.LOOM_LIVE_SERVER_COMMIT ?? "unknown",
    model: alias,
    weights_file: gguf === "" ? "unknown" : basename(gguf),
    weights_sha256: process.env.LOOM_LIVE_WEIGHTS_SHA256 ?? "unknown",
    context: Number(process.env.LOOM_LIVE_CTX ?? 0),
    threads: Number(process.env.LOOM_LIVE_THREADS ?? 0),
    cores: cpus().length,
    suite,
    tasks,
    command: ["bun run bench:live", ...process.argv.slice(2).filter((a) => a !== "--render")].join(" "),
    build: process.env.LOOM_LIVE_BUILD_FLAGS || "the portable x86-64 build (AVX2, no AVX-512)",
  };
  writeFileSync(join(outRoot, "meta.json"), `${JSON.stringify(meta, null, 2)}\n`);
  render(outRoot, meta);
  return 0;
}

/** Writes the live section of bench/RESULTS.md from the evaluations under `outRoot`. */
function render(outRoot: string, meta: LiveMeta): void {
  const runs: LiveRun[] = [];
  const verdicts: LiveVerdict[] = [];
  let counts: Record<string, number> | undefined;
  for (const protocol of ALL_PROTOCOLS) {
    // PROTOCOL/, and PROTOCOL+NAME/ for an evaluation of part of the suite run beside it (e.g. one tier).
    const folders = existsSync(outRoot)
      ? readdirSync(outRoot).filter((name) => name === protocol || name.startsWith(`${protocol}+`)).sort()
      : [];
    const files: EvalFile[] = [];
    for (const folder of folders) {
      const got = collect(protocol, join(outRoot, folder));
      runs.push(...got.runs);
      if (got.file !== null) files.push(got.file);
    }
    if (folders.length === 0) continue;
    verdicts.push(...tierVerdicts(protocol, files));
    counts = {}; // tasks per tier, from the suites the evaluations ran
    const tags = Object.assign({}, ...files.map((f) => f.suite.tags)) as Record<string, string[]>;
    for (const task of new Set(files.flatMap((f) => f.suite.tasks))) {
      const tier = tierOf(tags[task]);
      counts[tier] = (counts[tier] ?? 0) + 1;
    }
  }
  const cells = liveCells(runs);
  const section = renderLive(cells, verdicts, counts ? { ...meta, tiers: counts } : meta);
  const results = join(root, "bench/RESULTS.md");
  const before = existsSync(results) ? readFileSync(results, "utf8") : "# Benchmark results\n";
  writeFileSync(results, withLiveSection(before, section));
  for (const c of cells) {
    log(
      `${c.protocol} ${c.tier} ${c.policy}: ${c.solved}/${c.runs} solved, ${c.steps} steps, ${c.seconds.toFixed(0)} s`,
    );
  }
  log("wrote the live section of bench/RESULTS.md");
}

if (import.meta.main) {
  try {
    process.exitCode = await main();
  } catch (error) {
    log(error instanceof Error ? error.message : String(error));
    process.exitCode = 2;
  }
}
