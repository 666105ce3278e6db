// `bun bench/eval-overhead.ts [--repeats N] [--jobs J] [--latency-ms MS]`: what an evaluation adds to each run — the fresh workspace
// copy, the hidden check in its own sandbox, the snapshot and diff of the workspace, the artifacts and the eval.json
// rewrite — as a ratio to the run's own wall time (the loop: model calls, actions, tests), with the scripted
// stand-in agent on the shipped suite. Both come from the same runs (eval.json's overhead_ms and wall_ms), so the
// ratio is measured in one run, not across machines. Prints the total ratio, the median and the worst per-run ratio,
// and the share of the overhead the check takes. --latency-ms makes the stand-in answer each call after MS
// milliseconds, as a model does (real calls take seconds); at 0 a run is little more than its test processes, and the
// hidden check — one more such process — weighs accordingly.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../main.ts";
import type { EvalFile } from "../lib/eval/eval-file.ts";
import { readEvalFile } from "../lib/eval/run/eval-run.ts";
import { startEvalAgent } from "../tests/helpers/eval-agent.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

export function overheadFigures(file: EvalFile) {
  const rows = file.rows.filter((r) => r.counted);
  const wall = rows.reduce((s, r) => s + r.wall_ms, 0);
  const overhead = rows.reduce((s, r) => s + r.overhead_ms, 0);
  const check = rows.reduce((s, r) => s + (r.check?.duration_ms ?? 0), 0);
  const ratios = rows.map((r) => r.overhead_ms / r.wall_ms);
  return {
    runs: rows.length,
    ratio: overhead / wall,
    median: median(ratios),
    worst: Math.max(...ratios),
    worstRun: rows[ratios.indexOf(Math.max(...ratios))]?.id ?? null,
    checkShare: check / overhead,
  };
}

if (import.meta.main) {
  const latencyMs = flag("--latency-ms", 0);
  const agent = await startEvalAgent({ latencyMs });
  const dir = mkdtempSync(join(tmpdir(), "loom-bench-eval-"));
  try {
    const code = await main([
      "eval",
      "evals/",
      "--model",
      "anthropic/claude-sonnet-5-5",
      "--repeats",
      String(flag("--repeats", 1)),
      "--jobs",
      String(flag("--jobs", 1)),
      "--out",
      join(dir, "out"),
      "--quiet",
    ], {
      stdout: () => {},
      stderr: (text) => process.stderr.write(text),
      readStdin: () => Promise.resolve(""),
      env: { ...process.env, ANTHROPIC_BASE_URL: agent.server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-bench" },
      cwd: root,
      isTTY: false,
      signal: new AbortController().signal,
    });
    if (code !== 0) throw new Error(`loom eval exited ${code}`);
    const f = overheadFigures(readEvalFile(join(dir, "out", "eval.json")));
    const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
    console.log(`eval overhead on the shipped suite, scripted agent answering after ${latencyMs} ms, ${f.runs} runs:`);
    console.log(
      `  overhead / run wall time: ${pct(f.ratio)} in total; median run ${pct(f.median)}; worst ${
        pct(f.worst)
      } (${f.worstRun})`,
    );
    console.log(`  the hidden check is ${pct(f.checkShare)} of the overhead`);
  } finally {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
