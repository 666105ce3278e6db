// Every cache miss explained: per model call, what Loom expected the provider's prompt cache to hold (the longest
// prefix of this body shared with an earlier body of the run, ending where that body wrote an entry, within the
// entry's lifetime and the model's minimum), what the provider reported, the first section that differed from the
// previous request, and what a break cost; per run, the cache-read share of input tokens and the breaks by cause.
// Computed from the layouts of the bodies Loom sent (digests and sizes, lib/providers/cache-layout.ts): no prompt.
import { z } from "zod";
import { type CacheBlock, type CacheLayout, SECTION_NAMES, type Usage } from "./vocabulary/turn.ts";

type CacheSection = CacheBlock["section"];
import type { ModelPrice } from "./prices.ts";

const count = z.number().int().nonnegative();

export const CacheCause = z.enum([
  "first_call",
  "checkpoint",
  "working_state",
  "ttl_expiry",
  "below_minimum",
  "provider_ignored_breakpoint",
  "other",
]);
export type CacheCause = z.infer<typeof CacheCause>;

const CacheSectionName = z.enum(["tools", ...SECTION_NAMES]);

export const CallCache = z.strictObject({
  prompt_bytes: count.describe("UTF-8 bytes of the body's cached parts (tools or response format, system, messages)"),
  expected_bytes: count.describe(
    "Bytes Loom expected the provider to read from its cache: the longest prefix shared with an earlier request of " +
      "the run that wrote it there, still alive and at least the model's minimum",
  ),
  expected_tokens: count.nullable().describe(
    "expected_bytes in tokens, at this call's reported tokens per byte; null when the provider reported no counters",
  ),
  read: count.nullable().describe("Input tokens the provider reported read from its cache"),
  write: count.nullable().describe("Input tokens the provider reported written to its cache (null: it reports none)"),
  first_difference: CacheSectionName.nullable().describe(
    "The first section whose bytes differ from the previous request's (null for the first call of the run)",
  ),
  miss: z.strictObject({
    cause: CacheCause,
    tokens: count.describe("Input tokens paid at the write or uncached price that the cache could have served"),
    cost: z.number().nonnegative().nullable().describe(
      "USD those tokens cost above the cache-read price (null when the model has no known price)",
    ),
  }).nullable().describe("Why this call read less than the cache held before it; null when it did not"),
}).describe("The prompt cache on this call, as Loom expected it and as the provider reported it (since loom 0.6.0)");
export type CallCache = z.infer<typeof CallCache>;

const CauseTotals = z.strictObject({ count, tokens: count, cost: z.number().nonnegative().nullable() });

export const RunCache = z.strictObject({
  calls: count.describe("Calls whose cache was explained"),
  read_share: z.number().min(0).max(1).nullable().describe(
    "Share of input tokens read from the cache (cache_read / (input + cache_read + cache_write)); null when none " +
      "was reported",
  ),
  expected_read_share: z.number().min(0).max(1).nullable().describe(
    "The share Loom expected (expected_tokens over the same input tokens)",
  ),
  breaks: z.partialRecord(CacheCause, CauseTotals).describe("Calls that read less than the cache held, by cause"),
}).describe("The prompt cache over the run (since loom 0.6.0)");
export type RunCache = z.infer<typeof RunCache>;

/** OpenAI's automatic cache grows in steps of this many tokens (developers.openai.com/docs/guides/prompt-caching). */
export const OPENAI_STEP_TOKENS = 128;

/** Estimated bytes per token when a call reported no counters. */
const BYTES_PER_TOKEN = 4;
/** A read this far under the expectation (tokens, or share of it) is the provider not reading what it had. */
const IGNORED_SLACK_TOKENS = 128;
const IGNORED_SLACK_SHARE = 0.1;
const MIN_SLACK = 0.95;

const PREFIX_SECTIONS: ReadonlySet<CacheSection> = new Set(["tools", "instructions", "intent", "tasks", "checkpoint"]);

/** A prefix a body marked: when it was last written or read, and whether it was long enough to be cached. */
type Entry = { at: number; long: boolean };

/** The cache of one run as Loom expects it: entries by chain key (no text), and the previous body's layout. */
export class CacheLedger {
  readonly #entries = new Map<string, Entry>();
  readonly #price: ModelPrice | null;
  #previous: Previous | null = null;

  constructor({ price = null }: { price?: ModelPrice | null } = {}) {
    this.#price = price;
  }

