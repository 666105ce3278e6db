// loom eval rescore DIR: re-runs the hidden checks on the workspace changes each run saved, without calling a model,
// and rewrites DIR/eval.json with the new checks, classes and summary. Refused when a task's files changed since.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../../errors.ts";
import type { EvalFile, EvalRow } from "../eval-file.ts";
import { failureClass } from "../failure-class.ts";
import { runCheck } from "./eval-check.ts";
import { readEvalFile, writeEvalFile } from "./eval-run.ts";
import { buildEvalFile } from "../assemble.ts";
import { VERSION } from "../../version.ts";
import { checkHashes, type LoadedSuite, loadSuiteFile, taskHashes } from "./eval-suite-file.ts";
import { applyChangesFile, createWorkspace } from "./eval-workspace.ts";
import { writeFileAtomic } from "../../io/files.ts";
import type { SandboxMode } from "../../workspace/sandbox.ts";
import { makeScratch } from "../../workspace/scratch.ts";

export async function rescoreEval(
  dir: string,
  { jobs, sandbox, env, signal, cwd, allowOutside, acceptChangedChecks = false, suite, note = () => {} }: {
    jobs: number;
    /**
     * The suite whose checks run, as the user named it. Absent: the one eval.json names — a results folder is data
     * someone may have handed you, so that suite is shown (note) and its checks run only sandboxed (never off).
     */
    suite?: string;
    note?: (message: string) => void;
    /** Rescore even when a task's check changed since the evaluation ran (its files, command or timeout). */
    acceptChangedChecks?: boolean;
    sandbox: SandboxMode;
    env: Record<string, string | undefined>;
    signal?: AbortSignal;
    cwd: string;
    allowOutside?: boolean;
  },
): Promise<EvalFile> {
  const path = join(dir, "eval.json");
  if (!existsSync(path)) throw new UsageError(`${JSON.stringify(dir)} holds no eval.json`);
  const file = readEvalFile(path);
  if (suite === undefined) {
    if (sandbox === "off") {
      throw new UsageError(
        `${JSON.stringify(path)} names the suite ${JSON.stringify(file.suite.path)}: the checks of a suite a results ` +
          "folder names run only sandboxed; name the suite yourself with --suite SUITE to rescore with --sandbox off",
      );
    }
    const named = JSON.stringify(file.suite.path);
    note(`running the checks of the suite ${path} names: ${named} (sandboxed; --suite names another)`);
  }
  const loaded = loadSuiteFile(suite ?? file.suite.path, { cwd, allowOutside });
  const { key, changed } = rescoreKey(file, loaded, { acceptChangedChecks });
  const rows: EvalRow[] = [...file.rows];
  let next = 0;
  const worker = async () => {
    while (!signal?.aborted) {
      const i = next++;
      const row = rows[i];
      if (row === undefined) break; // every row taken
      const runDir = join(dir, "runs", row.id, `attempt-${row.attempt}`);
      const changesPath = join(runDir, "changes.json");
      if (row.check === null || !existsSync(changesPath)) continue;
      // "!": a results file of this suite names only its tasks (its key was checked before)
      const task = loaded.tasks.find((t) => t.id === row.task)!;
      const scratch = makeScratch("rescore");
      try {
        const workspace = join(scratch, "workspace");
        createWorkspace(task, { suiteDir: loaded.dir, dest: workspace });
        applyChangesFile(workspace, changesPath);
        const check = await runCheck(task.check, workspace, { suiteDir: loaded.dir, sandbox, env, signal });
        if (signal?.aborted) return;
        writeFileAtomic(join(runDir, "check.txt"), check.output);
        rows[i] = {
          ...row,
          check: {
            passed: check.passed,
            exit_code: check.exit_code,
            timed_out: check.timed_out,
            skipped_tests: check.skipped_tests,
            duration_ms: check.duration_ms,
          },
          class: failureClass({ outcome: row.outcome, error_code: row.error_code, check }),
          // The run's processes ran as they did; the check ran again, in this sandbox or not.
          sandbox: { mode: row.sandbox.mode, active: row.sandbox.active && check.sandboxed },
        };
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, worker));
  const { rows: _, summary: __, kind: _k, schema_version: _s, loom_version: _l, ...base } = file;
  const earlier = file.rescore?.changed_checks.filter((c) => !changed.some((now) => now.task === c.task)) ?? [];
  const rescored = buildEvalFile({ ...base, key, rescore: { changed_checks: [...earlier, ...changed] } }, {
    rows,
    dropped: file.summary.dropped_pairs,
    version: VERSION,
  });
  if (!signal?.aborted) writeEvalFile(path, rescored);
  return rescored;
}

/**
 * The key the rescored file carries, and the checks that changed. A task whose workspace or settings changed is
 * refused; one whose check alone changed is refused too unless the user accepts it (the documented use: a flaky check
 * was fixed). The accepted change is recorded, old and new check hash, and the key moves to the new checks.
 */
function rescoreKey(
  file: EvalFile,
  loaded: LoadedSuite,
  { acceptChangedChecks }: { acceptChangedChecks: boolean },
): { key: EvalFile["key"]; changed: { task: string; old: string; new: string }[] } {
  const checks = checkHashes(loaded);
  const now = taskHashes(loaded, { checks });
  const withOldChecks = taskHashes(loaded, { checks: file.key.checks });
  const changed: { task: string; old: string; new: string }[] = [];
  for (const task of file.suite.tasks) {
    if (now[task] === file.key.tasks[task]) continue;
    if (withOldChecks[task] !== file.key.tasks[task]) {
      throw new UsageError(
        `Cannot rescore: task ${JSON.stringify(task)} changed since the evaluation ran (its workspace or settings)`,
      );
    }
    if (!acceptChangedChecks) {
      throw new UsageError(
        `Cannot rescore: the check of task ${
          JSON.stringify(task)
        } changed since the evaluation ran; add --accept-changed-checks to rescore with the new check`,
      );
    }
    changed.push({ task, old: hashOf(file.key.checks, task, "recorded check"), new: hashOf(checks, task, "check") });
  }
  // Every task of the file has its hashes here: one missing from the suite failed the comparison above.
  const tasks = Object.fromEntries(file.suite.tasks.map((t) => [t, hashOf(now, t, "task")]));
  const keptChecks = Object.fromEntries(file.suite.tasks.map((t) => [t, hashOf(checks, t, "check")]));
  return { key: { ...file.key, tasks, checks: keptChecks }, changed };
}

function hashOf(hashes: Readonly<Record<string, string>>, task: string, what: string): string {
  const hash = hashes[task];
  if (hash === undefined) throw new UsageError(`Cannot rescore: no ${what} hash for task ${JSON.stringify(task)}`);
  return hash;
}
