// The prefix a provider's prompt cache is expected to serve, request after request, for replays of long sessions:
// the same rule as the run report's cache explanation (lib/cache-explanation.ts — the longest prefix an earlier
// request wrote, readable at a breakpoint or within the lookback before one, at least the model's minimum; automatic
// caches in 128-token steps) with every call inside the cache's lifetime. Prefixes are chained by interned ids, not
// by concatenated digests, so a request of n blocks costs O(n): a 1,000-message session's legacy requests (gigabytes)
// are estimated in seconds.
import { OPENAI_STEP_TOKENS } from "../cache-explanation.ts";
import { utf8Length } from "../text/digest.ts";

/** Bytes per token wherever the estimate has no provider counts (Loom's usual 4). */
const BYTES_PER_TOKEN = 4;
/** A prefix within 5 % of the minimum counts as long enough, as in the cache explanation. */
const MIN_SLACK = 0.95;

export type EstimateBlock = { text: string; breakpoint: boolean; bytes?: number };

export class CacheEstimate {
  readonly #mode: "breakpoints" | "automatic";
  readonly #minTokens: number;
  readonly #lookback: number;
  readonly #texts = new Map<string, { id: number; bytes: number }>();
  /** Chain ids by parent id, then by block text id. */
  readonly #chain = new Map<number, Map<number, number>>();
  #chains = 0;
  /** Prefixes written so far, by chain id: whether each was long enough to be cached. */
  readonly #entries = new Map<number, boolean>();

  constructor(
    { mode, minTokens, lookback }: { mode: "breakpoints" | "automatic"; minTokens: number; lookback: number },
  ) {
    this.#mode = mode;
    this.#minTokens = minTokens;
    this.#lookback = lookback;
  }

  /** One request's blocks, in the order the cache hashes them: its size and the bytes expected read from the cache. */
  read(blocks: readonly EstimateBlock[]): { prompt_bytes: number; expected_bytes: number } {
    const ids: number[] = [];
    const ends: number[] = [];
    let parent = 0;
    let end = 0;
    for (const block of blocks) {
      let text = this.#texts.get(block.text);
      if (!text) {
        text = { id: this.#texts.size + 1, bytes: block.bytes ?? utf8Length(block.text) };
        this.#texts.set(block.text, text);
      }
      let children = this.#chain.get(parent);
      if (!children) {
        children = new Map();
        this.#chain.set(parent, children);
      }
      let id = children.get(text.id);
      if (id === undefined) {
        id = ++this.#chains;
        children.set(text.id, id);
      }
      ids.push(id);
      end += text.bytes;
      ends.push(end);
      parent = id;
    }
    const minBytes = this.#minTokens * BYTES_PER_TOKEN * MIN_SLACK;
    // The nearest breakpoint at or after each block: a breakpoint reads up to `lookback` blocks before it.
    const nextBreakpoint: number[] = new Array(blocks.length);
    let next = Infinity;
    for (let i = blocks.length - 1; i >= 0; i--) {
      if (blocks[i]?.breakpoint) next = i;
      nextBreakpoint[i] = next;
    }
    let expected = 0;
    for (let i = blocks.length - 1; i >= 0; i--) {
      const readable = this.#mode === "automatic" || (nextBreakpoint[i] ?? Infinity) - i <= this.#lookback;
      if (!readable || this.#entries.get(ids[i] ?? 0) !== true || (ends[i] ?? 0) < minBytes) continue;
      expected = this.#mode === "automatic" ? automaticEnd(ends[i] ?? 0, this.#minTokens) : ends[i] ?? 0;
      break;
    }
    blocks.forEach((block, i) => {
      if (this.#mode === "automatic" || block.breakpoint) this.#entries.set(ids[i] ?? 0, (ends[i] ?? 0) >= minBytes);
    });
    return { prompt_bytes: end, expected_bytes: Math.round(expected) };
  }
}

/** Automatic caching reads whole 128-token steps from the minimum on. */
function automaticEnd(bytes: number, minTokens: number): number {
  const tokens = bytes / BYTES_PER_TOKEN;
  if (tokens < minTokens) return 0;
  return (minTokens + Math.floor((tokens - minTokens) / OPENAI_STEP_TOKENS) * OPENAI_STEP_TOKENS) * BYTES_PER_TOKEN;
}