  /** Explains one call: its body's layout, the counters the provider reported, and when it was sent (ms). */
  explain({ layout, usage, at }: { layout: CacheLayout; usage: Usage; at: number }): CallCache {
    // Each block's prefix: its key (the digests up to it) and where it ends (bytes).
    const prefixes: Prefix[] = [];
    let key = "";
    let end = 0;
    for (const block of layout.blocks) {
      key += `${block.digest},`;
      end += block.bytes;
      prefixes.push({ key, end, block });
    }
    const keys = prefixes.map((p) => p.key);
    const total = end;
    const reportedTokens = usage.input === null ? null : usage.input + (usage.cache_read ?? 0) +
      (usage.cache_write ?? 0);
    const tokensPerByte = reportedTokens !== null && total > 0 ? reportedTokens / total : 1 / BYTES_PER_TOKEN;
    // Token counts are the provider's, bytes Loom's: a prefix within a few percent of the minimum may go either way,
    // and counting it as long enough means Loom never blames a short prefix for what the provider did not read.
    const minBytes = (layout.min_tokens / tokensPerByte) * MIN_SLACK;

    // Where this body may read: at a breakpoint and the blocks before it within the lookback, or anywhere (automatic).
    const readable = (i: number) =>
      layout.mode === "automatic" ||
      layout.blocks.slice(i, i + layout.lookback + 1).some((b) => b.breakpoint);
    const longestAt = ({ ttl = true, min = true, strict = false }) => {
      for (const [i, prefix] of [...prefixes.entries()].reverse()) {
        if (!readable(i)) continue;
        const entry = this.#entries.get(prefix.key);
        if (!entry) continue;
        if (ttl && at - entry.at > layout.ttl_ms) continue;
        if (min && (!entry.long || prefix.end < (strict ? minBytes / MIN_SLACK : minBytes))) continue;
        return { prefix, entry };
      }
      return null;
    };
    const endAt = (found: { prefix: Prefix } | null) =>
      found === null
        ? 0
        : layout.mode === "automatic"
        ? automaticEnd(found.prefix.end, tokensPerByte, layout.min_tokens)
        : found.prefix.end;
    const longest = (options: { ttl?: boolean; min?: boolean; strict?: boolean }) => endAt(longestAt(options));
    const readAt = longestAt({});
    const expected = endAt(readAt);
    // Why the cache could hold more than this body can read, asked before this body's own writes land.
    const why = longest({ ttl: false }) > expected
      ? "ttl_expiry" as const
      : longest({ min: false }) > expected
      ? "below_minimum" as const
      : null;
    // What Loom expects when only prefixes surely past the minimum count (no slack for token counting).
    const strictTokens = reportedTokens === null ? null : Math.round(longest({ strict: true }) * tokensPerByte);
    // An entry lives from its last use: a read keeps it.
    if (readAt !== null) readAt.entry.at = at;
    const previous = this.#previous;
    const firstDiff = previous === null ? null : firstDifference(prefixes, previous.keys);
    const shared = previous === null ? 0 : sharedEnd(prefixes, previous.keys);

    // What this body writes (and refreshes): every marked prefix at or past the minimum, or every prefix (automatic).
    let writeEnd = 0;
    let markedEnd = 0;
    for (const { key, end, block } of prefixes) {
      if (layout.mode === "automatic" || block.breakpoint) {
        const long = end >= minBytes;
        this.#entries.set(key, { at, long });
        markedEnd = Math.max(markedEnd, end);
        if (long) writeEnd = Math.max(writeEnd, end);
      }
    }
    const read = usage.cache_read;
    const expectedTokens = reportedTokens === null ? null : Math.round(expected * tokensPerByte);

    const miss = this.#miss({
      previous,
      expected,
      expectedTokens,
      read,
      shared,
      writeEnd,
      firstDiff,
      tokensPerByte,
      why,
      strictTokens,
    });
    this.#previous = {
      keys,
      cachedEnd: Math.max(writeEnd, read !== null ? read / tokensPerByte : expected),
      markedEnd: Math.max(markedEnd, expected),
    };
    return {
      prompt_bytes: total,
      expected_bytes: Math.round(expected),
      expected_tokens: expectedTokens,
      read,
      write: usage.cache_write,
      first_difference: firstDiff,
      miss,
    };
  }

  #miss(
    { previous, expected, expectedTokens, strictTokens, read, shared, writeEnd, firstDiff, tokensPerByte, why }: {
      previous: Previous | null;
      expected: number;
      expectedTokens: number | null;
      read: number | null;
      shared: number;
      writeEnd: number;
      firstDiff: CacheSection | null;
      tokensPerByte: number;
      why: "ttl_expiry" | "below_minimum" | null;
      strictTokens: number | null;
    },
  ): CallCache["miss"] {
    const tokens = (bytes: number) => Math.max(0, Math.round(bytes * tokensPerByte));
    const priced = (cause: CacheCause, missed: number, paidAsWrite: boolean) =>
      missed <= 0 ? null : { cause, tokens: missed, cost: this.#cost(missed, paidAsWrite) };
    if (previous === null) return priced("first_call", tokens(writeEnd), true);
    // The provider read less than Loom expected it to hold.
    if (expectedTokens !== null && read !== null) {
      const slack = Math.max(IGNORED_SLACK_TOKENS, expectedTokens * IGNORED_SLACK_SHARE);
      if (read + slack < expectedTokens) {
        // A prefix within a few percent of the minimum that the provider counted short is not its fault.
        const nearMinimum = strictTokens !== null && read + slack >= strictTokens;
        return priced(nearMinimum ? "below_minimum" : "provider_ignored_breakpoint", expectedTokens - read, true);
      }
    }
    // The previous body cached past the point where this one differs: a checkpoint (the prefix changed) or the
    // step's own view and working state (written after the events, gone with the next event).
    const cachedPast = previous.cachedEnd > Math.max(shared, expected) && writeEnd > expected;
    const prefixChanged = firstDiff !== null && PREFIX_SECTIONS.has(firstDiff);
    // A changed prefix (a checkpoint's retirement) outweighs a short prefix before it: the previous body read those
    // few shared bytes only as part of the longer entry the change replaced, so the change cost them too.
    const shortBeforeChange = why === "below_minimum" && cachedPast && prefixChanged;
    // The cache held more of what this body shares with the previous one than it could read: expired or too short.
    const cause = shortBeforeChange ? null : why;
    const reusable = Math.min(cause === "below_minimum" ? previous.markedEnd : previous.cachedEnd, shared);
    if (cause !== null && reusable > expected) return priced(cause, tokens(reusable - expected), writeEnd > expected);
    if (cachedPast) {
      const lost = Math.min(previous.cachedEnd, writeEnd) - (shortBeforeChange ? expected : Math.max(shared, expected));
      const why: CacheCause = prefixChanged ? (firstDiff === "checkpoint" ? "checkpoint" : "other") : "working_state";
      return priced(why, tokens(lost), true);
    }
    return null;
  }

  /** USD for `tokens` paid at the write (or uncached) price instead of the read price. */
  #cost(tokens: number, paidAsWrite: boolean): number | null {
    const p = this.#price;
    if (p === null) return null;
    const paid = paidAsWrite ? p.cache_write_5m ?? p.input : p.input;
    return (tokens * Math.max(0, paid - p.cache_read)) / 1e6;
  }
}

