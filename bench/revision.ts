// The revision's cost per action, as users meet it, against `git status --porcelain` on the same tree in the same run
// (turns interleaved, so both see the same machine load). Reports ratios, not absolute times.
//
// The action path (the default): `loom replay --execute` of 40 `run_command` actions (`true`), sandboxed when
// bubblewrap is installed (the default mode, auto), on a committed tree of N files and on a 1-file tree, timed by the
// steps' events: an action's cost on the big tree minus the same on the small one is what the tree costs an action
// (git's diff-files, the walk, the snapshot, the git guard) — what issue 43 measured with 40 against 20 actions, without
// the first action's baseline (whose noise, divided by 20, was most of that figure's spread). Live runs and sandboxed
// commands go through the same executor.
// The walk alone (`--walk`): WorkspaceFingerprint.changed() on generated trees without a git index (a fresh `git init`,
// everything untracked) and with one (every file added and committed) — one part of the action's cost.
// Run: bun bench/revision.ts [--sizes 50000] [--repeats 3] [--json]
//      bun bench/revision.ts --walk [--sizes 1000,20000] [--repeats 5] [--index yes|no] [--json]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { WorkspaceFingerprint } from "../lib/workspace/workspace-fingerprint.ts";
import { findBubblewrap } from "../lib/workspace/sandbox.ts";
import { startRun } from "../lib/run/start-run.ts";
import { planRun } from "../lib/run/run-plan.ts";
import { parseRecording } from "../lib/recording/recording.ts";
import type { SliceRequest } from "../lib/slice.ts";

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

const NO_USAGE = { input: null, cache_read: null, cache_write: null, output: null };

/** A recording of `actions` run_command steps (`true`) and a finish, for `replay --execute`. */
function recording(slice: Omit<SliceRequest, "workspace">, actions: number): string {
  const lines: unknown[] = [{ type: "header", format: "loom-recording", version: 1, slice }];
  for (let step = 1; step <= actions + 1; step++) {
    const finish = step > actions;
    const action = finish ? "finish" : "run_command";
    const args = finish ? { status: "success", summary: "done" } : { argv: ["true"] };
    const report = finish ? { kind: "finish", ...args } : { kind: "refusal", step, code: "placeholder", reason: "-" };
    lines.push({ type: "answer", phase: "selection", step, value: { action }, usage: NO_USAGE });
    lines.push({ type: "answer", phase: "arguments", step, value: args, usage: NO_USAGE });
    lines.push({ type: "execution", step, action, args, report, results: {} });
  }
  return lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
}

const SLICE: Omit<SliceRequest, "workspace"> = {
  intent: "bench",
  instructions: "bench",
  actions: ["run_command", "finish"],
  test: { command: ["true"], timeout_ms: 60_000 },
  model: "test/model",
  limits: { max_steps: 1_000 },
  commands: [["true"]],
  sandbox: { mode: "auto" },
};

/**
 * One `replay --execute` of `actions` commands on `root`: the milliseconds per action after the first (which takes the
 * baseline: the first walk, the snapshot's first read, the git guard's start), from the steps' events as they happen.
 */
async function replayPerAction(root: string, actions: number): Promise<number> {
  const replayed = parseRecording(recording(SLICE, actions));
  const executed: number[] = [];
  const plan = planRun({}, { env: process.env });
  const result = await startRun({ request: { ...replayed.header.slice, workspace: root } }, plan, {
    replay: { recording: replayed, execute: true },
    warn: () => {},
    onEvent: (event) => {
      if (event.type === "step-executed") executed.push(performance.now());
    },
  });
  if (result.steps !== actions + 1) throw new Error(`the replay ran ${result.steps} steps, not ${actions + 1}`);
  const first = executed[0] ?? 0, last = executed[actions - 1] ?? 0;
  return (last - first) / (actions - 1);
}

const ACTIONS = 40;

type ActionRow = {
  files: number;
  sandboxed: boolean;
  git_status_ms: number;
  /** What one action costs more on the N-file tree than on the 1-file tree (per action after the first, big - small). */
  extra_per_action_ms: number;
  ratio: number;
};

async function measureActions(files: number, repeats: number): Promise<ActionRow> {
  const big = makeTree(files, true);
  const small = makeTree(1, true);
  try {
    const gitStatus = () => execFileSync("git", ["status", "--porcelain"], { cwd: big, stdio: "ignore" });
    gitStatus();
    const git: number[] = [];
    const extra: number[] = [];
    for (let r = 0; r < repeats; r++) {
      const bigMs = await replayPerAction(big, ACTIONS);
      git.push(time(() => gitStatus()));
      const smallMs = await replayPerAction(small, ACTIONS);
      git.push(time(() => gitStatus()));
      extra.push(bigMs - smallMs);
    }
    const gitMs = median(git);
    return {
      files,
      sandboxed: findBubblewrap().found !== undefined,
      git_status_ms: gitMs,
      extra_per_action_ms: median(extra),
      ratio: median(extra) / gitMs,
    };
  } finally {
    rmSync(big, { recursive: true, force: true });
    rmSync(small, { recursive: true, force: true });
  }
}

const walk = process.argv.includes("--walk");
const sizes = (option("--sizes") ?? (walk ? "1000,20000,100000" : "50000")).split(",").map(Number);
const repeats = Number(option("--repeats") ?? (walk ? 5 : 3));
const r2 = (n: number) => n.toFixed(2);
if (!walk) {
  const rows: ActionRow[] = [];
  for (const files of sizes) rows.push(await measureActions(files, repeats));
  if (process.argv.includes("--json")) console.log(JSON.stringify(rows, null, 2));
  else {
    console.log(`revision cost per action as users meet it (replay --execute of ${ACTIONS}), median of ${repeats}`);
    console.log("files    sandboxed  extra ms / action  git status ms  ratio to git status");
    for (const row of rows) {
      console.log(
        `${String(row.files).padEnd(8)} ${(row.sandboxed ? "yes" : "no").padEnd(10)} ` +
          `${r2(row.extra_per_action_ms).padEnd(18)} ${r2(row.git_status_ms).padEnd(14)} ${r2(row.ratio)}`,
      );
    }
  }
} else {
  const rows: Row[] = [];
  for (const files of sizes) {
    for (const index of [false, true]) {
      if (option("--index") === (index ? "no" : "yes")) continue;
      rows.push(measure(files, index, repeats));
    }
  }
  if (process.argv.includes("--json")) console.log(JSON.stringify(rows, null, 2));
  else {
    console.log(`the walk alone per action vs git status --porcelain (median of ${repeats}, same run)`);
    console.log(
      "files    git index  ratio unchanged  ratio one changed  vs -uall unchanged  µs/file unchanged  first walk",
    );
    for (const row of rows) {
      console.log(
        `${String(row.files).padEnd(8)} ${(row.index ? "yes" : "no").padEnd(10)} ${
          r2(row.ratio_unchanged).padEnd(16)
        } ` +
          `${r2(row.ratio_one_changed).padEnd(18)} ${r2(row.ratio_unchanged_vs_all).padEnd(19)} ` +
          `${r2(row.us_per_file_unchanged).padEnd(18)} ` +
          `${r2(row.first_ms / row.git_status_ms)}`,
      );
    }
  }
}
