// A non-2xx HTTP answer -> ProviderError: which statuses are worth retrying, and one clear line for the user that
// never contains the API key (auth failures carry no server text at all: some servers echo part of the key).
import { ProviderError } from "../errors.ts";
import { parseRetryAfterMs } from "./backoff.ts";
import { redactSecretRuns, redactSecrets } from "../text/redact.ts";

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
  // Redacted whole before errorDetail clips it (a key cut at the clip would survive but for its last characters), and
  // the clipped line once more for runs of a key (a prefix the server echoed).
  const keys = secret === null ? secrets : [secret, ...secrets];
  const detail = errorDetail(redactSecrets(bodyText, keys));
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
  const code = BAD_REQUEST.has(status) ? "provider_bad_request" : "provider_error";
  return new ProviderError(`${provider} rejected the request (HTTP ${status})${suffix}`, {
    reportMessage: `${provider} rejected the request (HTTP ${status})`,
    code,
    status,
  });
}
