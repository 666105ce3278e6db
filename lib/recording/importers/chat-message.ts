// The one shape every chat log is read into, shared by the log reader and the per-entry reader.
import type { ToolCall } from "./tool-call.ts";

export type ChatRole = "system" | "user" | "assistant" | "tool" | "exit";

export type ChatMessage = {
  role: ChatRole;
  /** The message text: string content, or its text parts joined by newlines. */
  text: string;
  /** Tool calls of an assistant message, in order. */
  calls: ToolCall[];
  /** For a tool result: the id of the call it answers, when the log records one. */
  callId?: string;
  /** For a tool result: the exit code, when the log records one beside the output. */
  exitCode?: number;
  refusal?: string;
  /** The provider's usage object for this message, as logged. */
  usage?: unknown;
  model?: string;
  /** The message's own id; a transcript that splits one answer over several lines repeats it. */
  id?: string;
  /** Agent metadata kept beside the message (mini-swe-agent's `extra`). */
  extra?: Record<string, unknown>;
  /** Where the message came from, for error messages: "messages[3]". */
  where: string;
};

/** Ends reading with a usage error naming where the log went wrong. */
export type Fail = (detail: string) => never;
