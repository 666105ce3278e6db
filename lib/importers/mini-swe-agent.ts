// mini-swe-agent trajectories (`trajectory_format: "mini-swe-agent-1"`): messages[] where each assistant message holds
// a THOUGHT and one ```bash block, and the next user message the command's output framed by <returncode>/<output>.
import { z } from "zod";
import { UsageError } from "../errors.ts";
import type { Recording } from "../recording.ts";
import { formatZodError } from "../zod-error.ts";
import { textOf } from "./source.ts";
import { type ImportedStep, reasonOf, recordingFromSteps } from "./step.ts";
import { convertUsage } from "./usage.ts";

export const MINI_SWE_AGENT_EXPECTED = "a mini-swe-agent trajectory (messages[] with role/content)";

const Content = z.union([z.string(), z.array(z.unknown()), z.null()]);

const MiniMessage = z.looseObject({
  role: z.string(),
  content: Content,
  extra: z.looseObject({ response: z.looseObject({ usage: z.unknown(), model: z.unknown() }).partial().optional() }).optional(),
});

const MiniTrajectory = z.looseObject({
  messages: z.array(MiniMessage).min(1),
  info: z
    .looseObject({
      exit_status: z.string().nullish(),
      submission: z.string().nullish(),
      config: z
        .looseObject({
          agent: z.looseObject({ action_regex: z.string().optional() }).partial().optional(),
          model: z.looseObject({ model_name: z.string().optional() }).partial().optional(),
          environment: z.looseObject({ timeout: z.number().optional() }).partial().optional(),
        })
        .partial()
        .optional(),
    })
    .partial()
    .optional(),
});
type MiniTrajectory = z.infer<typeof MiniTrajectory>;

/** mini-swe-agent's own default: exactly one ```bash block per answer, its body stripped. */
const DEFAULT_ACTION_REGEX = /```bash\s*\n(.*?)\n```/gs;
const SUBMIT_MARKERS = ["COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT"];
const SUBMITTED = "Submitted";
const BASH = ["bash", "-c"];

const OUTPUT = /^<returncode>(-?\d+)<\/returncode>\n<output>\n([\s\S]*)<\/output>$/;
// Long outputs: the agent's warning, then head and tail; kept as the model saw them.
const LONG_OUTPUT = /^<returncode>(-?\d+)<\/returncode>\n([\s\S]*)$/;
const TIMEOUT =
  /^The last command <command>[\s\S]*<\/command> timed out and has been killed\.\nThe output of the command was:\n <output>\n([\s\S]*)\n<\/output>\nPlease try another command and make sure to avoid those requiring interactive input\.$/;

export function importMiniSweAgent(json: unknown, { name }: { name: string }): Recording {
  const parsed = MiniTrajectory.safeParse(json);
  if (!parsed.success) throw new UsageError(`${name}: expected ${MINI_SWE_AGENT_EXPECTED}: ${formatZodError(parsed.error)}`);
  const { messages, info } = parsed.data;
  const first = messages.findIndex((m) => m.role === "user");
  if (first < 0) throw new UsageError(`${name}: expected ${MINI_SWE_AGENT_EXPECTED}: no user message (the task)`);
  const system = messages.slice(0, first).find((m) => m.role === "system");
  const actionRegex = compileActionRegex(info?.config?.agent?.action_regex);
  const steps: ImportedStep[] = [];
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  for (let i = first + 1; i < messages.length; i++) {
    if (messages[i].role !== "assistant") continue;
    const next = messages[i + 1]?.role === "user" ? textOf(messages[i + 1].content) : undefined;
    steps.push(stepOf(textOf(messages[i].content), next, {
      usage: convertUsage(messages[i].extra?.response?.usage),
      actionRegex,
      info,
      last: i === lastAssistant,
    }));
  }
  const ended = endOf(steps, info);
  if (ended) steps.push(ended);
  const timeout = info?.config?.environment?.timeout;
  return recordingFromSteps(
    {
      format: "mini-swe-agent",
      name,
      intent: textOf(messages[first].content),
      instructions: system ? textOf(system.content) : "",
      model: modelOf(parsed.data),
      ...(typeof timeout === "number" && timeout > 0 ? { command_timeout_ms: Math.round(timeout * 1000) } : {}),
    },
    steps,
  );
}

