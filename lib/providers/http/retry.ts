// Bounded retries for retryable ProviderErrors (rate limits, overload, server errors, timeouts, network failures).
// sleep and random are injected so tests neither wait nor depend on chance.
import { InterruptedError, ProviderError } from "../../errors.ts";
import { backoffDelayMs } from "./backoff.ts";

const DEFAULT_MAX_ATTEMPTS = 4;
/** A server asking for a longer pause than this gets a failure now rather than a silently stalled run. */
const MAX_RETRY_AFTER_MS = 60_000;

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new InterruptedError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new InterruptedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

export type RetryOptions = {
  maxAttempts?: number;
  sleep?: Sleep;
  random?: () => number;
  signal?: AbortSignal;
  baseMs?: number;
  maxMs?: number;
  maxRetryAfterMs?: number;
  /** The call's deadline (on `now`'s clock): no retry waits past it. */
  deadlineAt?: number;
  now?: () => number;
};

// The report keeps the message without the server's text (which may quote the prompt), here as everywhere.
function giveUp(error: ProviderError, why: string): ProviderError {
  return new ProviderError(`${error.message} (${why})`, {
    reportMessage: `${error.reportMessage} (${why})`,
    code: error.code,
    retryable: error.retryable,
    status: error.status,
    retryAfterMs: error.retryAfterMs,
  });
}

export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  {
    maxAttempts = DEFAULT_MAX_ATTEMPTS,
    sleep: wait = sleep,
    random = Math.random,
    signal,
    baseMs,
    maxMs,
    maxRetryAfterMs = MAX_RETRY_AFTER_MS,
    deadlineAt = Infinity,
    now = Date.now,
  }: RetryOptions = {},
): Promise<T> {
  for (let n = 1;; n++) {
    if (signal?.aborted) throw new InterruptedError();
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof ProviderError) || !error.retryable) throw error;
      if (n >= maxAttempts) throw giveUp(error, `gave up after ${n} attempt${n === 1 ? "" : "s"}`);
      if (error.retryAfterMs !== null && error.retryAfterMs > maxRetryAfterMs) {
        throw giveUp(error, `the server asked to retry after ${Math.ceil(error.retryAfterMs / 1000)} s`);
      }
      const delay = error.retryAfterMs ?? backoffDelayMs(n, { random, baseMs, maxMs });
      // A retry that could not finish before the deadline is not made: the call fails now, not at the deadline.
      if (now() + delay >= deadlineAt) {
        throw giveUp(error, `gave up after ${n} attempt${n === 1 ? "" : "s"}: no time left before the call's deadline`);
      }
      await wait(delay, signal);
    }
  }
}
