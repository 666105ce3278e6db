// loom eval validate: proves each task's hidden check honest. The check must fail on the initial workspace, for an
// agent that does nothing (but run the visible test), and for an agent that only makes the visible test pass by
// editing it, for an agent whose modules exit 0 on import, and for one that plants the check's program on PATH; it must
// pass on the reference solution 3 times out of 3; and it lives outside the workspace (checked when the suite loads). Skipped tests count as failures (lib/eval/failure-class.ts).
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { errorMessage } from "../../errors.ts";
import { delimiter, extname, join, resolve, sep } from "node:path";
import { runCheck } from "./eval-check.ts";
import type { LoadedSuite } from "./eval-suite-file.ts";
import { applySolution, createWorkspace } from "./eval-workspace.ts";
import { runProcess } from "../../workspace/process.ts";
import type { SandboxMode } from "../../workspace/sandbox.ts";
import { chooseSandbox } from "../../workspace/create-workspace-executor.ts";
import { makeScratch } from "../../workspace/scratch.ts";

export type TaskValidation = { task: string; ok: boolean; problems: string[]; reference_passes: number };

const REFERENCE_TRIES = 3;

type Options = { jobs: number; sandbox: SandboxMode; env: Record<string, string | undefined>; signal?: AbortSignal };

export async function validateSuite(loaded: LoadedSuite, options: Options): Promise<TaskValidation[]> {
  const results: TaskValidation[] = new Array(loaded.tasks.length);
  let next = 0;
  const worker = async () => {
    while (!options.signal?.aborted) {
      const i = next++;
      const task = loaded.tasks[i];
      if (task === undefined) break; // every task taken
      results[i] = await validateTask(loaded, task, options);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.jobs) }, worker));
  return results.filter(Boolean);
}

/** A stand-in that makes a test file pass whatever the code does. */
function passingTest(path: string): string {
  const ext = extname(path);
  if (ext === ".py") return "import sys\nsys.exit(0)\n";
  if ([".js", ".mjs", ".cjs", ".ts"].includes(ext)) return "process.exit(0);\n";
  return "#!/bin/sh\nexit 0\n";
}

async function validateTask(
  loaded: LoadedSuite,
  task: LoadedSuite["tasks"][number],
  { sandbox, env, signal }: Options,
): Promise<TaskValidation> {
  const problems: string[] = [];
  const scratch = makeScratch("validate");
  let n = 0;
  const fresh = (): string => {
    const dest = join(scratch, `w${n++}`);
    createWorkspace(task, { suiteDir: loaded.dir, dest });
    return dest;
  };
  const check = (workspace: string) => runCheck(task.check, workspace, { suiteDir: loaded.dir, sandbox, env, signal });
  const visibleTest = async (workspace: string) => {
    const bwrap = chooseSandbox(sandbox, { env });
    return await runProcess({ argv: task.test.command, cwd: workspace, timeoutMs: task.test.timeout_ms }, {
      signal,
      env,
      ...(bwrap ? { sandbox: { bwrap, policy: {}, root: workspace } } : {}),
    });
  };
  const mustFail = async (label: string, workspace: string) => {
    const result = await check(workspace);
    if (!result.ran) problems.push(`the check could not run on ${label}: ${firstLine(result.output)}`);
    else if (result.passed) problems.push(`the check passes on ${label}`);
  };
  let passes = 0;
  try {
    await mustFail("the initial workspace", fresh());

    const idle = fresh();
    await visibleTest(idle);
    await mustFail("a do-nothing agent's workspace", idle);

    const testOnly = fresh();
    const testFiles = task.test.command.slice(1).filter((arg) => {
      const path = resolve(testOnly, arg);
      return path.startsWith(testOnly + sep) && existsSync(path);
    });
    if (testFiles.length === 0) {
      problems.push("the visible test command names no workspace file, so a test-only edit cannot be tried");
    }
    for (const file of testFiles) writeFileSync(resolve(testOnly, file), passingTest(file));
    if (testFiles.length > 0) await mustFail("a workspace whose visible test was edited to pass", testOnly);

    // An agent whose every module exits 0 as soon as it is loaded: a check that runs the agent's code in its own
    // process and trusts its exit status would pass it.
    const exitsAtImport = fresh();
    for (const file of sourceFiles(exitsAtImport)) writeFileSync(join(exitsAtImport, file), passingTest(file));
    await mustFail("a workspace whose modules exit 0 on import", exitsAtImport);

    // An agent that plants the check's program in node_modules/.bin, with a relative node_modules/.bin on PATH (as
    // many npm users have): Loom drops relative and workspace PATH entries, so the real program runs the check.
    const planted = fresh();
    const bin = join(planted, "node_modules", ".bin");
    mkdirSync(bin, { recursive: true });
    for (const program of new Set([task.check.command[0], task.test.command[0]])) {
      if (program === undefined || program.includes("/")) continue;
      writeFileSync(join(bin, program), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    }
    const plantedEnv = { ...env, PATH: [join("node_modules", ".bin"), env.PATH ?? ""].join(delimiter) };
    const plantedCheck = await runCheck(task.check, planted, {
      suiteDir: loaded.dir,
      sandbox,
      env: plantedEnv,
      signal,
    });
    if (plantedCheck.passed) problems.push("the check passes on a workspace that plants its program on PATH");

    if (task.solution === null) problems.push("no reference solution");
    else {
      for (let i = 0; i < REFERENCE_TRIES; i++) {
        const solved = fresh();
        applySolution(solved, resolve(loaded.dir, task.solution), { source: `task ${task.id}: solution` });
        const result = await check(solved);
        if (result.passed) passes++;
        else if (i === 0 || passes > 0) {
          problems.push(
            `the check fails on the reference solution (${
              result.timed_out ? "timed out" : result.skipped_tests ? "skipped tests" : `exit ${result.exit_code}`
            }: ${firstLine(result.output)})`,
          );
        }
        if (i === 0) {
          const test = await visibleTest(solved);
          if (test.exitCode !== 0) {
            problems.push(`the visible test fails on the reference solution (exit ${test.exitCode})`);
          }
        }
      }
      if (passes < REFERENCE_TRIES && passes > 0) {
        problems.push(`the reference passed ${passes}/${REFERENCE_TRIES} times`);
      }
    }
  } catch (error) {
    problems.push(errorMessage(error));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { task: task.id, ok: problems.length === 0, problems: [...new Set(problems)], reference_passes: passes };
}

const SOURCE_EXTENSIONS = new Set([".js", ".mjs", ".cjs", ".ts", ".mts", ".py"]);

/** The workspace's source files (relative paths), outside node_modules and .git. */
function sourceFiles(root: string): string[] {
  return (readdirSync(root, { recursive: true }) as string[]).filter((file) =>
    SOURCE_EXTENSIONS.has(extname(file)) && !file.split(sep).some((part) => part === "node_modules" || part === ".git")
  );
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}
