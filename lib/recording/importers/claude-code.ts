// Claude Code session files (~/.claude/projects/<project>/<session-id>.jsonl, subagents in
// <session-id>/subagents/agent-<id>.jsonl): one JSON object per line — user and assistant messages wrapping Anthropic
// Messages content (text, thinking, tool_use, tool_result), with `message.usage` and `message.model` on assistant
// lines, and lines that are not turns (progress, system, summary, file-history-snapshot, queue-operation, …). One
// answer with several content blocks is written as several lines repeating its message id; its tool results may come
// between them. Tools become Loom's actions where one exists (Read, Write, Edit, MultiEdit, LS, Glob, Grep, Bash and
// test runs); every other tool is an opaque command with its output.
import { UsageError } from "../../errors.ts";
import { convertAnthropicUsage } from "../../providers/anthropic/convert-anthropic-usage.ts";
import type { Usage } from "../../vocabulary/turn.ts";
import { contentText } from "./chat-reader.ts";
import type { ImportedSession } from "./session-facts.ts";
import { mostCommon, readSessionLines, relativePath } from "./session-lines.ts";
import { describeJson, firstString, isRecord } from "./source.ts";
import { type ImportedStep, reasonOf, recordingFromSteps } from "./step.ts";
import { isTestCommand } from "./test-command.ts";

export const CLAUDE_CODE_EXPECTED = "a Claude Code session (JSON lines of type user, assistant, system, summary, …)";

/**
 * A line is Claude Code's when it has a type and one of the fields every version writes beside it; a type this
 * importer does not know (a newer version's) is skipped like the other lines that are not turns.
 */
export function isClaudeCodeLine(value: unknown): boolean {
  if (!isRecord(value) || typeof value.type !== "string") return false;
  if (value.type === "summary") return typeof value.summary === "string" || "leafUuid" in value;
  if (value.type === "file-history-snapshot") return "snapshot" in value || "messageId" in value;
  return "sessionId" in value || "uuid" in value || "parentUuid" in value;
}

/**
 * A parsed file is a Claude Code session when one of its lines is a user or assistant turn as Claude Code writes it
 * (with its sessionId or uuid); a line that is not the format is then refused by number, not taken for another format.
 */
export function isClaudeCodeSession(values: readonly unknown[]): boolean {
  return values.some((v) =>
    isRecord(v) && (v.type === "user" || v.type === "assistant") && isRecord(v.message) && isClaudeCodeLine(v)
  );
}

type Call = { id: string | undefined; name: string; input: Record<string, unknown>; line: number };
type Answer = { id: string; line: number; text: string[]; calls: Call[]; usage: Usage; model: string | undefined };
type Result = { text: string; error: boolean };

