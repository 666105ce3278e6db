// `bun run bench:live [--minutes N] [--model smollm2|gemma3] [--threads N] [--out DIR] [--render]`: a matched live evaluation
// against a real model. Runs `loom eval evals/live-suite.jsonc` with legacy vs bounded on a local llama-server, for
// each step protocol (two-call, then single-call; half the budget each, as many repeats as fit), and writes the live
// section of bench/RESULTS.md (bench/live-markdown.ts). Without LOOM_LIVE_BASE_URL in the environment it starts the
// server itself through scripts/live-model.sh (which builds or reuses it and installs the pinned weights).
// When a protocol's share of the budget is spent, the evaluation is interrupted as Ctrl-C would: the run in flight is
// dropped, every finished pair is kept. `--render` rewrites the section from a finished run's folder (DIR/meta.json).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EvalFile } from "../lib/eval/eval-file.ts";
import { readEvalFile } from "../lib/eval/run/eval-run.ts";
import {
  countInvalidAnswers,
  liveCells,
  type LiveMeta,
  type LiveRun,
  type LiveVerdict,
  renderLive,
  withLiveSection,
} from "./live-markdown.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const SUITE = "evals/live-suite.jsonc";
const PROTOCOLS = ["two-call", "single-call"] as const;
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
function runEval(protocol: string, out: string, model: string, baseUrl: string, deadline: number): Promise<number> {
  const args = [
    join(root, "main.ts"),
    "eval",
    SUITE,
    "--model",
    model,
    "--policies",
    "legacy,bounded",
    "--step-protocol",
    protocol,
    "--repeats",
    "100", // more than fit: the budget ends the evaluation
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
    const invalid = existsSync(recording) ? countInvalidAnswers(readFileSync(recording, "utf8"), { cutShort }) : 0;
    return { protocol, row, invalid_answers: invalid };
  });
  return { runs, file };
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
  if (which !== "smollm2" && which !== "gemma3") throw new Error(`--model: expected smollm2 or gemma3, got "${which}"`);
  const baseUrl = process.env.LOOM_LIVE_BASE_URL;
  const alias = process.env.LOOM_LIVE_MODEL;
  if (baseUrl === undefined || alias === undefined) {
    // Start the server for the whole benchmark, then come back here with it in the environment.
    const threads = option("--threads", String(Math.min(cpus().length, 4)));
    const r = spawnSync(
      "bash",
      [
        join(root, "scripts/live-model.sh"),
        "--model",
        which,
        "--threads",
        threads,
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
  log(`${model} at ${baseUrl}; budget ${minutes} minutes, half per step protocol; results in ${outRoot}`);
  for (const [i, protocol] of PROTOCOLS.entries()) {
    const share = (end - Date.now()) / (PROTOCOLS.length - i);
    const out = join(outRoot, protocol);
    const code = await runEval(protocol, out, model, baseUrl, Date.now() + share);
    if (code !== 0 && code !== 130) log(`${protocol}: loom eval exited ${code}; what finished is counted`);
  }
  const gguf = process.env.LOOM_LIVE_WEIGHTS_FILE ?? "";
  const dirty = git(["status", "--porcelain", "--untracked-files=no"]) === "" ? "" : " (with uncommitted changes)";
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
    suite: SUITE,
    tasks: [...readFileSync(join(root, SUITE), "utf8").matchAll(/"id":\s*"([^"]+)"/g)].map((m) => m[1] ?? ""),
  };
  writeFileSync(join(outRoot, "meta.json"), `${JSON.stringify(meta, null, 2)}\n`);
  render(outRoot, meta);
  return 0;
}

/** Writes the live section of bench/RESULTS.md from the evaluations under `outRoot`. */
function render(outRoot: string, meta: LiveMeta): void {
  const runs: LiveRun[] = [];
  const verdicts: LiveVerdict[] = [];
  for (const protocol of PROTOCOLS) {
    const got = collect(protocol, join(outRoot, protocol));
    runs.push(...got.runs);
    verdicts.push({ protocol, file: got.file });
  }
  const cells = liveCells(runs);
  const section = renderLive(cells, verdicts, meta);
  const results = join(root, "bench/RESULTS.md");
  const before = existsSync(results) ? readFileSync(results, "utf8") : "# Benchmark results\n";
  writeFileSync(results, withLiveSection(before, section));
  for (const c of cells) {
    log(`${c.protocol} ${c.policy}: ${c.solved}/${c.runs} solved, ${c.steps} steps, ${c.seconds.toFixed(0)} s`);
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
