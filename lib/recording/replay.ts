// Replay: the scripted provider answers with recorded answers in order; the recorded executor hands back the
// recorded execution reports (loading their bulk into the store), so no workspace is needed.
import { canonicalJson } from "../text/digest.ts";
import { RecordingError } from "../errors.ts";
import type { Executor, LineChange } from "../vocabulary/executor.ts";
import { type ActionName, takesArguments } from "../vocabulary/actions.ts";
import { asLookup } from "../vocabulary/answer.ts";
import type { StepProtocol } from "../policy.ts";
import type { RecordedAnswer, RecordedExecution, Recording } from "./recording.ts";
import { availableActions } from "../slice.ts";
import { comparableReport, type ExecutionReport } from "../vocabulary/reports.ts";
import type { ResultStore } from "../context/store.ts";
import {
  type CompleteOptions,
  type ModelAnswer,
  NULL_USAGE,
  type Provider,
  type TurnRequest,
} from "../vocabulary/turn.ts";

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
  #lines: LineChange | null | undefined;

  constructor(executions: readonly RecordedExecution[], { store }: { store: ResultStore }) {
    this.#executions = executions;
    this.#store = store;
  }

  get revision(): string {
    return this.#revision;
  }

  /** The lines the recorded step added and removed, as recorded (undefined: a recording from before 0.6.0). */
  lines(): LineChange | null | undefined {
    return this.#lines;
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
    this.#lines = recorded.lines;
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
  /** The recorded reports by step: a step is compared with its own step's report, never with the next one held. */
  readonly #recorded: ReadonlyMap<number, RecordedExecution>;
  #compared = 0;
  /** Steps whose report differs from the recording. */
  readonly differing: number[] = [];

  constructor(inner: Executor, recorded: readonly RecordedExecution[]) {
    this.#inner = inner;
    this.#recorded = new Map(recorded.map((execution) => [execution.step, execution]));
  }

  get revision(): string {
    return this.#inner.revision;
  }

  lines(): LineChange | null | undefined {
    return this.#inner.lines?.();
  }

  /** How many execution reports were compared with the recording's. */
  get compared(): number {
    return this.#compared;
  }

  async execute(
    action: ActionName,
    args: Record<string, unknown>,
    context: { step: number; signal?: AbortSignal },
  ): Promise<ExecutionReport> {
    const report = await this.#inner.execute(action, args, context);
    const recorded = this.#recorded.get(context.step);
    // A step the recording holds no report of (a partial recording) is not compared: it neither equals nor differs.
    if (!recorded) return report;
    this.#compared += 1;
    if (canonicalJson(comparableReport(recorded.report)) !== canonicalJson(comparableReport(report))) {
      this.differing.push(context.step);
    }
    return report;
  }
}

type Answer = Pick<RecordedAnswer, "phase" | "step" | "value" | "usage" | "stop_reason">;

/** The protocol a recording was made under: its slice says so, else its answers show it (two-call when either fits). */
export function recordingProtocol(recording: Pick<Recording, "header" | "answers">): StepProtocol {
  const said = recording.header.slice.step_protocol;
  if (said) return said;
  if (recording.answers.some((a) => a.phase === "arguments")) return "two-call";
  const oneCall = recording.answers.some((a) =>
    a.phase === "selection" && isObject(a.value) && "args" in a.value && typeof a.value.action === "string"
  );
  return oneCall ? "single-call" : "two-call";
}

/**
 * A recording's model answers as another step protocol would have asked for them, so one trajectory replays under
 * either: two-call -> single-call merges each step's selection decision with its arguments answer (lookups of either
 * stage come first, as selection lookups); single-call -> two-call splits each answer into the selection decision and
 * the arguments. Invalid answers stay invalid (a re-ask either way); lookups keep their order. Two cases cannot map
 * one to one, and then the outcomes may differ: a step whose two stages looked up more than 8 times in all (one stage
 * of a single-call step permits 8), and an arguments stage that spent its 9th lookup (a refusal there, a suspension in
 * one call).
 */
