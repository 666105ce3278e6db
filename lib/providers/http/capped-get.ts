// Bodies Loom reads from servers it does not control, with a byte cap: a local model server's /props and /v1/models,
// and the URL `loom models update --from` names. A server may send gigabytes, redirect elsewhere or never finish:
// reading stops at the cap (at most the cap is held in memory), no redirect leaves the origin asked, and the whole
// exchange ends at a deadline or on the caller's signal (SIGINT, SIGTERM).
import { InterruptedError, StartupError, UsageError } from "../../errors.ts";
import { describeNetworkError } from "./describe-network-error.ts";

/** The body's bytes, or null once they pass `maxBytes` (reading stops there: the rest is never received). */
export async function readCapped(response: Response, { maxBytes }: { maxBytes: number }): Promise<Uint8Array | null> {
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return null;
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/** At most this many redirects within the origin (a loop of them ends here). */
const MAX_REDIRECTS = 5;

export type CappedGet = {
  /** The URL the body came from (the last redirect's target, within the origin). */
  url: string;
  status: number;
  bytes: Uint8Array;
};

/**
 * GET `url` with no credentials. A redirect is followed only to the same origin (scheme, host and port) and only after
 * `check` accepted its target: a hop to another host is refused before anything is sent there. A body over `maxBytes`,
 * a deadline of `timeoutMs` passed, a network failure: one line (a usage error for what the URL said, a startup error
 * for the network, exit 3). The caller's signal ends it as an interrupt.
 */
export async function getCapped(
  url: string,
  { fetch = globalThis.fetch, maxBytes, timeoutMs, signal, check = () => {} }: {
    fetch?: typeof globalThis.fetch;
    maxBytes: number;
    timeoutMs: number;
    signal?: AbortSignal;
    /** Throws when a URL (the first, or a redirect's target) may not be fetched. */
    check?: (url: string) => void;
  },
): Promise<CappedGet> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const origin = new URL(url).origin;
  let current = url;
  try {
    for (let hop = 0;; hop += 1) {
      if (new URL(current).origin !== origin) {
        throw new UsageError(`${url} redirects to ${current}, another origin: not followed (nothing was asked of it)`);
      }
      check(current);
      if (signal?.aborted) throw new InterruptedError();
      const response = await fetch(current, {
        method: "GET",
        credentials: "omit",
        headers: { accept: "application/json, text/plain" },
        redirect: "manual",
        signal: controller.signal,
      });
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel().catch(() => {});
        if (hop >= MAX_REDIRECTS) throw new UsageError(`${url}: more than ${MAX_REDIRECTS} redirects; not followed`);
        current = new URL(location, current).href;
        continue;
      }
      const bytes = await readCapped(response, { maxBytes });
      if (bytes === null) throw new UsageError(`${current} sent more than ${maxBytes} bytes; reading stopped there`);
      return { url: current, status: response.status, bytes };
    }
  } catch (error) {
    if (signal?.aborted) throw new InterruptedError();
    if (timedOut) throw new StartupError(`Cannot fetch ${url}: no whole answer within ${timeoutMs} ms`, "fetch_failed");
    if (error instanceof UsageError || error instanceof InterruptedError) throw error;
    throw new StartupError(`Cannot fetch ${url}: ${describeNetworkError(error)}`, "fetch_failed");
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}
