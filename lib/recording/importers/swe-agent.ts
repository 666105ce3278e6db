// SWE-agent `.traj` files: trajectory[] of {action, observation, thought, response, state, execution_time, query},
// history[] (the messages the model saw; 1.x function calling adds tool_calls / tool_call_ids and role "tool") and
// info {exit_status, submission, model_stats}. Files with only history are read from it; a RetryAgent file reads its
// chosen attempt (or the last one of `attempts`).
import { UsageError } from "../../errors.ts";
import type { FinishStatus } from "../../vocabulary/reports.ts";
import type { Recording } from "../recording.ts";
import { describeJson, firstString, isRecord, textOf } from "./source.ts";
import { type ImportedStep, reasonOf, recordingFromSteps } from "./step.ts";

export const SWE_AGENT_EXPECTED = "a SWE-agent trajectory (trajectory[] of action/observation, or history[])";

const BASH = ["bash", "-c"];
const SUBMITTED = "submitted";
// What SWE-agent 0.x appends to every observation in the history: its state prompt, pure framing.
const STATE_PROMPT = /\n\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\)\nbash-\$$/;

type RawStep = { action: string; observation: string; thought: string | undefined };
type Info = { exit_status?: string; submission?: string };
type HistoryEntry = Record<string, unknown> & { role: string };

export function importSweAgent(json: unknown, { name }: { name: string }): Recording {
  const fail = (detail: string): never => {
    throw new UsageError(`${name}: expected ${SWE_AGENT_EXPECTED}: ${detail}`);
  };
  if (!isRecord(json)) return fail(`found ${describeJson(json)}`);
  const traj = attemptOf(json);
  const history = historyOf(traj.history, fail).filter((m) => m.is_demo !== true);
  const info = infoOf(traj.info);
  const trajectory = Array.isArray(traj.trajectory) ? traj.trajectory : undefined;
  if (!trajectory && !Array.isArray(traj.history)) fail("needs trajectory[] or history[]");
  const raw = trajectory && trajectory.length > 0
    ? trajectory.map((s, k) => rawStepOf(s, k, fail))
    : stepsFromHistory(history);
  const steps = raw.map((s, k) => stepOf(s, info, { last: k === raw.length - 1 }));
  if (!steps.some((s) => s.kind === "finish") && info.exit_status) {
    steps.push({ kind: "finish", status: statusOf(info.exit_status), summary: info.submission || info.exit_status });
  }
  const system = history.find((m) => m.role === "system");
  const replayConfig = configOf(traj.replay_config) ?? configOf(json.replay_config);
  return recordingFromSteps(
    {
      format: "swe-agent",
      name,
      intent: intentOf(history, replayConfig),
      instructions: system ? textOf(system.content) : "",
      model: modelOf(replayConfig),
    },
    steps,
  );
}

/** A RetryAgent file keeps every attempt; its top level repeats the chosen one, else the last attempt stands. */
function attemptOf(json: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(json.trajectory) || Array.isArray(json.history) || !Array.isArray(json.attempts)) return json;
  const attempts = json.attempts.filter(isRecord);
  const chosen = isRecord(json.info) && typeof json.info.best_attempt_idx === "number"
    ? attempts[json.info.best_attempt_idx]
    : undefined;
  return chosen ?? attempts.at(-1) ?? json;
}

function rawStepOf(s: unknown, k: number, fail: (detail: string) => never): RawStep {
  if (!isRecord(s)) return fail(`trajectory[${k}]: expected an object, found ${describeJson(s)}`);
  const action = s.action ?? "";
  if (typeof action !== "string") {
    return fail(`trajectory[${k}].action: expected a string, found ${describeJson(action)}`);
  }
  return {
    action,
    observation: stringOf(s.observation),
    thought: typeof s.thought === "string" ? s.thought : undefined,
  };
}

function historyOf(history: unknown, fail: (detail: string) => never): HistoryEntry[] {
  if (history === undefined || history === null) return [];
  if (!Array.isArray(history)) return fail(`history: expected an array, found ${describeJson(history)}`);
  return history.map((m, k) => {
    if (!isRecord(m) || typeof m.role !== "string") return fail(`history[${k}].role: expected a string`);
    return m as HistoryEntry;
  });
}