export function importClaudeCode(text: string, { name }: { name: string }): ImportedSession {
  const lines = readSessionLines(text, { name });
  const stranger = lines.find(({ value }) => !isClaudeCodeLine(value));
  if (stranger) {
    throw new UsageError(
      `${name}:${stranger.number}: expected ${CLAUDE_CODE_EXPECTED} with a sessionId or uuid, found ` +
        describeJson(stranger.value),
    );
  }
  const turns = lines.filter(({ value }) => value.type === "user" || value.type === "assistant");
  // A subagent's own file marks every turn a side chain; in a main file, side-chain lines are another agent's.
  const subagent = turns.length > 0 && turns.every(({ value }) => value.isSidechain === true);
  const own = subagent ? turns : turns.filter(({ value }) => value.isSidechain !== true);
  const cwd = firstString(...lines.map(({ value }) => value.cwd));

  const answers: Answer[] = [];
  const byId = new Map<string, Answer>();
  const results = new Map<string, Result>();
  const prompts: { line: number; text: string }[] = [];
  own.forEach(({ number, value }) => {
    const message = value.message;
    if (!isRecord(message)) {
      throw new UsageError(`${name}:${number}: message: expected an object, found ${describeJson(message)}`);
    }
    if (value.type === "assistant") return void readAnswer(message, number, { answers, byId });
    if (value.isMeta === true || value.isCompactSummary === true) return;
    const content = message.content;
    if (typeof content === "string") return void prompts.push({ line: number, text: content });
    if (!Array.isArray(content)) return;
    const texts: string[] = [];
    for (const block of content) {
      if (!isRecord(block)) continue;
      if (block.type === "tool_result") {
        const id = firstString(block.tool_use_id);
        if (id) results.set(id, { text: contentText(block.content), error: block.is_error === true });
      } else if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
    }
    if (texts.length > 0) prompts.push({ line: number, text: texts.join("\n") });
  });

  const task = prompts.find((p) => p.text.trim() !== "" && !isCommandEcho(p.text));
  if (!task) throw new UsageError(`${name}: expected ${CLAUDE_CODE_EXPECTED}: no user prompt (the task)`);
  const steps: ImportedStep[] = [];
  const callSteps: (number | null)[] = [];
  const lastWithText = answers.findLastIndex((a) => a.calls.length > 0 || reasonOf(a.text.join("\n")) !== undefined);
  answers.forEach((answer, i) => {
    const reason = reasonOf(answer.text.join("\n"));
    if (answer.calls.length === 0) {
      if (reason === undefined && i !== lastWithText) {
        callSteps.push(null); // only thinking: no decision to keep, but the call was billed
        return;
      }
      callSteps.push(steps.length + 1);
      if (i === lastWithText) {
        steps.push({ kind: "finish", usage: answer.usage, status: "success", summary: reason ?? "" });
      } else steps.push({ kind: "print", usage: answer.usage, text: reason ?? "" });
      return;
    }
    callSteps.push(steps.length + 1);
    answer.calls.forEach((call, j) => {
      const decision = j === 0 ? { usage: answer.usage, ...(reason ? { reason } : {}) } : {};
      steps.push({ ...decision, ...stepOf(call, results.get(call.id ?? ""), cwd) });
    });
  });

  const models = answers.map((a) => a.model).filter((m): m is string => m !== undefined);
  const model = mostCommon(models) ?? "unknown";
  const testCommand = steps.some((s) => s.kind === "test")
    ? answers.flatMap((a) => a.calls).map(shellCommand).find((c) => c !== undefined && isTestCommand(c))
    : undefined;
  const recording = recordingFromSteps(
    {
      format: "claude-code",
      name,
      intent: task.text,
      instructions: "",
      model,
      ...(testCommand ? { test_command: ["bash", "-c", testCommand] } : {}),
    },
    steps,
  );
  const boundaries = lines.filter(({ value }) => value.type === "system" && value.subtype === "compact_boundary");
  // Versions before compact_boundary lines mark only the summary that continues a compacted session.
  const compactions = boundaries.length > 0
    ? boundaries.map(({ number }) => number)
    : own.filter(({ value }) => value.isCompactSummary === true).map(({ number }) => number);
  return {
    recording,
    facts: {
      format: "claude-code",
      model,
      subagent,
      compactions,
      compaction_calls: compactions.map((line) => answers.filter((a) => a.line < line).length),
      usages: answers.map((a) => a.usage),
      call_models: answers.map((a) => a.model ?? model),
      call_steps: callSteps,
      skipped_sidechain_lines: turns.length - own.length,
      later_prompts: prompts.filter((p) => p.line > task.line && !isCommandEcho(p.text) && p.text.trim() !== "")
        .length,
    },
  };
}

