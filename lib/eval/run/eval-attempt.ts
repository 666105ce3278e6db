// One attempt of one run of an evaluation: a fresh workspace, the run lifecycle (startRun, sandbox included), the
// hidden check on what the run left, the artifacts under DIR/runs/ID/attempt-N/, and the row for eval.json.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { requestBytes } from "../../report/context-report.ts";
import { errorMessage, InterruptedError, UsageError } from "../../errors.ts";
import type { EvalRow, EvalSettings } from "../eval-file.ts";
import { failureClass, INTERRUPTED } from "../failure-class.ts";
import { runId, type RunKey } from "../matrix.ts";
import type { PriceTable } from "../../prices.ts";
import type { ModelTable } from "../../models/models.ts";
import { sliceRequest } from "../../slice.ts";
import type { Provider } from "../../vocabulary/turn.ts";
import { type CheckResult, runCheck } from "./eval-check.ts";
import type { LoadedSuite } from "./eval-suite-file.ts";
import { changesSince, createWorkspace, describeChanges, snapshot } from "./eval-workspace.ts";
import { writeFileAtomic } from "../../io/files.ts";
import type { SandboxMode } from "../../workspace/sandbox.ts";
import { secretEnvNames, startRun } from "../../run/start-run.ts";
import { type RunPlan, runPlan } from "../../run/run-plan.ts";
import { definedOnly, resolveSettings, type SettingsPlan } from "../../settings/settings.ts";
import type { ContextPolicyName, StepProtocol } from "../../policy.ts";
import { makeScratch } from "../../workspace/scratch.ts";

/** What every run of an evaluation shares. */
export type AttemptSettings = {
  out: string;
  settings: EvalSettings;
  /** The runs' settings, resolved once per policy (evalPlans): a run layers its request onto its policy's. */
  plans: Readonly<Partial<Record<ContextPolicyName, SettingsPlan>>>;
  prices: PriceTable;
  /** The model table in use (default: the built-in one): how each run's model is called, and its retirement. */
  models?: ModelTable;
  sandbox: SandboxMode;
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
  /** Tests and the benchmark: a provider per run instead of the one the model names. */
  provider?: (run: RunKey) => Provider | undefined;
  warn?: (message: string) => void;
  now?: () => number;
};

/** How an attempt ended when the evaluation was interrupted: the row of what the run spent, null when none started. */
export type Interrupted = { interrupted: EvalRow | null };

/**
 * One run: fresh workspace, the run lifecycle, the hidden check, the artifacts. An interrupt still gives the run's
 * row (outcome and error_code interrupted, no check) with what its calls spent, as its report and recording say.
 */
