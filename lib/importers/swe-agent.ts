// SWE-agent `.traj` files: trajectory[] of {action, observation, thought, response, state}, plus history[] (the
// messages the model saw) and info {exit_status, submission}. Older and function-calling files may carry only history.
import { z } from "zod";
import { UsageError } from "../errors.ts";
import type { Recording } from "../recording.ts";
import { formatZodError } from "../zod-error.ts";
import { isRecord, textOf } from "./source.ts";
import { type ImportedStep, reasonOf, recordingFromSteps } from "./step.ts";

export const SWE_AGENT_EXPECTED = "a SWE-agent trajectory (trajectory[] of action/observation, or history[])";

const SweStep = z.looseObject({
  action: z.string(),
  observation: z.string().nullish(),
  thought: z.string().nullish(),
  response: z.string().nullish(),
});

const SweMessage = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
  is_demo: z.boolean().nullish(),
  action: z.string().nullish(),
  thought: z.string().nullish(),
});
type SweMessage = z.infer<typeof SweMessage>;

const SweTrajectory = z
  .looseObject({
    trajectory: z.array(SweStep).optional(),
    history: z.array(SweMessage).optional(),
    info: z.looseObject({ exit_status: z.string().nullish(), submission: z.string().nullish() }).partial().optional(),
    replay_config: z.unknown().optional(),
  })
  .refine((t) => t.trajectory !== undefined || t.history !== undefined, { message: "needs trajectory[] or history[]" });
type SweTrajectory = z.infer<typeof SweTrajectory>;

const BASH = ["bash", "-c"];
const SUBMITTED = "submitted";
// What SWE-agent appends to every observation in the history: its state prompt, pure framing.
const STATE_PROMPT = /\n\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\)\nbash-\$$/;

type RawStep = { action: string; observation: string; thought: string | undefined };

export function importSweAgent(json: unknown, { name }: { name: string }): Recording {
  const parsed = SweTrajectory.safeParse(json);
  if (!parsed.success) throw new UsageError(`${name}: expected ${SWE_AGENT_EXPECTED}: ${formatZodError(parsed.error)}`);
  const traj = parsed.data;
  const history = (traj.history ?? []).filter((m) => !m.is_demo);
  const raw = traj.trajectory && traj.trajectory.length > 0
    ? traj.trajectory.map((s) => ({ action: s.action, observation: s.observation ?? "", thought: s.thought ?? undefined }))
    : stepsFromHistory(history);
  const steps = raw.map((s) => stepOf(s, traj.info));
  if (!steps.some((s) => s.kind === "finish")) {
    const status = traj.info?.exit_status;
    if (typeof status === "string" && status !== "") {
      steps.push({ kind: "finish", status: statusOf(status), summary: traj.info?.submission || status });
    }
  }
  const system = history.find((m) => m.role === "system");
  return recordingFromSteps(
    {
      format: "swe-agent",
      name,
      intent: intentOf(history, traj.replay_config),
      instructions: system ? textOf(system.content) : "",
      model: modelOf(traj.replay_config),
    },
    steps,
  );
}

function stepOf(s: RawStep, info: SweTrajectory["info"]): ImportedStep {
  const reason = reasonOf(s.thought);
  const command = s.action;
  if (command.trim() === "") {
    // The model produced no action; what the agent answered is kept as the refusal's reason.
    return { kind: "refusal", reason, argv: [...BASH, command], prefix: BASH, code: "format_error", message: s.observation };
  }
  if (command.trim().split(/\s+/)[0] === "submit") {
    const status = info?.exit_status;
    return {
      kind: "finish",
      reason,
      status: typeof status === "string" && status !== "" ? statusOf(status) : "success",
      summary: info?.submission ?? s.observation,
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
function statusOf(exitStatus: string): "success" | "failure" {
  return exitStatus === SUBMITTED ? "success" : "failure";
}

/** Each assistant message with an action, paired with the observation that follows it. */
function stepsFromHistory(history: SweMessage[]): RawStep[] {
  const steps: RawStep[] = [];
  history.forEach((m, i) => {
    if (m.role !== "assistant" || typeof m.action !== "string") return;
    const next = history[i + 1];
    const observation = next && next.role !== "assistant" && next.role !== "system" ? textOf(next.content) : "";
    steps.push({
      action: m.action,
      observation: observation.replace(STATE_PROMPT, ""),
      thought: m.thought ?? textOf(m.content),
    });
  });
  return steps;
}

function intentOf(history: SweMessage[], replayConfig: unknown): string {
  const user = history.find((m) => m.role === "user");
  if (user) return textOf(user.content);
  const statement = configOf(replayConfig)?.problem_statement;
  if (isRecord(statement) && typeof statement.text === "string") return statement.text;
  return "";
}

function modelOf(replayConfig: unknown): string {
  const agent = configOf(replayConfig)?.agent;
  const model = isRecord(agent) && isRecord(agent.model) ? agent.model.name : undefined;
  return typeof model === "string" && model !== "" ? model : "unknown";
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