/** One assistant line: a new answer, or more blocks of one already seen (the same message id). */
function readAnswer(
  message: Record<string, unknown>,
  line: number,
  { answers, byId }: { answers: Answer[]; byId: Map<string, Answer> },
): void {
  const model = firstString(message.model);
  // "<synthetic>" marks a message Claude Code wrote itself (an interruption, an error): no model call, no bill.
  if (model === "<synthetic>") return;
  const id = firstString(message.id) ?? `line ${line}`;
  let answer = byId.get(id);
  const usage = convertAnthropicUsage(message.usage);
  if (!answer) {
    answer = { id, line, text: [], calls: [], usage, model };
    byId.set(id, answer);
    answers.push(answer);
  } else {
    answer.usage = largest(answer.usage, usage);
  }
  const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === "text" && typeof block.text === "string" && block.text.trim() !== "") {
      answer.text.push(block.text);
    } else if (block.type === "tool_use") {
      const name = firstString(block.name);
      if (!name) continue;
      answer.calls.push({ id: firstString(block.id), name, input: isRecord(block.input) ? block.input : {}, line });
    }
  }
}

/**
 * Each counter the largest of the lines of one message: Claude Code writes the answer's usage on every line of it, as
 * it stood when that block streamed, so the last-written counts are the largest.
 */
function largest(a: Usage, b: Usage): Usage {
  const max = (x: number | null, y: number | null) => (x === null ? y : y === null ? x : Math.max(x, y));
  const hour = Math.max(a.cache_write_1h ?? 0, b.cache_write_1h ?? 0);
  return {
    input: max(a.input, b.input),
    cache_read: max(a.cache_read, b.cache_read),
    cache_write: max(a.cache_write, b.cache_write),
    output: max(a.output, b.output),
    ...(hour > 0 ? { cache_write_1h: hour } : {}),
  };
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** One tool call as a Loom step: an action where Loom has one, else an opaque command named after the tool. */
function stepOf(call: Call, result: Result | undefined, cwd: string | undefined): ImportedStep {
  const output = result?.text ?? "";
  const input = call.input;
  const path = (value: unknown) => relativePath(str(value) ?? ".", cwd);
  switch (call.name) {
    case "Read":
      if (str(input.file_path)) return { kind: "read", path: path(input.file_path), output };
      break;
    case "LS":
    case "Glob":
      return { kind: "list", path: path(input.path), output };
    case "Grep":
      return { kind: "search", path: path(input.path), query: str(input.pattern) ?? "", output };
    case "Write":
      if (str(input.file_path) && typeof input.content === "string") {
        const p = path(input.file_path);
        return { kind: "edit", action: "write_file", args: { path: p, content: input.content }, paths: [p] };
      }
      break;
    case "Edit":
      if (str(input.file_path) && typeof input.old_string === "string" && typeof input.new_string === "string") {
        const p = path(input.file_path);
        const args = { path: p, old_text: input.old_string || "\n", new_text: input.new_string };
        return { kind: "edit", action: "edit_file", args, paths: [p] };
      }
      break;
    case "MultiEdit":
      if (str(input.file_path) && Array.isArray(input.edits)) {
        // Several replacements in one file, one Loom edit: the old texts and the new ones, in order.
        const edits = input.edits.filter(isRecord);
        const p = path(input.file_path);
        const old = edits.map((e) => str(e.old_string) ?? "").join("\n");
        const args = { path: p, old_text: old || "\n", new_text: edits.map((e) => str(e.new_string) ?? "").join("\n") };
        return { kind: "edit", action: "edit_file", args, paths: [p] };
      }
      break;
  }
  const command = shellCommand(call);
  if (command !== undefined) {
    // Claude Code records no exit code, only whether the tool reported an error.
    if (isTestCommand(command)) return { kind: "test", exit_code: null, timed_out: false, output };
    return {
      kind: "command",
      argv: ["bash", "-c", command],
      prefix: ["bash", "-c"],
      exit_code: null,
      timed_out: false,
      output,
    };
  }
  return {
    kind: "command",
    argv: [call.name, JSON.stringify(input)],
    prefix: [call.name],
    exit_code: null,
    timed_out: false,
    output,
  };
}

function shellCommand(call: Call): string | undefined {
  return call.name === "Bash" ? str(call.input.command) : undefined;
}

/** Slash commands and their local output are echoed into the log as user text; they are not the task. */
function isCommandEcho(text: string): boolean {
  return /^\s*<(command-name|command-message|local-command-stdout|local-command-caveat|system-reminder)>/.test(text);
}