function stepOf(
  text: string,
  next: string | undefined,
  { usage, actionRegex, info, last }: {
    usage: ImportedStep["usage"];
    actionRegex: RegExp;
    info: MiniTrajectory["info"];
    last: boolean;
  },
): ImportedStep {
  const blocks = [...text.matchAll(actionRegex)];
  // The thought is the text around the bash blocks, the command their content: each byte appears once.
  const reason = reasonOf(textOutside(text, blocks));
  const command = blocks.map((b) => (b[1] ?? "").trim()).join("\n");
  if (blocks.length !== 1) {
    // Not exactly one action: the agent ran nothing and answered with its format error.
    return { kind: "refusal", reason, usage, argv: [...BASH, command], prefix: BASH, code: "format_error", message: next ?? "" };
  }
  const framed = next !== undefined && (next.startsWith("<returncode>") || TIMEOUT.test(next));
  const submitted = SUBMIT_MARKERS.some((marker) => command.includes(marker)) ||
    (last && info?.exit_status === SUBMITTED);
  if (submitted && !framed) {
    return {
      kind: "finish",
      reason,
      usage,
      status: info?.exit_status === undefined || info.exit_status === null || info.exit_status === SUBMITTED ? "success" : "failure",
      summary: info?.submission ?? next ?? "",
    };
  }
  return { kind: "command", reason, usage, argv: [...BASH, command], prefix: BASH, ...observationOf(next) };
}

function textOutside(text: string, blocks: RegExpExecArray[] | RegExpMatchArray[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const block of blocks) {
    parts.push(text.slice(at, block.index));
    at = (block.index ?? 0) + block[0].length;
  }
  parts.push(text.slice(at));
  return parts.map((part) => part.trim()).filter((part) => part !== "").join("\n\n");
}

function observationOf(next: string | undefined): { exit_code: number | null; timed_out: boolean; output: string } {
  if (next === undefined) return { exit_code: null, timed_out: false, output: "" };
  const short = OUTPUT.exec(next);
  if (short) return { exit_code: Number(short[1]), timed_out: false, output: short[2] };
  const long = LONG_OUTPUT.exec(next);
  if (long) return { exit_code: Number(long[1]), timed_out: false, output: long[2] };
  const timeout = TIMEOUT.exec(next);
  if (timeout) return { exit_code: null, timed_out: true, output: timeout[1] };
  return { exit_code: null, timed_out: false, output: next };
}

/** A run that stopped on a limit or an error, without submitting, still ends in a (failed) finish. */
function endOf(steps: ImportedStep[], info: MiniTrajectory["info"]): ImportedStep | undefined {
  const status = info?.exit_status;
  if (typeof status !== "string" || status === "" || steps.some((s) => s.kind === "finish")) return undefined;
  return {
    kind: "finish",
    status: status === SUBMITTED ? "success" : "failure",
    summary: info?.submission ? info.submission : status,
  };
}

function modelOf(trajectory: MiniTrajectory): string {
  const configured = trajectory.info?.config?.model?.model_name;
  if (typeof configured === "string" && configured !== "") return configured;
  for (const m of trajectory.messages) {
    const model = m.extra?.response?.model;
    if (typeof model === "string" && model !== "") return model;
  }
  return "unknown";
}

/** A configured action_regex is Python syntax; the common subset works in JavaScript, anything else falls back. */
function compileActionRegex(source: string | undefined): RegExp {
  if (source === undefined) return DEFAULT_ACTION_REGEX;
  try {
    return new RegExp(source, "gs");
  } catch {
    return DEFAULT_ACTION_REGEX;
  }
}