/**
 * Only the run's last step can end it: a `submit` there is the finish (earlier submits met a review and the run went
 * on), as is the step SWE-agent adds when an error or limit stopped the run (no action; its thought says why) and an
 * `exit`. Any other empty action was a format error the agent answered by asking again.
 */
function stepOf(s: RawStep, info: Info, { last }: { last: boolean }): ImportedStep {
  const reason = reasonOf(s.thought);
  const command = s.action;
  const verb = command.trim().split(/\s+/)[0];
  if (last && (verb === "submit" || verb === "exit" || (command.trim() === "" && info.exit_status))) {
    const status = info.exit_status;
    return {
      kind: "finish",
      reason,
      status: status ? statusOf(status) : verb === "submit" ? "success" : "failure",
      summary: info.submission ?? (s.observation || status || ""),
    };
  }
  if (command.trim() === "") {
    // The model produced no action; what the agent answered is kept as the refusal's reason.
    return {
      kind: "refusal",
      reason,
      argv: [...BASH, command],
      prefix: BASH,
      code: "format_error",
      message: s.observation,
    };
  }
  return {
    kind: "command",
    reason,
    argv: [...BASH, command],
    prefix: BASH,
    exit_code: null,
    timed_out: false,
    output: s.observation,
  };
}

/** "submitted" is a success; "exit_cost", "submitted (exit_context)" and the like mean a limit or error ended it. */
function statusOf(exitStatus: string): FinishStatus {
  return exitStatus === SUBMITTED ? "success" : "failure";
}

function infoOf(raw: unknown): Info {
  if (!isRecord(raw)) return {};
  const info: Info = {};
  if (typeof raw.exit_status === "string" && raw.exit_status !== "") info.exit_status = raw.exit_status;
  else if (typeof raw.exit_status === "number") info.exit_status = String(raw.exit_status);
  // 1.x types the submission as text or, from some agents, an object; null when nothing was submitted.
  if (typeof raw.submission === "string") info.submission = raw.submission;
  else if (isRecord(raw.submission)) info.submission = JSON.stringify(raw.submission);
  return info;
}

/** Each assistant message with an action, paired with the observation that follows it. */
function stepsFromHistory(history: HistoryEntry[]): RawStep[] {
  const steps: RawStep[] = [];
  history.forEach((m, i) => {
    if (m.role !== "assistant" || typeof m.action !== "string") return;
    const next = history[i + 1];
    const observation = next && next.role !== "assistant" && next.role !== "system" ? textOf(next.content) : "";
    steps.push({
      action: m.action,
      observation: observation.replace(STATE_PROMPT, ""),
      thought: typeof m.thought === "string" ? m.thought : textOf(m.content),
    });
  });
  return steps;
}

function intentOf(history: HistoryEntry[], replayConfig: Record<string, unknown> | undefined): string {
  const user = history.find((m) => m.role === "user");
  if (user) return textOf(user.content);
  const statement = replayConfig?.problem_statement;
  if (isRecord(statement) && typeof statement.text === "string") return statement.text;
  return "";
}

/** 1.x: agent.model.name (a RetryAgent: of its first agent config); 0.x: agent.model.model_name or model_name. */
function modelOf(replayConfig: Record<string, unknown> | undefined): string {
  const agent = isRecord(replayConfig?.agent) ? replayConfig.agent : undefined;
  const configs = agent && Array.isArray(agent.agent_configs) ? agent.agent_configs : [];
  const models = [agent?.model, ...configs.map((c) => (isRecord(c) ? c.model : undefined)), replayConfig?.model];
  for (const model of models) {
    if (typeof model === "string" && model !== "") return model;
    if (isRecord(model)) {
      const name = firstString(model.name, model.model_name);
      if (name) return name;
    }
  }
  return firstString(replayConfig?.model_name) ?? "unknown";
}

/** replay_config is stored as a JSON string in most files, as an object in some. */
function configOf(replayConfig: unknown): Record<string, unknown> | undefined {
  if (isRecord(replayConfig)) return replayConfig;
  if (typeof replayConfig !== "string") return undefined;
  try {
    const parsed: unknown = JSON.parse(replayConfig);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function stringOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  return textOf(value) || JSON.stringify(value);
}
