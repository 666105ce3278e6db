// Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): one JSON object per line, {timestamp, type,
// payload} with type session_meta (id, cwd, instructions, cli_version), turn_context (the model), response_item (an
// OpenAI Responses item: message, reasoning, function_call / function_call_output, custom_tool_call / its output,
// local_shell_call), event_msg (token_count with the call's usage, user_message, agent_message, …) and compacted.
// The first versions wrote a bare meta line ({id, timestamp, instructions}) and bare Responses items. Shell calls
// (shell, shell_command, exec_command, local_shell) become commands or test runs, apply_patch an edit per file; every
// other tool is an opaque command with its output.
import { UsageError } from "../../errors.ts";
import { tokenCount } from "../../providers/token-count.ts";
import { NULL_USAGE, type Usage } from "../../vocabulary/turn.ts";
import { contentText } from "./chat-reader.ts";
import type { ImportedSession } from "./session-facts.ts";
import { mostCommon, readSessionLines } from "./session-lines.ts";
import { describeJson, firstString, isRecord } from "./source.ts";
import { type ImportedStep, reasonOf, recordingFromSteps } from "./step.ts";
import { isTestCommand } from "./test-command.ts";
import { patchStep } from "./apply-patch.ts";

export const CODEX_EXPECTED =
  "a Codex CLI rollout (JSON lines {type: session_meta | response_item | event_msg, payload})";

const WRAPPED = new Set(["session_meta", "response_item", "event_msg", "turn_context", "compacted"]);
const ITEMS = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "web_search_call",
]);
const SHELL_TOOLS = new Set(["shell", "shell_command", "exec_command", "container.exec", "local_shell"]);

/** A rollout line: a wrapped entry of any type with a payload, a bare Responses item, or the first versions' meta. */
export function isCodexLine(value: unknown): boolean {
  if (!isRecord(value)) return false;
  if (typeof value.type === "string" && "payload" in value) return true;
  if (typeof value.type === "string" && ITEMS.has(value.type)) return true;
  return value.type === undefined && typeof value.id === "string" && typeof value.timestamp === "string";
}

/**
 * A parsed file is a Codex rollout when a line is an entry only Codex writes (session_meta, turn_context, event_msg,
 * compacted) or every line is a rollout line with a call among them (the first versions); a line that is not the
 * format is then refused by number.
 */
export function isCodexSession(values: readonly unknown[]): boolean {
  const own = values.some((v) =>
    isRecord(v) && typeof v.type === "string" && v.type !== "response_item" && WRAPPED.has(v.type) && "payload" in v
  );
  return own || (values.every(isCodexLine) && values.some((v) => isRecord(v) && v.type === "function_call"));
}

type Call = { id: string | undefined; name: string; args: Record<string, unknown>; raw: string; line: number };
type Turn = { text: string[]; calls: Call[]; usage: Usage | undefined; line: number };

