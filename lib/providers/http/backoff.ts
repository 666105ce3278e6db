// How long to wait before the next attempt: the server's retry-after when it sent one, otherwise exponential
// backoff with full jitter (a uniform draw below the exponential cap), so clients that failed together spread out.

const DEFAULT_BACKOFF = { baseMs: 500, maxMs: 8_000 } as const;

/** attempt: 1 after the first failure. random: a draw in [0, 1). */
export function backoffDelayMs(
  attempt: number,
  { random, baseMs = DEFAULT_BACKOFF.baseMs, maxMs = DEFAULT_BACKOFF.maxMs }: {
    random: () => number;
    baseMs?: number;
    maxMs?: number;
  },
): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * cap);
}

type HeaderSource = { get(name: string): string | null };

/** retry-after-ms (milliseconds), else retry-after (seconds, or an HTTP date); null when absent or unreadable. */
export function parseRetryAfterMs(headers: HeaderSource, { now }: { now: number }): number | null {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Math.ceil(Number(ms));
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds * 1000) : null;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
