// A step's decision: what the model's answers decide for one step under the run's step protocol — two calls
// (selection, then the action's arguments) or one (the action with its arguments) — and what each phase asks.
import { ACTION_DESCRIPTIONS, ActionArguments, type ActionName, takesArguments } from "../vocabulary/actions.ts";
import {
  parseDecision,
  parseStepDecision,
  runResponseSchema,
  selectionDecision,
  STEP_TASK,
  stepResponseSchema,
  TASK_LINES,
  TASKS,
  withoutActionName,
} from "../vocabulary/answer.ts";
import type { StepProtocol } from "../policy.ts";
import type { Section } from "../vocabulary/turn.ts";
import type { ExecutionReport } from "../vocabulary/reports.ts";
import type { SliceRequest } from "../slice.ts";
import { runStage, type Stage, type StageRun } from "./stage.ts";
import { formatZodError } from "../text/zod-error.ts";
import { clipText, MESSAGE_LIMIT } from "../text/clip.ts";

const zodError = { formatError: (e: Parameters<typeof formatZodError>[0]) => formatZodError(e) };

/** What the model's answers decided for a step: suspend the run, act, or a refusal (no action runs). */
type Decided =
  | { kind: "suspend"; reason: string }
  | { kind: "act"; action: ActionName; args: Record<string, unknown>; reason?: string }
  | {
    kind: "refused";
    /** The chosen action, when the refusal came at its arguments; null when none was chosen. */
    action: ActionName | null;
    args: Record<string, unknown>;
    reason?: string;
    /** The step's report: the model's answers refused it. */
    refusal: ExecutionReport;
  };

type StageShape = {
  schema: Stage["schema"];
  /** The candidates section without the counters. */
  candidates: Omit<ReturnType<Stage["candidates"]>, "step" | "max_steps" | "lookups_used">;
  validate: Stage["validate"];
  expected: string;
};

type Counters = (lookupsUsed: number) => { step: number; max_steps: number; lookups_used: number };

/** A stage's candidates function: its own candidates, then the counters of this call. */
const withCounters = (candidates: StageShape["candidates"], counters: Counters) => (used: number) => ({
  ...candidates,
  ...counters(used),
});

export const refusedAt = (step: number, result: { code: string; reason: string }): ExecutionReport => ({
  kind: "refusal",
  step,
  code: result.code,
  reason: result.reason,
});

/** What deciding one step needs, under either protocol. */
type DecideInput = { step: number; selection: StageShape; state: Stage["state"]; counters: Counters };

/**
 * The single-call step: one stage whose answer is the action with its arguments. Its lookups count against the
 * selection stage (the ninth suspends); an answer whose action, or whose arguments, are invalid is re-asked once for
 * each, as the two stages of a two-call step would be.
 */
export async function decideInOneCall(
  run: StageRun,
  { step, selection, state, counters }: DecideInput,
): Promise<Decided> {
  const { candidates, ...rest } = selection;
  const answered = await runStage(run, {
    ...rest,
    phase: "selection",
    step,
    state,
    candidates: withCounters(candidates, counters),
  });
  if (answered.kind === "suspend") return answered;
  if (answered.kind === "refuse") {
    return { kind: "refused", action: null, args: {}, refusal: refusedAt(step, answered) };
  }
  const { action, reason: given, args } = answered.value as {
    action: ActionName;
    reason?: string;
    args: Record<string, unknown>;
  };
  const reason = typeof given === "string" && given !== "" ? given : undefined;
  return { kind: "act", action, args, reason };
}

/** The selection stage, then the arguments stage when the action takes arguments. */
export async function decide(
  run: StageRun,
  { step, selection, state, counters }: DecideInput,
): Promise<Decided> {
  const selected = await runStage(run, {
    ...selection,
    phase: "selection",
    step,
    state,
    candidates: withCounters(selection.candidates, counters),
  });
  const refused = (result: { code: string; reason: string }) => refusedAt(step, result);
  if (selected.kind === "suspend") return selected;
  if (selected.kind === "refuse") return { kind: "refused", action: null, args: {}, refusal: refused(selected) };
  const action = selected.value.action as ActionName;
  const given = selected.value.reason;
  const reason = typeof given === "string" && given !== "" ? given : undefined;
  if (!takesArguments(action)) return { kind: "act", action, args: {}, reason };
  const argued = await runStage(run, {
    phase: "arguments",
    step,
    state,
    // One response schema for both phases: one prompt-cache chain per run (each phase validates its own answer).
    schema: selection.schema,
    validate: (value) => parseDecision(ActionArguments[action], withoutActionName(value, action), zodError),
    candidates: withCounters({
      section: "candidates",
      task: TASK_LINES.arguments,
      action,
      ...(reason ? { reason: clipText(reason, MESSAGE_LIMIT) } : {}),
    }, counters),
    expected: `the arguments of ${action} as the response schema describes`,
  });
  if (argued.kind === "decision") return { kind: "act", action, args: argued.value, reason };
  const code = argued.kind === "refuse" ? argued.code : "lookup_limit";
  return { kind: "refused", action, args: {}, reason, refusal: refused({ code, reason: argued.reason }) };
}

/**
 * What each phase asks, the lookup syntax and the actions — with which commands run_command may run and what run_tests
 * runs, so the model need not find out by refusal. The same on every call: it goes in the stable prefix.
 */
export function tasksSection(
  request: SliceRequest,
  actions: ActionName[],
  protocol: StepProtocol,
): Extract<Section, { section: "tasks" }> {
  return {
    section: "tasks",
    ...(protocol === "single-call"
      ? { selection: STEP_TASK }
      : { selection: TASKS.selection, arguments: TASKS.arguments }),
    lookups: TASKS.lookups,
    actions: actions.map((name) => {
      const entry = { name, description: ACTION_DESCRIPTIONS[name] };
      if (name === "run_command") return { ...entry, allowed: request.commands ?? [] };
      if (name === "run_tests") return { ...entry, command: request.test.command };
      return entry;
    }),
  };
}

/** The one stage of a single-call step: the action and its arguments, validated as the arguments phase does. */
export function singleCallStage(actions: ActionName[]): StageShape {
  return {
    schema: stepResponseSchema(actions),
    validate: (value) => parseStepDecision(actions, value, zodError),
    candidates: { section: "candidates", task: TASK_LINES.step },
    expected: `{"action": one of ${JSON.stringify(actions)}, "reason": optional text, "args": that action's ` +
      `arguments as the response schema describes}`,
  };
}

/** The selection stage of every step; its candidates only name the phase (the tasks are in the prefix). */
export function selectionStage(actions: ActionName[]): StageShape {
  const decision = selectionDecision(actions);
  return {
    schema: runResponseSchema(actions),
    validate: (value) => parseDecision(decision, value, zodError),
    candidates: { section: "candidates", task: TASK_LINES.selection },
    expected: `{"action": one of ${JSON.stringify(actions)}, "reason": optional text}`,
  };
}
