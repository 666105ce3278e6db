// `cache_ttl: auto`: the prompt cache's lifetime chosen from the run's own pace. A 5-minute entry written at 1.25x
// expires when the next call comes more than five minutes later (a slow test, a human in the loop), and the cached
// prefix is then written again; a 1-hour entry costs 2x to write but survives such gaps (prices:
// platform.claude.com/docs/en/build-with-claude/prompt-caching, read 2026-12-01). Per call, with P the tokens read
// from the cache and W the tokens written, 1 hour pays when the share f of gaps over five minutes (and under an hour)
// makes f·(1.25 − 0.10)·P, the prefix rewritten after a gap, more than (2 − 1.25)·W, the premium on every write.
import type { Usage } from "../../vocabulary/turn.ts";

const FIVE_MINUTES_MS = 5 * 60_000;
const ONE_HOUR_MS = 60 * 60_000;
/** Calls observed before the pace is trusted: until then, 5 minutes (the API's default). */
const MIN_OBSERVED = 3;
const REWRITE_SAVED = 1.25 - 0.1;
const WRITE_PREMIUM = 2 - 1.25;

export class CacheTtlChooser {
  #last: number | null = null;
  #gaps = 0;
  #slow = 0;
  #read = 0;
  #written = 0;

  /** A call was sent at `at` (ms) and reported `usage`. */
  observe({ at, usage }: { at: number; usage: Usage }): void {
    if (this.#last !== null) {
      const gap = at - this.#last;
      this.#gaps += 1;
      if (gap > FIVE_MINUTES_MS && gap <= ONE_HOUR_MS) this.#slow += 1;
    }
    this.#last = at;
    this.#read += usage.cache_read ?? 0;
    this.#written += usage.cache_write ?? 0;
  }

  /** The lifetime the next call's breakpoints should ask for. */
  ttl(): "5m" | "1h" {
    if (this.#gaps < MIN_OBSERVED) return "5m";
    const f = this.#slow / this.#gaps;
    return f * REWRITE_SAVED * this.#read > WRITE_PREMIUM * this.#written ? "1h" : "5m";
  }
}