export function convertAnswers<A extends Answer>(
  answers: readonly A[],
  { from, to, actions }: { from: StepProtocol; to: StepProtocol; actions: readonly ActionName[] },
): A[] {
  if (from === to) return answers.slice();
  const out: A[] = [];
  for (const group of byStep(answers)) {
    if (group[0]?.phase === "classification") out.push(...group);
    else out.push(...(to === "single-call" ? mergeStep(group, actions) : splitStep(group, actions)));
  }
  return out;
}

/** A converted recording: its answers for `to`, its slice saying so. */
export function convertRecording(recording: Recording, to: StepProtocol): Recording {
  const from = recordingProtocol(recording);
  const slice = { ...recording.header.slice, step_protocol: to };
  if (from === to) return { ...recording, header: { ...recording.header, slice } };
  const actions = availableActions({ ...recording.header.slice, workspace: "." });
  return {
    ...recording,
    header: { ...recording.header, slice },
    answers: convertAnswers(recording.answers, { from, to, actions }),
  };
}

function byStep<A extends Answer>(answers: readonly A[]): A[][] {
  const groups: A[][] = [];
  for (const answer of answers) {
    const last = groups[groups.length - 1];
    const head = last?.[0];
    const same = head !== undefined && head.step === answer.step && (head.phase === "classification") ===
        (answer.phase === "classification");
    if (same && last !== undefined) last.push(answer);
    else groups.push([answer]);
  }
  return groups;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `{action, reason?}` when `value` is a selection decision among `actions`, else null. */
function chosen(value: unknown, actions: readonly ActionName[]): { action: ActionName; reason?: string } | null {
  if (!isObject(value) || asLookup(value) !== null) return null;
  const action = value.action as ActionName;
  if (typeof action !== "string" || !actions.includes(action)) return null;
  const reason = typeof value.reason === "string" ? { reason: value.reason } : {};
  return { action, ...reason };
}

function mergeStep<A extends Answer>(group: readonly A[], actions: readonly ActionName[]): A[] {
  const out: A[] = [];
  type Pending = { answer: A; decision: { action: ActionName; reason?: string }; merged: boolean };
  let pending: Pending | null = null;
  const flush = () => {
    // A selection never followed by arguments (the recording ends there) goes as it was: invalid in one call too.
    if (pending && !pending.merged) out.push(pending.answer);
    pending = null;
  };
  for (const answer of group) {
    if (answer.phase === "selection") {
      flush();
      const decision = isObject(answer.value) && Object.keys(answer.value).length <= 2
        ? chosen(answer.value, actions)
        : null;
      if (decision && takesArguments(decision.action)) pending = { answer, decision, merged: false };
      else out.push(answer);
      continue;
    }
    const current = pending as Pending | null;
    if (asLookup(answer.value) !== null || !current) {
      out.push({ ...answer, phase: "selection" });
      continue;
    }
    // Each arguments answer (a re-ask too) carries the decision it argues for.
    current.merged = true;
    out.push({ ...answer, phase: "selection", value: { ...current.decision, args: answer.value } });
  }
  flush();
  return out;
}

function splitStep<A extends Answer>(group: readonly A[], actions: readonly ActionName[]): A[] {
  const out: A[] = [];
  let action: ActionName | null = null;
  for (const answer of group) {
    if (asLookup(answer.value) !== null) {
      out.push({ ...answer, phase: action ? "arguments" : "selection" });
      continue;
    }
    if (action) {
      const value = isObject(answer.value) && "args" in answer.value ? answer.value.args : answer.value;
      out.push({ ...answer, phase: "arguments", value });
      continue;
    }
    const decision = chosen(answer.value, actions);
    if (!decision) {
      out.push(answer);
      continue;
    }
    out.push({ ...answer, value: decision });
    if (takesArguments(decision.action)) {
      action = decision.action;
      const args = isObject(answer.value) ? answer.value.args : undefined;
      out.push({ ...answer, phase: "arguments", value: args, usage: { ...NULL_USAGE } });
    }
  }
  return out;
}