export function importCodex(text: string, { name }: { name: string }): ImportedSession {
  const lines = readSessionLines(text, { name });
  const stranger = lines.find(({ value }) => !isCodexLine(value));
  if (stranger) {
    throw new UsageError(
      `${name}:${stranger.number}: expected ${CODEX_EXPECTED}, found ${describeJson(stranger.value)}`,
    );
  }
  let cwd: string | undefined;
  let instructions = "";
  const prompts: string[] = [];
  const turns: Turn[] = [];
  const outputs = new Map<string, string>();
  const compactions: number[] = [];
  const compactionCalls: number[] = [];
  const usages: Usage[] = [];
  const callModels: string[] = [];
  const callTurns: (Turn | undefined)[] = [];
  let open: Turn | undefined;
  let model: string | undefined;
  let total: string | undefined;
  for (const { number, value } of lines) {
    const type = value.type;
    const payload = isRecord(value.payload) ? value.payload : undefined;
    if (type === undefined) {
      instructions = typeof value.instructions === "string" ? value.instructions : instructions;
      continue;
    }
    if (type === "session_meta" && payload) {
      cwd = firstString(payload.cwd) ?? cwd;
      if (typeof payload.instructions === "string") instructions = payload.instructions;
      continue;
    }
    if (type === "turn_context" && payload) {
      cwd = firstString(payload.cwd) ?? cwd;
      model = firstString(payload.model) ?? model;
      continue;
    }
    if (type === "compacted") {
      compactions.push(number);
      compactionCalls.push(usages.length);
      open = undefined;
      continue;
    }
    if (type === "event_msg" && payload) {
      if (payload.type === "token_count" && isRecord(payload.info)) {
        // Codex repeats a token_count when nothing was called; only a moved total is a new call.
        const key = JSON.stringify(payload.info.total_token_usage ?? null);
        if (key === total) continue;
        total = key;
        const usage = codexUsage(payload.info.last_token_usage);
        usages.push(usage);
        callModels.push(model ?? "unknown");
        // The call that the usage answers is the last turn since the previous count (none: a call without a step).
        const turn = turns.at(-1);
        if (turn && turn.usage === undefined && !callTurns.includes(turn)) {
          turn.usage = usage;
          callTurns.push(turn);
        } else callTurns.push(undefined);
      }
      continue;
    }
    const item = type === "response_item" ? payload : value;
    if (!item) continue;
    if (item.type === "message") {
      const role = item.role;
      const text = contentText(item.content);
      if (role === "assistant") {
        if (!open) turns.push(open = { text: [], calls: [], usage: undefined, line: number });
        if (text.trim() !== "") open.text.push(text);
      } else if (role === "user") {
        open = undefined;
        if (!isContextMessage(text)) prompts.push(text);
      } else if (role === "developer" || role === "system") {
        if (!instructions && !isContextMessage(text)) instructions = text;
      }
      continue;
    }
    if (item.type === "function_call" || item.type === "custom_tool_call" || item.type === "local_shell_call") {
      if (!open) turns.push(open = { text: [], calls: [], usage: undefined, line: number });
      open.calls.push(callOf(item, number));
      continue;
    }
    if (typeof item.type === "string" && item.type.endsWith("_output")) {
      const id = firstString(item.call_id, item.id);
      if (id) outputs.set(id, outputText(item.output));
      open = undefined;
      continue;
    }
  }

  const task = prompts.find((p) => p.trim() !== "");
  if (task === undefined) throw new UsageError(`${name}: expected ${CODEX_EXPECTED}: no user prompt (the task)`);
  const steps: ImportedStep[] = [];
  const stepOfTurn = new Map<Turn, number>();
  const last = turns.length - 1;
  turns.forEach((turn, i) => {
    const reason = reasonOf(turn.text.join("\n"));
    const usage = turn.usage ?? NULL_USAGE;
    stepOfTurn.set(turn, steps.length + 1);
    if (turn.calls.length === 0) {
      steps.push(
        i === last
          ? { kind: "finish", usage, status: "success", summary: reason ?? "" }
          : { kind: "print", usage, text: reason ?? "" },
      );
      return;
    }
    turn.calls.forEach((call, j) => {
      const decision = j === 0 ? { usage, ...(reason ? { reason } : {}) } : {};
      steps.push({ ...decision, ...stepOf(call, outputs.get(call.id ?? "") ?? "", cwd) });
    });
  });
  const sessionModel = mostCommon(callModels.filter((m) => m !== "unknown")) ?? model ?? "unknown";
  const testCommand = turns.flatMap((t) => t.calls).map(shellCommand).find((c) => c !== undefined && isTestCommand(c));
  const recording = recordingFromSteps(
    {
      format: "codex",
      name,
      intent: task,
      instructions,
      model: sessionModel,
      ...(testCommand && steps.some((s) => s.kind === "test") ? { test_command: ["bash", "-c", testCommand] } : {}),
    },
    steps,
  );
  return {
    recording,
    facts: {
      format: "codex",
      model: sessionModel,
      subagent: false,
      compactions,
      compaction_calls: compactionCalls,
      usages,
      call_models: callModels,
      call_steps: callTurns.map((t) => (t ? stepOfTurn.get(t) ?? null : null)),
      skipped_sidechain_lines: 0,
      later_prompts: Math.max(0, prompts.filter((p) => p.trim() !== "").length - 1),
    },
  };
}

