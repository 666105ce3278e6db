// Replay: the scripted provider answers with recorded answers in order; the recorded executor hands back the
// recorded execution reports (loading their bulk into the store), so no workspace is needed.
import { canonicalJson } from "./digest.ts";
import { RecordingError } from "./errors.ts";
import type { Executor } from "./executor.ts";
import type { ActionName } from "./actions.ts";
import type { RecordedAnswer, RecordedExecution } from "./recording.ts";
import { comparableReport, type ExecutionReport } from "./reports.ts";
import type { ResultStore } from "./store.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "./turn.ts";

export class ScriptedProvider implements Provider {
  readonly name = "scripted";
  readonly capabilities = { prompt_caching: false, schema_enforcement: false };
  readonly #answers: readonly Pick<RecordedAnswer, "phase" | "value" | "usage" | "stop_reason">[];
  #next = 0;
  /** Requests seen, in order (tests inspect them). */
  readonly requests: TurnRequest[] = [];
  readonly #keepRequests: boolean;

  constructor(
    answers: readonly Pick<RecordedAnswer, "phase" | "value" | "usage" | "stop_reason">[],
    { keepRequests = false } = {},
  ) {
    this.#answers = answers;
    this.#keepRequests = keepRequests;
  }

  get calls(): number {
    return this.#next;
  }

  complete(request: TurnRequest, _options: CompleteOptions): Promise<ModelAnswer> {
    if (this.#keepRequests) this.requests.push(request);
    const answer = this.#answers[this.#next];
    if (!answer) {
      return Promise.reject(
        new RecordingError(
          `The recording has no answer for model call ${this.#next + 1} (${request.phase})`,
          "replay_exhausted",
        ),
      );
    }
    if (answer.phase !== request.phase) {
      return Promise.reject(
        new RecordingError(
          `Replay diverged at model call ${
            this.#next + 1
          }: the loop asked for ${request.phase}, the recording has ${answer.phase}`,
          "replay_diverged",
        ),
      );
    }
    this.#next += 1;
    return Promise.resolve({
      value: structuredClone(answer.value),
      usage: { ...answer.usage },
      stop_reason: answer.stop_reason ?? "end",
    });
  }
}

export class RecordedExecutor implements Executor {
  readonly #executions: readonly RecordedExecution[];
  readonly #store: ResultStore;
  #next = 0;
  #revision = "r0";

  constructor(executions: readonly RecordedExecution[], { store }: { store: ResultStore }) {
    this.#executions = executions;
    this.#store = store;
  }

  get revision(): string {
    return this.#revision;
  }

  execute(action: ActionName, args: Record<string, unknown>, { step }: { step: number }): Promise<ExecutionReport> {
    const recorded = this.#executions[this.#next];
    if (!recorded) {
      return Promise.reject(
        new RecordingError(`The recording has no execution for step ${step} (${action})`, "replay_exhausted"),
      );
    }
    if (recorded.action !== action || canonicalJson(recorded.args) !== canonicalJson(args)) {
      return Promise.reject(
        new RecordingError(
          `Replay diverged at step ${step}: the recording executed ${recorded.action}, the loop chose ${action}`,
          "replay_diverged",
        ),
      );
    }
    this.#next += 1;
    for (const [digest, content] of Object.entries(recorded.results)) {
      if (!this.#store.putVerified(digest, content)) {
        return Promise.reject(new RecordingError(`Step ${step}: recorded content does not match its digest ${digest}`));
      }
    }
    const { report } = recorded;
    if ((report.kind === "edit" || report.kind === "test" || report.kind === "command") && report.revision_after) {
      this.#revision = report.revision_after;
    }
    return Promise.resolve(structuredClone(recorded.report));
  }
}

/** Re-executes for real and compares each report with the recorded one (wall-clock durations aside). */
export class ComparingExecutor implements Executor {
  readonly #inner: Executor;
  readonly #recorded: readonly RecordedExecution[];
  #next = 0;
  /** Steps whose report differs from the recording. */
  readonly differing: number[] = [];

  constructor(inner: Executor, recorded: readonly RecordedExecution[]) {
    this.#inner = inner;
    this.#recorded = recorded;
  }

  get revision(): string {
    return this.#inner.revision;
  }

  get compared(): number {
    return this.#next;
  }

  async execute(
    action: ActionName,
    args: Record<string, unknown>,
    context: { step: number; signal?: AbortSignal },
  ): Promise<ExecutionReport> {
    const report = await this.#inner.execute(action, args, context);
    const recorded = this.#recorded[this.#next];
    this.#next += 1;
    if (!recorded || canonicalJson(comparableReport(recorded.report)) !== canonicalJson(comparableReport(report))) {
      this.differing.push(context.step);
    }
    return report;
  }
}
