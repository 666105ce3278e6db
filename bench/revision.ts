// The revision's cost per action: the workspace walk (WorkspaceFingerprint.changed) Loom makes after every action that can change the
// workspace, against `git status --porcelain` on the same tree in the same run (turns interleaved, so both see the same
// machine load). Generated trees of 1,000 / 20,000 / 100,000 files, each without a git index (a fresh `git init`,
// everything untracked) and with one (every file added and committed). Reports ratios, not absolute times.
// Run: bun bench/revision.ts [--sizes 1000,20000] [--repeats 5] [--index yes|no] [--json]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { WorkspaceFingerprint } from "../lib/workspace/workspace-fingerprint.ts";

type Row = {
  files: number;
  index: boolean;
  git_status_ms: number;
  /** `git status --porcelain --untracked-files=all`: git reads every folder, as the walk does (without an index, the
   * plain status stops at the first untracked folder and looks at no file). */
  git_status_all_ms: number;
  first_ms: number;
  unchanged_ms: number;
  one_changed_ms: number;
  ratio_unchanged: number;
  ratio_one_changed: number;
  ratio_unchanged_vs_all: number;
  us_per_file_unchanged: number;
};

const FILES_PER_FOLDER = 100;

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

/** `files` small source files, 100 to a folder, folders 20 to a parent: a shape like a project with dependencies. */
function makeTree(files: number, index: boolean): string {
  const root = mkdtempSync(join(tmpdir(), "loom-bench-revision-"));
  for (let f = 0; f < files; f++) {
    const folder = Math.floor(f / FILES_PER_FOLDER);
    const dir = join(root, `pkg${Math.floor(folder / 20)}`, `mod${folder}`);
    if (f % FILES_PER_FOLDER === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `file${f}.ts`), `export const value${f} = ${f};\n// ${"x".repeat(f % 200)}\n`);
  }
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...args], { cwd: root, stdio: "ignore" });
  git("init", "-q");
  if (index) {
    git("add", ".");
    git("commit", "-qm", "bench");
  }
  // A real workspace was not written in the last second; newer entries are hashed again on purpose (racy entries).
  const until = Date.now() + 1_100;
  while (Date.now() < until) { /* wait */ }
  return root;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(fn: () => unknown): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

function measure(files: number, index: boolean, repeats: number): Row {
  const root = makeTree(files, index);
  try {
    const gitStatus = (...extra: string[]) =>
      execFileSync("git", ["status", "--porcelain", ...extra], { cwd: root, stdio: ["ignore", "ignore", "ignore"] });
    gitStatus(); // git refreshes its index once; Loom's first take is measured on its own below
    const fingerprint = new WorkspaceFingerprint(root);
    const first = time(() => fingerprint.changed());
    fingerprint.changed(); // entries hashed within the racy window are settled
    const git: number[] = [];
    const gitAll: number[] = [];
    const unchanged: number[] = [];
    const oneChanged: number[] = [];
    const changed = join(root, "pkg0", "mod0", "file3.ts");
    for (let r = 0; r < repeats; r++) {
      git.push(time(() => gitStatus()));
      gitAll.push(time(() => gitStatus("--untracked-files=all")));
      unchanged.push(time(() => fingerprint.changed()));
      writeFileSync(changed, `export const changed = ${r};\n`);
      oneChanged.push(time(() => fingerprint.changed()));
    }
    const gitMs = median(git);
    return {
      files,
      index,
      git_status_ms: gitMs,
      git_status_all_ms: median(gitAll),
      first_ms: first,
      unchanged_ms: median(unchanged),
      one_changed_ms: median(oneChanged),
      ratio_unchanged: median(unchanged) / gitMs,
      ratio_one_changed: median(oneChanged) / gitMs,
      ratio_unchanged_vs_all: median(unchanged) / median(gitAll),
      us_per_file_unchanged: (median(unchanged) * 1000) / files,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const sizes = (option("--sizes") ?? "1000,20000,100000").split(",").map(Number);
const repeats = Number(option("--repeats") ?? 5);
const rows: Row[] = [];
for (const files of sizes) {
  for (const index of [false, true]) {
    if (option("--index") === (index ? "no" : "yes")) continue;
    rows.push(measure(files, index, repeats));
  }
}
if (process.argv.includes("--json")) console.log(JSON.stringify(rows, null, 2));
else {
  const r2 = (n: number) => n.toFixed(2);
  console.log(`revision cost per action vs git status --porcelain (median of ${repeats}, same run)`);
  console.log(
    "files    git index  ratio unchanged  ratio one changed  vs -uall unchanged  µs/file unchanged  first walk",
  );
  for (const row of rows) {
    console.log(
      `${String(row.files).padEnd(8)} ${(row.index ? "yes" : "no").padEnd(10)} ${r2(row.ratio_unchanged).padEnd(16)} ` +
        `${r2(row.ratio_one_changed).padEnd(18)} ${r2(row.ratio_unchanged_vs_all).padEnd(19)} ` +
        `${r2(row.us_per_file_unchanged).padEnd(18)} ` +
        `${r2(row.first_ms / row.git_status_ms)}`,
    );
  }
}
