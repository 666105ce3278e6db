// Importing other agents' recorded trajectories as Loom recorded workflows: format detection and dispatch.
import { UsageError } from "../../errors.ts";
import type { Recording } from "../recording.ts";
import { importMiniSweAgent, MINI_SWE_AGENT_EXPECTED } from "./mini-swe-agent.ts";
import { importOpenAiMessages, OPENAI_MESSAGES_EXPECTED } from "./openai-messages.ts";
import { describeJson, isRecord, parseJsonSource } from "./source.ts";
import { importSweAgent, SWE_AGENT_EXPECTED } from "./swe-agent.ts";
import { CLAUDE_CODE_EXPECTED, importClaudeCode, isClaudeCodeSession } from "./claude-code.ts";
import { CODEX_EXPECTED, importCodex, isCodexSession } from "./codex.ts";
import type { ImportedSession } from "./session-facts.ts";
import { type ImportFormat, SESSION_FORMATS, type SessionFormat } from "./import-format.ts";

export { IMPORT_FORMATS, ImportFormat, SESSION_FORMATS, type SessionFormat } from "./import-format.ts";

const EXPECTED: Record<ImportFormat, string> = {
  "mini-swe-agent": MINI_SWE_AGENT_EXPECTED,
  "swe-agent": SWE_AGENT_EXPECTED,
  "openai-messages": OPENAI_MESSAGES_EXPECTED,
  "claude-code": CLAUDE_CODE_EXPECTED,
  codex: CODEX_EXPECTED,
};

const JSON_IMPORTERS: Record<
  Exclude<ImportFormat, SessionFormat>,
  (json: unknown, options: { name: string }) => Recording
> = {
  "mini-swe-agent": importMiniSweAgent,
  "swe-agent": importSweAgent,
  "openai-messages": importOpenAiMessages,
};

const SESSION_IMPORTERS: Record<SessionFormat, (text: string, options: { name: string }) => ImportedSession> = {
  "claude-code": importClaudeCode,
  codex: importCodex,
};

function isSessionFormat(format: ImportFormat): format is SessionFormat {
  return (SESSION_FORMATS as readonly string[]).includes(format);
}

/** Imports an agent session file with what it says beyond the steps (model, compactions, recorded usage). */
export function importSession(
  text: string,
  { format, name }: { format: SessionFormat; name: string },
): ImportedSession {
  return SESSION_IMPORTERS[format](text, { name });
}

/** Which of the known formats a parsed file looks like, from its top-level shape; null when none. */
export function detectFormat(json: unknown): ImportFormat | null {
  if (Array.isArray(json) && json.length > 0 && isClaudeCodeSession(json)) return "claude-code";
  if (Array.isArray(json) && json.length > 0 && isCodexSession(json)) return "codex";
  if (Array.isArray(json)) return json.length > 0 && json.every(isChatItem) ? "openai-messages" : null;
  if (!isRecord(json)) return null;
  const messages = [json.messages, json.fncall_messages, json.input].find(Array.isArray);
  if (Array.isArray(json.trajectory) || (Array.isArray(json.attempts) && !messages)) return "swe-agent";
  if (Array.isArray(json.history) && !messages) {
    // SWE-agent marks its history entries; a chat log saved under "history" has plain messages.
    const swe = "info" in json || "replay_config" in json ||
      json.history.some((m) => isRecord(m) && ("agent" in m || "message_type" in m || "action" in m));
    return swe || !json.history.every(isChatItem) || json.history.length === 0 ? "swe-agent" : "openai-messages";
  }
  const chat = messages;
  if (!Array.isArray(chat)) return null;
  const marker = typeof json.trajectory_format === "string" && json.trajectory_format.startsWith("mini-swe-agent");
  const info = json.info;
  // Early mini-swe-agent files have no version marker, only the run's info block.
  const miniInfo = isRecord(info) && ("mini_version" in info || "exit_status" in info || "submission" in info);
  // Version 2 closes every run with a role "exit" message.
  const exit = chat.some((m) => isRecord(m) && m.role === "exit");
  if (chat === json.messages && exit) return "mini-swe-agent";
  if (chat === json.messages && (marker || miniInfo)) return "mini-swe-agent";
  return "openai-messages";
}

/** A chat message, a transcript line wrapping one, or an item of the Responses API. */
function isChatItem(item: unknown): boolean {
  return isRecord(item) &&
    ("role" in item || "message" in item || typeof item.type === "string" || item.object === "response");
}

/**
 * Imports one trajectory file's text as a recorded workflow. A file in another shape fails with one line naming the
 * format expected and what was found; malformed JSON with the file name and the parser's message. An openai-messages
 * log may also be JSON Lines, one message (or wrapped message, or item) per line.
 */
export function importTrajectory(text: string, { format, name }: { format: ImportFormat; name: string }): Recording {
  if (isSessionFormat(format)) return importSession(text, { format, name }).recording;
  const json = parseJsonSource(text, { name, lines: format === "openai-messages" });
  const found = detectFormat(json);
  // A Claude Code or Codex session is also a chat log (per-line messages, Responses items): --from openai-messages
  // reads it as one, without the session's own mapping.
  const chat = format === "openai-messages" && (found === "claude-code" || found === "codex");
  if (
    found !== format && !chat && !(format === "mini-swe-agent" && found === "openai-messages" && !hasToolTraffic(json))
  ) {
    const hint = found ? ` (it looks like ${found})` : "";
    throw new UsageError(`${name}: expected ${EXPECTED[format]}, found ${describeJson(json)}${hint}`);
  }
  return JSON_IMPORTERS[format](json, { name });
}

/** A plain messages[] log without tool calls may be a mini-swe-agent history saved without its info block. */
function hasToolTraffic(json: unknown): boolean {
  const messages = Array.isArray(json) ? json : isRecord(json) ? json.messages : undefined;
  if (!Array.isArray(messages)) return true;
  return messages.some((m) =>
    !isRecord(m) || typeof m.role !== "string" || m.role === "tool" || m.role === "function" ||
    (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || isRecord(m.function_call) ||
    (Array.isArray(m.content) &&
      m.content.some((b) => isRecord(b) && (b.type === "tool_use" || b.type === "tool_result")))
  );
}
