// One model call over HTTP, as every HTTP adapter makes it: POST a JSON body, retried on rate limits and server
// errors (retry.ts) within one deadline for the whole call, the answer converted inside each attempt, so a malformed
// answer fails that attempt like a bad status does.
import { DEFAULT_DEADLINE_MS, type HttpOptions, postJson, type PostJsonOptions } from "./post-json.ts";
import { withRetry } from "./retry.ts";

export function sendJson<T>(
  url: string,
  { convert, ...call }:
    & Pick<PostJsonOptions, "provider" | "headers" | "body" | "keyEnv" | "secret" | "signal">
    & { convert: (raw: unknown) => T },
  { fetch, sleep, random, timeoutMs, deadlineMs = DEFAULT_DEADLINE_MS, maxResponseBytes, maxAttempts, now = Date.now }:
    HttpOptions = {},
): Promise<T> {
  const deadlineAt = now() + deadlineMs;
  return withRetry(
    async () =>
      convert(await postJson(url, { ...call, fetch, timeoutMs, deadlineAt, deadlineMs, maxResponseBytes, now })),
    { maxAttempts, sleep, random, signal: call.signal, deadlineAt, now },
  );
}