/** The previous body: its chain keys, what it left cached, and the end of its last marked prefix (cached or not). */
type Previous = { keys: string[]; cachedEnd: number; markedEnd: number };
/** One block's prefix of the body: its key (the digests up to it) and where it ends (bytes). */
type Prefix = { key: string; end: number; block: CacheBlock };

/** Automatic caching reads whole 128-token steps from the minimum on (bytes, at this call's tokens per byte). */
function automaticEnd(bytes: number, tokensPerByte: number, minTokens: number): number {
  const tokens = bytes * tokensPerByte;
  if (tokens < minTokens) return 0;
  return (minTokens + Math.floor((tokens - minTokens) / OPENAI_STEP_TOKENS) * OPENAI_STEP_TOKENS) / tokensPerByte;
}

function firstDifference(prefixes: readonly Prefix[], before: readonly string[]): CacheSection | null {
  for (const [i, { key, block }] of prefixes.entries()) {
    if (key !== before[i]) return block.section;
  }
  return null;
}

function sharedEnd(prefixes: readonly Prefix[], before: readonly string[]): number {
  let shared = 0;
  for (const [i, { key, end }] of prefixes.entries()) {
    if (key !== before[i]) break;
    shared = end;
  }
  return shared;
}

/** The run's cache figures from its calls' explanations. */
export function summarizeCache(
  calls: readonly { usage: Usage; cache?: CallCache | null }[],
): RunCache | null {
  const explained = calls.filter((c): c is { usage: Usage; cache: CallCache } => c.cache != null);
  if (explained.length === 0) return null;
  let input = 0;
  let read = 0;
  let expected = 0;
  let reported = false;
  const breaks: RunCache["breaks"] = {};
  for (const { usage, cache } of explained) {
    if (usage.input !== null) {
      reported = true;
      input += usage.input + (usage.cache_read ?? 0) + (usage.cache_write ?? 0);
      read += usage.cache_read ?? 0;
      expected += cache.expected_tokens ?? 0;
    }
    if (cache.miss) {
      const into = breaks[cache.miss.cause] ??= { count: 0, tokens: 0, cost: 0 };
      into.count += 1;
      into.tokens += cache.miss.tokens;
      into.cost = into.cost === null || cache.miss.cost === null ? null : into.cost + cache.miss.cost;
    }
  }
  return {
    calls: explained.length,
    read_share: reported && input > 0 ? read / input : null,
    expected_read_share: reported && input > 0 ? Math.min(1, expected / input) : null,
    breaks,
  };
}
