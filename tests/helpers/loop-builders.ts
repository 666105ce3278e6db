// Small builders for loop tests: slice requests, scripted answers and an in-memory executor with real reports.
import { ACTION_NAMES, type ActionName } from "../../lib/vocabulary/actions.ts";
import type { ExecuteContext, Executor } from "../../lib/vocabulary/executor.ts";
import type { ExecutionReport } from "../../lib/vocabulary/reports.ts";
import type { SliceRequest } from "../../lib/slice.ts";
import { type LoopOptions, type LoopResult, previewModeOf, runLoop } from "../../lib/loop/loop.ts";
import { DEFAULT_STEP_PROTOCOL } from "../../lib/policy.ts";
import { OUTPUT_FORMAT_VERSION, type RunEvent } from "../../lib/run-events.ts";
import type { ContextReport } from "../../lib/report/context-report.ts";
import { foldReport } from "../../lib/report/fold.ts";
import type { ResultStore } from "../../lib/context/store.ts";
import { NULL_USAGE, type Phase, type Usage } from "../../lib/vocabulary/turn.ts";

export function sliceRequest(overrides: Partial<SliceRequest> = {}): SliceRequest {
  return {
    intent: "Make the tests pass.",
    instructions: "Work carefully.",
    workspace: ".",
    actions: [...ACTION_NAMES],
    test: { command: ["node", "test.mjs"], timeout_ms: 10_000 },
    model: "test/model",
    limits: { max_steps: 200 },
    commands: [["bash", "-c"]],
    ...overrides,
  };
}

export type Answer = { phase: Phase; value: unknown; usage: Usage };

export const answer = (phase: Phase, value: unknown, usage: Usage = NULL_USAGE): Answer => ({ phase, value, usage });
export const pick = (action: ActionName, reason?: string) =>
  answer("selection", reason ? { action, reason } : { action });
export const give = (args: Record<string, unknown>) => answer("arguments", args);

/**
 * An executor that really produces typed reports (bulk into the store) from scripted outputs, without a workspace.
 * `outputs` are consumed in order by actions that produce output; edits advance the revision.
 */
export class ScriptedExecutor implements Executor {
  #revision = 0;
  readonly calls: { action: ActionName; args: Record<string, unknown> }[] = [];
  constructor(
    private readonly store: ResultStore,
    private readonly outputs: string[] = [],
    private readonly testExit: number[] = [],
  ) {}

  get revision(): string {
    return `r${this.#revision}`;
  }

  execute(action: ActionName, args: Record<string, unknown>, { step }: ExecuteContext): Promise<ExecutionReport> {
    this.calls.push({ action, args });
    const out = () => this.store.put(this.outputs.shift() ?? "").digest;
    let report: ExecutionReport;
    switch (action) {
      case "read_file":
        report = { kind: "read", path: String(args.path), result: out() };
        break;
      case "list_files":
        report = { kind: "list", path: String(args.path), count: 1, result: out() };
        break;
      case "search":
        report = { kind: "search", query: String(args.query), path: String(args.path), matches: 1, result: out() };
        break;
      case "edit_file":
      case "write_file": {
        const before = this.revision;
        this.#revision += 1;
        report = { kind: "edit", paths: [String(args.path)], revision_before: before, revision_after: this.revision };
        break;
      }
      case "run_tests":
        report = {
          kind: "test",
          revision: this.revision,
          exit_code: this.testExit.shift() ?? 0,
          timed_out: false,
          duration_ms: 5,
          output: out(),
        };
        break;
      case "run_command":
        report = { kind: "command", argv: args.argv as string[], exit_code: 0, timed_out: false, output: out() };
        break;
      case "print":
        report = { kind: "print", text: this.store.put(String(args.text)).digest };
        break;
      case "finish":
        report = { kind: "finish", status: args.status as "success" | "failure", summary: String(args.summary) };
        break;
      default:
        report = { kind: "refusal", step, code: "unknown_action", reason: "unknown" };
    }
    return Promise.resolve(report);
  }
}

/**
 * runLoop with the run report its events fold to, bracketed as the lifecycle brackets them (run-started before,
 * run-ended after, nothing sandboxed): what the loop tests read their measurements from.
 */
export async function runLoopReported(
  request: SliceRequest,
  { version = "test", ...options }: LoopOptions & { version?: string },
): Promise<LoopResult & { report: ContextReport; events: RunEvent[] }> {
  const policy = options.policy;
  const events: RunEvent[] = [{
    type: "run-started",
    format_version: OUTPUT_FORMAT_VERSION,
    loom_version: version,
    policy,
    slice: null,
    model: request.model,
    max_steps: request.limits.max_steps,
    workspace: null,
    sandbox: null,
    step_protocol: request.step_protocol ?? DEFAULT_STEP_PROTOCOL,
    previews: previewModeOf(request, options),
  }];
  const result = await runLoop(request, {
    ...options,
    onEvent: (event) => {
      events.push(event);
      options.onEvent?.(event);
    },
  });
  events.push({
    type: "run-ended",
    policy,
    slice: null,
    outcome: result.outcome,
    error: result.closing.error,
    steps: result.steps,
    elapsed_ms: result.closing.elapsed_ms,
    archive: result.closing.archive,
    sandbox: null,
    verified: result.verified,
  });
  return { ...result, report: foldReport(events, { version }), events };
}