/**
 * Codex's counters: input_tokens includes the cached ones (OpenAI's convention), so input is what was not read from
 * the cache; output_tokens includes reasoning. A write counter, where a version reports one, is kept.
 */
export function codexUsage(raw: unknown): Usage {
  if (!isRecord(raw)) return NULL_USAGE;
  const input = tokenCount(raw.input_tokens);
  const read = tokenCount(raw.cached_input_tokens);
  const write = tokenCount(raw.cache_write_input_tokens);
  return {
    input: input === null ? null : Math.max(0, input - (read ?? 0) - (write ?? 0)),
    cache_read: read,
    cache_write: write,
    output: tokenCount(raw.output_tokens),
  };
}

function callOf(item: Record<string, unknown>, line: number): Call {
  const id = firstString(item.call_id, item.id);
  if (item.type === "local_shell_call") {
    const action = isRecord(item.action) ? item.action : {};
    return { id, name: "local_shell", args: { command: action.command }, raw: JSON.stringify(action), line };
  }
  const name = firstString(item.name) ?? "tool";
  const raw = item.type === "custom_tool_call"
    ? (typeof item.input === "string" ? item.input : JSON.stringify(item.input ?? null))
    : (typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments ?? {}));
  let args: Record<string, unknown> = {};
  if (item.type === "custom_tool_call") args = { input: raw };
  else {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (isRecord(parsed)) args = parsed;
    } catch {
      // arguments that are not JSON stay in raw: an opaque command keeps them verbatim
    }
  }
  return { id, name, args, raw, line };
}

/** The shell command line of a shell call: a string, or an argv (`bash -lc SCRIPT` is its script). */
function shellCommand(call: Call): string | undefined {
  if (!SHELL_TOOLS.has(call.name)) return undefined;
  const command = call.args.command ?? call.args.cmd;
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.every((p) => typeof p === "string")) {
    const argv = command as string[];
    if (argv.length === 3 && /(^|\/)(ba|z)?sh$/.test(argv[0] ?? "") && /^-l?c$/.test(argv[1] ?? "")) return argv[2];
    return argv.join(" ");
  }
  return undefined;
}

function stepOf(call: Call, output: string, cwd: string | undefined): ImportedStep {
  const exit = exitCodeOf(output);
  const command = shellCommand(call);
  if (command !== undefined) {
    const patch = /^\s*apply_patch\b/.test(command) ? patchStep(command, cwd) : undefined;
    if (patch) return patch;
    if (isTestCommand(command)) return { kind: "test", exit_code: exit, timed_out: false, output };
    return {
      kind: "command",
      argv: ["bash", "-c", command],
      prefix: ["bash", "-c"],
      exit_code: exit,
      timed_out: false,
      output,
    };
  }
  if (call.name === "apply_patch") {
    const patch = patchStep(typeof call.args.input === "string" ? call.args.input : call.raw, cwd);
    if (patch) return patch;
  }
  return {
    kind: "command",
    argv: [call.name, call.raw],
    prefix: [call.name],
    exit_code: exit,
    timed_out: false,
    output,
  };
}

/** A tool output as the model saw it (the first versions' JSON `{output, metadata}` included). */
function outputText(output: unknown): string {
  return typeof output === "string" ? output : contentText(output);
}

/** The exit code a shell output states: the first versions' metadata.exit_code, later ones' first lines. */
function exitCodeOf(output: string): number | null {
  const head = output.slice(0, 400);
  const match = /^(?:Exit code: |Process exited with code )(-?\d+)/m.exec(head) ??
    (/^\{\s*"output"\s*:/.test(output) ? /"exit_code":\s*(-?\d+)/.exec(output.slice(-300)) : null);
  return match ? Number(match[1]) : null;
}

/** Codex injects its environment and the AGENTS.md instructions as user messages: they are not the task. */
function isContextMessage(text: string): boolean {
  return /^\s*(<environment_context>|<user_instructions>|# AGENTS\.md instructions|<permissions instructions>)/
    .test(text);
}
