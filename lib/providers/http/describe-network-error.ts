// A failed connection in words that mean the same on every runtime: Bun appends hints for its own users ("Is the
// computer able to access the url?", "pass `verbose: true` in the second argument to …"), Deno nests the cause.
import { errorCode, fieldOf } from "../../errors.ts";

const CODES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ConnectionRefused: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ECONNRESET: "connection reset",
  ConnectionClosed: "the connection closed unexpectedly",
  EPIPE: "the connection closed unexpectedly",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS certificate not trusted",
  DEPTH_ZERO_SELF_SIGNED_CERT: "TLS certificate is self-signed",
  CERT_HAS_EXPIRED: "TLS certificate expired",
};

const RUNTIME_HINTS = [
  /\s*For more information, pass `verbose: true`[^.]*\.?/gi,
  /\s*Is the computer able to access the url\?/gi,
];

export function describeNetworkError(error: unknown): string {
  const code = errorCode(error) ?? errorCode(fieldOf(error, "cause"));
  if (code && CODES[code]) return CODES[code];
  const cause = fieldOf(error, "cause");
  const own = error instanceof Error ? error.message : String(error);
  const text = cause instanceof Error && /^fetch failed$/i.test(own) ? cause.message : own;
  let cleaned = text;
  for (const hint of RUNTIME_HINTS) cleaned = cleaned.replace(hint, "");
  cleaned = cleaned.replace(/^[A-Z_]+:\s*$/, "").replace(/:\s*$/, "").trim();
  return (cleaned || (code ?? "network error")) + (code && !cleaned.includes(code) ? ` (${code})` : "");
}
