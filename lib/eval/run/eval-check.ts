// The hidden check: run after a run ends, on a fresh copy of the resulting workspace, in a fresh sandbox where the
// check's own files are mounted read-only from outside the workspace. Never shown to the model.
import { cpSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Check } from "../suite.ts";
import { errorMessage, InterruptedError } from "../../errors.ts";
import { reportsSkippedTests } from "../failure-class.ts";
import { MISSING_PROGRAM_EXIT_CODE, runProcess } from "../../workspace/process.ts";
import { chooseSandbox } from "../../workspace/create-workspace-executor.ts";
import type { SandboxMode } from "../../workspace/sandbox.ts";
import { makeScratch } from "../../workspace/scratch.ts";

export type CheckResult = {
  /** False when the check could not run at all (missing program, sandbox failure): an infra failure. */
  ran: boolean;
  passed: boolean;
  exit_code: number | null;
  timed_out: boolean;
  skipped_tests: boolean;
  duration_ms: number;
  /** What check.txt holds: the check's output, and "timed out after N ms" when it was stopped at its timeout. */
  output: string;
  /** The check ran in the OS sandbox. */
  sandboxed: boolean;
};

export type CheckOptions = {
  suiteDir: string;
  sandbox: SandboxMode;
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
  /** Names never passed to the check (the providers' keys). */
  secretEnvNames?: readonly string[];
};

/** {check} in argv becomes the check folder's absolute path. */
function checkArgv(command: readonly string[], checkDir: string | null): string[] {
  return command.map((arg) => (checkDir === null ? arg : arg.split("{check}").join(checkDir)));
}

/** Runs `check` on a copy of `workspace` (the workspace itself is left as the run left it). */
export async function runCheck(
  check: Check,
  workspace: string,
  { suiteDir, sandbox, env = process.env, signal, secretEnvNames = [] }: CheckOptions,
): Promise<CheckResult> {
  const scratch = makeScratch("check");
  const copy = join(scratch, "workspace");
  // The check's files are copied fresh beside the workspace copy, so nothing the run did can have touched them and
  // the sandbox mounts Loom's own copy rather than a folder named by the suite.
  const checkDir = check.files ? join(scratch, "check") : null;
  try {
    cpSync(workspace, copy, { recursive: true, verbatimSymlinks: true });
    if (checkDir !== null) {
      // "!": this branch runs only when the check names files
      cpSync(resolve(suiteDir, check.files!), checkDir, { recursive: true, verbatimSymlinks: true });
    }
    const bwrap = chooseSandbox(sandbox, { env });
    const result = await runProcess(
      { argv: checkArgv(check.command, checkDir), cwd: copy, timeoutMs: check.timeout_ms },
      {
        signal,
        env: { ...env, ...(checkDir ? { LOOM_CHECK_DIR: checkDir } : {}) },
        passEnv: checkDir ? ["LOOM_CHECK_DIR"] : [],
        removeEnv: secretEnvNames,
        ...(bwrap ? { sandbox: { bwrap, policy: { loomReadOnly: checkDir ? [checkDir] : [] }, root: copy } } : {}),
      },
    );
    const ran = result.exitCode !== MISSING_PROGRAM_EXIT_CODE;
    const skipped = reportsSkippedTests(result.output);
    return {
      ran,
      passed: ran && result.exitCode === 0 && !result.timedOut && !skipped,
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      skipped_tests: skipped,
      duration_ms: result.durationMs,
      output: result.timedOut
        ? `${result.output}${
          result.output && !result.output.endsWith("\n") ? "\n" : ""
        }timed out after ${check.timeout_ms} ms\n`
        : result.output,
      sandboxed: bwrap !== undefined,
    };
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    return {
      ran: false,
      passed: false,
      exit_code: null,
      timed_out: false,
      skipped_tests: false,
      duration_ms: 0,
      output: `The check could not run: ${errorMessage(error)}\n`,
      sandboxed: false,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
