// A non-2xx HTTP answer -> ProviderError: which statuses are worth retrying, and one clear line for the user that
// never contains the API key (auth failures carry no server text at all: some servers echo part of the key).
import { ProviderError } from "../../errors.ts";
import { parseRetryAfterMs } from "./backoff.ts";
import { redactSecretRuns, redactSecrets } from "../../text/redact.ts";

const RETRYABLE: Record<number, string> = {
  408: "provider_server_error",
  429: "provider_rate_limited",
  500: "provider_server_error",
  502: "provider_server_error",
  503: "provider_overloaded",
  504: "provider_server_error",
  529: "provider_overloaded",
};
const BAD_REQUEST = new Set([400, 404, 413, 422]);
const MAX_DETAIL = 300;

/** The server's own error message from the usual body shapes ({error:{message}}, {error:"..."}, {message}, {detail}). */
export function errorDetail(bodyText: string): string | null {
  let detail: unknown = null;
  try {
    const body = JSON.parse(bodyText) as Record<string, unknown> | null;
    const error = body?.error;
    detail = (error !== null && typeof error === "object" ? (error as Record<string, unknown>).message : error) ??
      body?.message ?? body?.detail ?? null;
    if (detail !== null && typeof detail !== "string") detail = JSON.stringify(detail);
  } catch {
    // Not JSON: a short plain-text body is still worth showing; an HTML error page is not.
    detail = /^\s*</.test(bodyText) ? null : bodyText;
  }
  if (typeof detail !== "string") return null;
  const line = detail.replace(/\s+/g, " ").trim();
  if (line === "") return null;
  return line.length > MAX_DETAIL ? `${line.slice(0, MAX_DETAIL)}…` : line;
}

/**
 * llama.cpp's refusal of a prompt longer than its context, before any work: HTTP 400 with error.type
 * "exceed_context_size_error" and the two sizes (tools/server/server-common.cpp at de3ff81, read 2026-12-03).
 */
function contextOverflow(bodyText: string): { prompt: number | null; context: number | null } | null {
  let error: Record<string, unknown>;
  try {
    const body = JSON.parse(bodyText) as { error?: unknown } | null;
    if (body?.error === null || typeof body?.error !== "object") return null;
    error = body.error as Record<string, unknown>;
  } catch {
    return null;
  }
  if (error.type !== "exceed_context_size_error") return null;
  const count = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null);
  return { prompt: count(error.n_prompt_tokens), context: count(error.n_ctx) };
}

/**
 * A chat template's own refusal (llama.cpp runs the model's Jinja template; Gemma's raises "Conversation roles must
 * alternate user/assistant/user/assistant/..." on two user turns in a row): the server wraps it in a long parser
 * error (HTTP 400, seen 2026-12-03) whose reason comes last, past where the detail is clipped, so it is taken out.
 */
function templateRefusal(bodyText: string): string | null {
  const match = /Jinja Exception: ([^\n"\\]+)/.exec(bodyText);
  return match?.[1]?.trim().slice(0, MAX_DETAIL) || null;
}

export function classifyHttpError({
  status,
  headers,
  bodyText,
  provider,
  keyEnv,
  secret,
  secrets = [],
  now,
}: {
  status: number;
  headers: { get(name: string): string | null };
  bodyText: string;
  /** e.g. "Anthropic API" */
  provider: string;
  /** The environment variable the key came from; null when the server takes no key. */
  keyEnv: string | null;
  secret: string | null;
  /** Every other key Loom holds: redacted from the server's text too. */
  secrets?: readonly string[];
  now: number;
}): ProviderError {
  if (status === 401 || status === 403) {
    const message = keyEnv
      ? `${provider} rejected the API key from ${keyEnv} (HTTP ${status})`
      : `${provider} refused the request (HTTP ${status}); if it needs a key, set api_key_env for this model`;
    return new ProviderError(message, { code: "provider_auth", status });
  }
  const overflow = status === 400 ? contextOverflow(bodyText) : null;
  if (overflow) {
    const sizes = overflow.prompt !== null && overflow.context !== null
      ? `: the prompt is ${overflow.prompt} tokens, the server's context ${overflow.context}`
      : "";
    const message = `${provider} refused a request over its context (HTTP 400)${sizes}`;
    return new ProviderError(message, { code: "provider_context_exceeded", status });
  }
  // Redacted whole before errorDetail clips it (a key cut at the clip would survive but for its last characters), and
  // the clipped line once more for runs of a key (a prefix the server echoed).
  const keys = secret === null ? secrets : [secret, ...secrets];
  const redacted = redactSecrets(bodyText, keys);
  const refused = templateRefusal(redacted);
  const detail = refused ? `the model's chat template refused it: ${refused}` : errorDetail(redacted);
  const suffix = detail ? `: ${redactSecretRuns(detail, keys)}` : "";
  const retryCode = RETRYABLE[status] ?? (status >= 500 ? "provider_server_error" : undefined);
  if (retryCode) {
    const what = status === 429 ? "is rate limiting" : retryCode === "provider_overloaded" ? "is overloaded" : "failed";
    return new ProviderError(`${provider} ${what} (HTTP ${status})${suffix}`, {
      reportMessage: `${provider} ${what} (HTTP ${status})`,
      code: retryCode,
      status,
      retryable: status in RETRYABLE,
      retryAfterMs: parseRetryAfterMs(headers, { now }),
    });
  }
  if (isModelNotFound(status, bodyText)) {
    return new ProviderError(
      `${provider} does not serve this model (HTTP ${status})${suffix}; see loom models for the ids Loom knows, ` +
        "or describe the model in a models file (--models FILE)",
      {
        reportMessage: `${provider} does not serve this model (HTTP ${status})`,
        code: "model_not_found",
        status,
      },
    );
  }
  const code = BAD_REQUEST.has(status) ? "provider_bad_request" : "provider_error";
  return new ProviderError(`${provider} rejected the request (HTTP ${status})${suffix}`, {
    reportMessage: `${provider} rejected the request (HTTP ${status})`,
    code,
    status,
  });
}

/**
 * A model the API does not serve (retired, misspelt, or not on this account): OpenAI's error code "model_not_found"
 * at any status, or a 404 whose message names the model (Anthropic: not_found_error "model: …").
 */
function isModelNotFound(status: number, bodyText: string): boolean {
  if (/"code"\s*:\s*"model_not_found"/.test(bodyText)) return true;
  return status === 404 && /model/i.test(errorDetail(bodyText) ?? "");
}
