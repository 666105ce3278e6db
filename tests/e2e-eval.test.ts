// The GNU parallel recipe of docs/eval.md, run for real with the compiled binary: two shards as two processes, merged
// with loom report --merge, equal one unsharded run row for row and in every summary figure timing does not decide.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EvalFile, EvalRow } from "../lib/eval/eval-file.ts";
import { assertBinaryBuilt, LOOM_BINARY, ROOT, runLoom, SANDBOX_ENV } from "./helpers/binary.ts";
import { startEvalAgent } from "./helpers/eval-agent.ts";
import { comparableRow, comparableSummary } from "./helpers/eval-compare.ts";

const parallel = spawnSync("parallel", ["--version"], { encoding: "utf8" });
const missing = parallel.status === 0 ? null : "GNU parallel is not installed (Debian: apt-get install parallel)";
if (missing) console.log(`e2e-eval.test.ts: skipping the GNU parallel recipe: ${missing}`);

test(
  "two shards run by GNU parallel and merged equal one unsharded run",
  { timeout: 600_000, skip: missing ?? false },
  async () => {
    assertBinaryBuilt();
    const agent = await startEvalAgent();
    const dir = mkdtempSync(join(tmpdir(), "loom-e2e-eval-"));
    try {
      const env = { ANTHROPIC_BASE_URL: agent.server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-e2e-eval" };
      const common = [
        "eval",
        "evals/",
        "--model",
        "anthropic/claude-sonnet-5-5",
        "--task",
        "range-off-by-one",
        "--task",
        "lru-eviction",
        "--task",
        "clue-in-test-output",
        "--quiet",
      ];
      // docs/eval.md: parallel loom eval SUITE … --shard {}/N --out out/shard-{} ::: $(seq N)
      // Spawned asynchronously: the stand-in server answers from this process.
      const sharded = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn(
          "parallel",
          [
            "--will-cite",
            "--halt",
            "now,fail=1",
            "-j",
            "2",
            LOOM_BINARY,
            ...common,
            "--shard",
            "{}/2",
            "--out",
            join(dir, "shard-{}"),
            ":::",
            "1",
            "2",
          ],
          { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...SANDBOX_ENV, ...env } },
        );
        let stderr = "";
        child.stderr.on("data", (chunk) => (stderr += chunk));
        child.on("close", (status) => resolve({ status, stderr }));
      });
      assert.equal(sharded.status, 0, sharded.stderr);
      const one = await runLoom([...common, "--out", join(dir, "one")], { cwd: ROOT, env });
      assert.equal(one.code, 0, one.stderr);
      const merged = await runLoom(
        [
          "report",
          "--merge",
          join(dir, "shard-1", "eval.json"),
          join(dir, "shard-2", "eval.json"),
          "-o",
          join(dir, "merged.json"),
        ],
        { cwd: ROOT },
      );
      assert.equal(merged.code, 0, merged.stderr);
      const read = (path: string): EvalFile => JSON.parse(readFileSync(path, "utf8"));
      const [a, b] = [read(join(dir, "merged.json")), read(join(dir, "one", "eval.json"))];
      assert.equal(a.rows.length, 6);
      assert.deepEqual(a.rows.map(comparableRow), b.rows.map(comparableRow));
      assert.deepEqual(comparableSummary(a.summary), comparableSummary(b.summary));
      const s1 = read(join(dir, "shard-1", "eval.json"));
      const s2 = read(join(dir, "shard-2", "eval.json"));
      assert.ok(s1.rows.length > 0 && s2.rows.length > 0, "both shards ran pairs");
      // The merged rows are the shards' rows, untouched.
      const byId = (rows: EvalRow[]) => [...rows].sort((x, y) => x.id.localeCompare(y.id));
      assert.deepEqual(byId(a.rows), byId([...s1.rows, ...s2.rows]));
      // -o writes only the file (loom report merged.json prints its summary); one line on stderr says what it wrote.
      assert.equal(merged.stdout, "");
      assert.match(merged.stderr, /^merged 2 shards \(6 runs\) into /);
    } finally {
      await agent.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
