// One small error hierarchy. An error carries a code; how it ends a command (outcome, exit code) is decided by
// endingOf (lib/ending.ts), and errors become user text in the reporter (commands/reporter.ts).
import { safeMessage } from "./text/safe-text.ts";

export class LoomError extends Error {
  readonly code: string;
  /** The message without text Loom did not write (a model's answer, a server's error body): what reports keep. */
  readonly reportMessage: string;
  constructor(
    code: string,
    message: string,
    { reportMessage = message }: { reportMessage?: string } = {},
  ) {
    // Every message is printed or written somewhere: no password in a URL, no raw control character, ever.
    super(safeMessage(message));
    this.name = new.target.name;
    this.code = code;
    this.reportMessage = safeMessage(reportMessage);
  }
}

/** Bad command-line input or an unreadable input file (ends as usage: exit 2). */
export class UsageError extends LoomError {
  constructor(message: string, code = "usage") {
    super(code, message);
  }
}

/** An invalid catalog, unknown slice or model, missing credential, missing workspace (ends as startup_failed). */
export class StartupError extends LoomError {
  constructor(message: string, code = "startup_failed") {
    super(code, message);
  }
}

/** No route matched, or the classifier answered with an unknown slice (ends as routing_failed). */
export class RoutingError extends LoomError {
  constructor(message: string, code = "routing_failed", { reportMessage }: { reportMessage?: string } = {}) {
    super(code, message, { reportMessage });
  }
}

export class ProviderError extends LoomError {
  readonly retryable: boolean;
  readonly status: number | null;
  readonly retryAfterMs: number | null;
  constructor(
    message: string,
    { code = "provider_error", retryable = false, status = null, retryAfterMs = null, reportMessage }: {
      code?: string;
      retryable?: boolean;
      status?: number | null;
      retryAfterMs?: number | null;
      /** The message without the server's own text. */
      reportMessage?: string;
    } = {},
  ) {
    super(code, message, { reportMessage });
    this.retryable = retryable;
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

/** The context budget could not be honoured: mandatory content is over the ceiling. */
export class BudgetError extends LoomError {
  constructor(code: "context_ceiling_exceeded", message: string) {
    super(code, message);
  }
}

/** The run's money cap (--max-cost, limits.max_cost_usd) was reached: no further model call is made. */
export class CostLimitError extends LoomError {
  constructor(message: string) {
    super("cost_limit", message);
  }
}

/** A recording that cannot be read (a usage error) or that the run diverged from (the run fails). */
export class RecordingError extends UsageError {
  constructor(message: string, code = "recording_invalid") {
    super(message, code);
  }
}

export class InterruptedError extends LoomError {
  constructor(message = "Interrupted") {
    super("interrupted", message);
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const FS_REASONS: Record<string, string> = {
  ENOENT: "no such file or folder",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "it is a folder, not a file",
  ENOTDIR: "a parent is not a folder",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "the name is too long",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EMFILE: "too many open files",
};

/** A property of a thrown value (or anything), read without trusting its type; undefined when it has none. */
export function fieldOf(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? Reflect.get(value, key) : undefined;
}

/** A thrown value's `code` (an errno name such as ENOENT, or a library's code), when it is a non-empty string. */
export function errorCode(error: unknown): string | undefined {
  const code = fieldOf(error, "code");
  return typeof code === "string" && code !== "" ? code : undefined;
}

/** A filesystem failure in words (never a bare errno code): "no such file or folder". */
export function describeFsError(error: unknown): string {
  const code = errorCode(error);
  if (code !== undefined) return FS_REASONS[code] ?? `failed (${code})`;
  return errorMessage(error);
}
