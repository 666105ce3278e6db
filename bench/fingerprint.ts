// The cost of the workspace fingerprint Loom takes after every action that can change the workspace, on a
// 10,000-file workspace: plain, and as a git checkout (whose index seeds the hashes). Run: bun bench/fingerprint.ts
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WorkspaceFingerprint } from "../lib/workspace/workspace-fingerprint.ts";

const FILES = 10_000;
const REPEATS = 7;

function makeWorkspace(git: boolean): string {
  const root = mkdtempSync(join(tmpdir(), "loom-bench-fingerprint-"));
  const old = new Date(Date.now() - 3_600_000);
  for (let d = 0; d < 100; d++) {
    const dir = join(root, `pkg${d}`, "src");
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < FILES / 100; f++) {
      const path = join(dir, `module${f}.ts`);
      // ~2 KiB of source per file, 20 MB in all.
      writeFileSync(path, `export const value${f} = ${JSON.stringify("x".repeat(2000))};\n`);
      utimesSync(path, old, old);
    }
  }
  if (git) {
    const run = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...args], { cwd: root, stdio: "ignore" });
    run("init", "-q");
    run("add", ".");
    run("commit", "-qm", "bench");
  }
  // A real workspace was not written in the last second; entries that new are re-hashed on purpose (see RACY_MS).
  const until = Date.now() + 1_100;
  while (Date.now() < until) { /* wait */ }
  return root;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function measure(git: boolean): Record<string, number> {
  const root = makeWorkspace(git);
  try {
    const first: number[] = [];
    const unchanged: number[] = [];
    const oneChanged: number[] = [];
    for (let r = 0; r < REPEATS; r++) {
      const fingerprint = new WorkspaceFingerprint(root);
      let t = performance.now();
      fingerprint.take();
      first.push(performance.now() - t);
      t = performance.now();
      fingerprint.take();
      unchanged.push(performance.now() - t);
      writeFileSync(join(root, "pkg7", "src", "module3.ts"), `export const changed = ${r};\n`);
      t = performance.now();
      fingerprint.take();
      oneChanged.push(performance.now() - t);
    }
    return { first_ms: median(first), unchanged_ms: median(unchanged), one_changed_ms: median(oneChanged) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const results = { files: FILES, plain: measure(false), git: measure(true) };
const round = (n: number) => Math.round(n * 10) / 10;
console.log(`fingerprint of ${FILES} files (median of ${REPEATS}):`);
for (const kind of ["plain", "git"] as const) {
  const r = results[kind];
  console.log(
    `  ${kind.padEnd(5)}  first ${round(r.first_ms)} ms, unchanged ${round(r.unchanged_ms)} ms, ` +
      `after one change ${round(r.one_changed_ms)} ms`,
  );
}
