// A reader that closes stdout early (`loom … | head -1`) ends Loom quietly (issue 43): no EPIPE stack trace on
// stderr, the command's own exit code, its report written, for every output format and under both runtimes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/binary.ts";

const RUNTIMES: Record<string, string[]> = {
  bun: [join(ROOT, "node_modules/.bin/bun"), join(ROOT, "main.ts")],
  deno: [join(ROOT, "node_modules/deno/deno"), "run", "--allow-all", "--no-check", join(ROOT, "main.ts")],
};

/** Runs loom with its stdout pipe closed by the reader before anything is written; the exit code and stderr. */
function withClosedStdout(argv: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  const [command, ...prefix] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(command!, prefix, {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    });
    child.stdout.destroy(); // the reader goes away: every write to the pipe is EPIPE
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const guard = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, stderr });
    });
  });
}

for (const [runtime, loom] of Object.entries(RUNTIMES)) {
  test(`${runtime}: a closed stdout ends quietly with the command's exit code, for every output format`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "loom-epipe-"));
    try {
      cpSync(join(ROOT, "testdata/workflows/fix-bug.jsonl"), join(dir, "rec.jsonl"));
      for (const format of ["text", "json", "stream-json"]) {
        const report = `${format}.json`;
        const r = await withClosedStdout(
          [...loom, "replay", "rec.jsonl", "--output-format", format, "--quiet", "--context-report", report],
          dir,
        );
        assert.doesNotMatch(r.stderr, /EPIPE|Uncaught|^\s+at /m, `${format}: ${r.stderr}`);
        assert.equal(r.code, 0, `${format}: ${r.stderr}`);
        assert.ok(existsSync(join(dir, report)), `${format}: the report is written`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
