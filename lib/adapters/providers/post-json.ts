// The one place that talks HTTP to a model API: POST a JSON body, bounded by a per-call timeout and the caller's
// AbortSignal, and turn every way it can fail into a typed error.
import { errorMessage, InterruptedError, ProviderError } from "../../errors.ts";
import { classifyHttpError } from "../../providers/classify-http-error.ts";
import { malformedResponse } from "../../providers/malformed-response.ts";

export const DEFAULT_TIMEOUT_MS = 120_000;

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export type PostJsonOptions = {
  /** e.g. "Anthropic API", used in error messages */
  provider: string;
  headers: Record<string, string>;
  body: unknown;
  keyEnv: string | null;
  secret: string | null;
  fetch?: Fetch;
  signal?: AbortSignal;
  timeoutMs?: number;
  now?: () => number;
};

export async function postJson(
  url: string,
  {
    provider,
    headers,
    body,
    keyEnv,
    secret,
    fetch = globalThis.fetch,
    signal,
    timeoutMs = DEFAULT_TIMEOUT_MS,
    now = Date.now,
  }: PostJsonOptions,
): Promise<unknown> {
  if (signal?.aborted) throw new InterruptedError();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let status: number;
  let responseHeaders: Headers;
  let text: string;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    status = response.status;
    responseHeaders = response.headers;
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw new InterruptedError();
    if (timedOut) {
      throw new ProviderError(`${provider} did not answer within ${timeoutMs / 1000} s`, {
        code: "provider_timeout",
        retryable: true,
      });
    }
    throw new ProviderError(`Could not reach ${provider} at ${new URL(url).origin}: ${errorMessage(error)}`, {
      code: "provider_unreachable",
      retryable: true,
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
  if (status < 200 || status > 299) {
    throw classifyHttpError({ status, headers: responseHeaders, bodyText: text, provider, keyEnv, secret, now: now() });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw malformedResponse(provider, `the body of HTTP ${status} is not JSON`);
  }
}

/** The effects a provider adapter takes, all injectable: tests pass a fake sleep, a fixed random, a short timeout. */
export type HttpOptions = {
  fetch?: Fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  timeoutMs?: number;
  maxAttempts?: number;
  now?: () => number;
};
