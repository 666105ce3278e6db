// The one place that talks HTTP to a model API: POST a JSON body within the call's limits — an idle timeout (nothing
// received for that long, connecting included), a deadline for the whole call (retries included, see retry.ts) and a
// cap on the response size — and the caller's AbortSignal, and turn every way it can fail into a typed error.
import { InterruptedError, ProviderError } from "../../errors.ts";
import { tooDeep } from "../../text/json-depth.ts";
import { classifyHttpError } from "./classify-http-error.ts";
import { describeNetworkError } from "./describe-network-error.ts";
import { malformedResponse } from "../malformed-response.ts";
import { heldKeys } from "../../io/held-keys.ts";

// The defaults live beside the provider settings, so `loom config` shows the values a run uses (lib/settings/).
import { DEFAULT_DEADLINE_MS, DEFAULT_IDLE_TIMEOUT_MS } from "../call-options.ts";
export { DEFAULT_DEADLINE_MS, DEFAULT_IDLE_TIMEOUT_MS };
/** A response body over this is refused without being read whole (answers are small JSON). */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Same-origin 307/308 redirects followed before a call is refused. */
const MAX_REDIRECTS = 5;

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
  /** Idle timeout: the attempt fails when nothing arrives for this long. */
  timeoutMs?: number;
  /** Absolute time (on `now`'s clock) by which the call must end; the attempt is cut there. */
  deadlineAt?: number;
  /** The deadline's length, for the message. */
  deadlineMs?: number;
  maxResponseBytes?: number;
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
    timeoutMs = DEFAULT_IDLE_TIMEOUT_MS,
    now = Date.now,
    deadlineAt = now() + DEFAULT_DEADLINE_MS,
    deadlineMs = DEFAULT_DEADLINE_MS,
    maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES,
  }: PostJsonOptions,
): Promise<unknown> {
  if (signal?.aborted) throw new InterruptedError();
  const controller = new AbortController();
  let cut: "idle" | "deadline" | null = null;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const progress = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      cut = "idle";
      controller.abort();
    }, timeoutMs);
  };
  const deadlineTimer = setTimeout(() => {
    cut = "deadline";
    controller.abort();
  }, Math.max(0, deadlineAt - now()));
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let status: number;
  let responseHeaders: Headers;
  let text: string;
  try {
    progress();
    // Redirects are followed by hand, and only within the origin: a 307 to another host would get the key and prompt.
    let target = url;
    let response: Response;
    for (let hop = 0;; hop++) {
      response = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...headers },
        body: JSON.stringify(body),
        signal: controller.signal,
        redirect: "manual",
      });
      const location = response.headers.get("location");
      if (response.status < 300 || response.status > 399 || location === null) break;
      await response.body?.cancel().catch(() => {});
      const next = new URL(location, target);
      if (next.origin !== new URL(url).origin || hop >= MAX_REDIRECTS) {
        throw new ProviderError(
          hop >= MAX_REDIRECTS
            ? `${provider} redirected more than ${MAX_REDIRECTS} times; refused`
            : `${provider} redirected to another origin (${next.origin}); Loom does not send the key and the prompt ` +
              "there. Set base_url to where the API really is",
          { code: "provider_redirect_refused", retryable: false },
        );
      }
      // 301/302/303 would turn the POST into a GET; only 307 and 308 keep it, and are followed.
      if (response.status !== 307 && response.status !== 308) break;
      target = next.href;
    }
    progress();
    status = response.status;
    responseHeaders = response.headers;
    text = await readCapped(response, { maxBytes: maxResponseBytes, provider, onProgress: progress });
  } catch (error) {
    if (signal?.aborted) throw new InterruptedError();
    if (error instanceof ProviderError) throw error;
    if (cut === "deadline") {
      throw new ProviderError(`${provider} did not answer within the call's ${seconds(deadlineMs)} s deadline`, {
        code: "provider_deadline",
        retryable: false,
      });
    }
    if (cut === "idle") {
      throw new ProviderError(`${provider} sent nothing for ${seconds(timeoutMs)} s`, {
        code: "provider_timeout",
        retryable: true,
      });
    }
    // A provider named by its base URL ("OpenAI-compatible server at http://…") is not named twice.
    const origin = new URL(url).origin;
    const where = provider.includes(origin) ? provider : `${provider} at ${origin}`;
    throw new ProviderError(`Could not reach ${where}: ${describeNetworkError(error)}`, {
      code: "provider_unreachable",
      retryable: true,
    });
  } finally {
    clearTimeout(idleTimer);
    clearTimeout(deadlineTimer);
    signal?.removeEventListener("abort", onAbort);
  }
  if (status < 200 || status > 299) {
    const secrets = heldKeys();
    throw classifyHttpError({
      status,
      headers: responseHeaders,
      bodyText: text,
      provider,
      keyEnv,
      secret,
      secrets,
      now: now(),
    });
  }
  const deep = tooDeep(text);
  if (deep) throw malformedResponse(provider, `the body of HTTP ${status} is ${deep}`);
  try {
    return JSON.parse(text);
  } catch {
    throw malformedResponse(provider, `the body of HTTP ${status} is not JSON`);
  }
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/** The body as text, refused (not retryable) as soon as it is known to exceed maxBytes: by its length, or while read. */
async function readCapped(
  response: Response,
  { maxBytes, provider, onProgress }: { maxBytes: number; provider: string; onProgress: () => void },
): Promise<string> {
  const tooLarge = (size: string) =>
    new ProviderError(
      `${provider} sent a response of ${size}, over the ${maxBytes}-byte cap; it was not read`,
      { code: "provider_response_too_large", retryable: false },
    );
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge(`${declared} bytes`);
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    onProgress();
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(`more than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}

/** The effects and limits a provider adapter takes, all injectable: tests pass a fake sleep, a short timeout. */
export type HttpOptions = {
  fetch?: Fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** Idle timeout per attempt (default DEFAULT_IDLE_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Deadline per call, every attempt and wait included (default DEFAULT_DEADLINE_MS). */
  deadlineMs?: number;
  /** Response size cap (default DEFAULT_MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number;
  maxAttempts?: number;
  now?: () => number;
};