export async function runAttempt(
  run: RunKey,
  { attempt, order, loaded, options, now }: {
    attempt: number;
    order: number;
    loaded: LoadedSuite;
    options: AttemptSettings;
    now: () => number;
  },
): Promise<EvalRow | Interrupted> {
  if (options.signal?.aborted) return { interrupted: null };
  const begun = now();
  // "!": a run is made only for a task of the loaded suite (matrix.ts)
  const task = loaded.tasks.find((t) => t.id === run.task)!;
  const id = runId(run);
  const dir = join(options.out, "runs", id, `attempt-${attempt}`);
  rmSync(dir, { recursive: true, force: true });
  const scratch = makeScratch("eval");
  const workspace = join(scratch, "workspace");
  try {
    let setupError: string | null = null;
    let before = new Map<string, string>();
    try {
      createWorkspace(task, { suiteDir: loaded.dir, dest: workspace });
      before = snapshot(workspace);
    } catch (error) {
      if (error instanceof UsageError) throw error; // the suite's fault: exit 2, not an infra failure retried
      setupError = errorMessage(error);
    }
    // The marker makes each run's prefix unique, so no run can read a cache another run wrote. It names no task, file
    // or run id and says what it is: a small live model took the run id ("task.model.policy.r1") for a path and read it.
    const marker = options.settings.cache_marker
      ? `(Cache marker ${randomBytes(8).toString("hex")}: not part of the task; ignore it.)\n\n`
      : "";
    const request = sliceRequest({
      intent: task.intent,
      instructions: marker + task.instructions,
      workspace,
      actions: task.actions,
      // "!": the suite gives every task a test (its default when the file names none)
      test: task.test!,
      model: run.model,
      limits: { max_steps: task.max_steps },
      commands: task.commands.length ? task.commands : undefined,
      require_passing_tests: task.require_passing_tests || undefined,
    });
    const afterSetup = now();
    // The same wall-clock cap for every run: past it the run is stopped like an interrupt, and the check decides.
    const cap = new AbortController();
    const onAbort = () => cap.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      cap.abort();
    }, options.settings.run_timeout_ms);
    const result = setupError === null
      ? await startRun({ request }, attemptPlan(options, { policy: run.policy, dir }), {
        signal: cap.signal,
        env: options.env,
        warn: options.warn,
        provider: options.provider?.(run),
      })
      : null;
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    const runEnd = now();
    const report = result?.report ?? null;
    /** The row of this run, as far as it got. */
    const rowOf = (
      { outcome, errorCode, check }: {
        outcome: EvalRow["outcome"];
        errorCode: string | null;
        check: CheckResult | null;
      },
    ): EvalRow => ({
      id,
      task: run.task,
      model: run.model,
      policy: run.policy,
      repeat: run.repeat,
      attempt,
      counted: true,
      order,
      outcome,
      error_code: errorCode,
      check: check && {
        passed: check.passed,
        exit_code: check.exit_code,
        timed_out: check.timed_out,
        skipped_tests: check.skipped_tests,
        duration_ms: check.duration_ms,
      },
      class: failureClass({ outcome, error_code: errorCode, check }),
      steps: result?.steps ?? 0,
      model_calls: report?.model_calls ?? 0,
      usage: report?.usage ?? { input: null, cache_read: null, cache_write: null, output: null },
      cost: report?.cost ?? null,
      sandbox: {
        mode: options.sandbox,
        active: (result?.sandbox?.active ?? false) && (check === null || check.sandboxed),
      },
      wall_ms: runEnd - afterSetup,
      overhead_ms: Math.max(0, now() - begun - (runEnd - afterSetup)),
      checkpoints: report?.checkpoints ?? 0,
      lookups: report ? report.retrievals.result + report.retrievals.list_history + report.retrievals.read_history : 0,
      request_bytes: report ? requestBytes(report.phases).total : 0,
    });
    // Interrupted before its result: what the run spent is kept, its check is not run.
    const interrupted = (): Interrupted => ({
      interrupted: { ...rowOf({ outcome: "interrupted", errorCode: INTERRUPTED, check: null }), counted: false },
    });
    if (options.signal?.aborted) return interrupted();
    const ranLoop = result !== null && result.outcome !== "startup_failed";
    let check: CheckResult | null = null;
    if (ranLoop) {
      const changes = changesSince(before, workspace);
      writeFileAtomic(join(dir, "changes.json"), `${JSON.stringify(changes)}\n`);
      writeFileAtomic(join(dir, "changes.txt"), describeChanges(changes));
      let checked;
      try {
        checked = await runCheck(task.check, workspace, {
          suiteDir: loaded.dir,
          sandbox: options.sandbox,
          env: options.env,
          signal: options.signal,
          secretEnvNames: secretEnvNames(),
        });
      } catch (error) {
        if (error instanceof InterruptedError) return interrupted();
        throw error;
      }
      if (options.signal?.aborted) return interrupted();
      writeFileAtomic(join(dir, "check.txt"), checked.output);
      check = checked;
    }
    const outcome = result?.outcome ?? "startup_failed";
    const errorCode = timedOut ? "run_timeout" : result ? result.error?.code ?? null : "workspace_setup_failed";
    if (setupError !== null) writeFileAtomic(join(dir, "error.txt"), `${setupError}\n`);
    return rowOf({ outcome, errorCode, check });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The settings of an evaluation's runs, resolved once per policy: the command line's protocol, sandbox and provider
 * limits over the environment's base URLs. The user's config files are not read: an evaluation is its own settings
 * (its key holds them), and the same on every machine.
 */
export function evalPlans(
  { policies, stepProtocol, sandbox, http = {}, env }: {
    policies: readonly ContextPolicyName[];
    stepProtocol: StepProtocol;
    sandbox: SandboxMode;
    http?: { timeoutMs?: number; deadlineMs?: number };
    env: Record<string, string | undefined>;
  },
): Partial<Record<ContextPolicyName, SettingsPlan>> {
  return Object.fromEntries(policies.map((policy) => {
    const flags = definedOnly({
      context_policy: policy,
      step_protocol: stepProtocol,
      sandbox,
      provider_deadline_ms: http.deadlineMs,
      provider_idle_timeout_ms: http.timeoutMs,
    });
    const resolved = resolveSettings({ flags, env });
    if (!resolved.ok) throw new UsageError(resolved.message);
    return [policy, resolved.plan];
  }));
}

/** A run's plan: its policy's settings (both policies of a pair run under the same protocol, sandbox and limits: only
 * the policy differs), its report and recording in its attempt's folder, the evaluation's tables. */
function attemptPlan(options: AttemptSettings, { policy, dir }: { policy: ContextPolicyName; dir: string }): RunPlan {
  const settings = options.plans[policy];
  if (settings === undefined) throw new Error(`no settings resolved for the policy ${policy}`);
  return runPlan(settings, {
    contextReport: join(dir, "report.json"),
    record: join(dir, "recording.jsonl"),
    prices: options.prices,
    models: options.models,
  });
}
