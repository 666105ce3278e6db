// The shipped model table: every fact is the provider's published one, with where and when it was read; a figure only
// third parties give says so in the entry's notes. A user's models file (loom run --models FILE) or an updated table
// (loom models update) replaces or adds entries. Update an entry by reading its source again and changing its date;
// tests/contract.test.ts fails when an entry names a model the official SDK types no longer list, unless the entry
// marks it retired, and tests/models.test.ts when an entry in service has no source or date.
import { type ModelEntry, MODELS_FORMAT, type ModelTable } from "./models.ts";

// Anthropic: the model pages (context, output, prices per counter, thinking, default effort, lifecycle), the
// "What's new" pages (forced tool use rejected by the 5.5 models), the prompt-caching page (minimum cacheable prompt)
// and the model-deprecations page; effort values from @anthropic-ai/sdk 1.15.0 (OutputConfig.effort).
const CLAUDE = "https://platform.claude.com/docs/en/models";
const CLAUDE_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing";
const CACHING = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching";
const DEPRECATIONS = "https://platform.claude.com/docs/en/about-claude/model-deprecations";
const CLAUDE_ABOUT = "https://platform.claude.com/docs/en/about-claude/models";
const RELEASE_NOTES = "https://platform.claude.com/docs/en/release-notes/overview";
const EFFORT = ["low", "medium", "high", "xhigh", "max"];

/** Anthropic's cache prices are multiples of input: 5-minute writes 1.25x, 1-hour writes 2x (the pricing page). */
function claude(input: number, output: number, read: number) {
  return { input, output, cache_read: read, cache_write_5m: input * 1.25, cache_write_1h: input * 2 };
}
const claudeCache = (min_tokens: number) => ({
  min_tokens,
  ttls: ["5m" as const, "1h" as const],
  breakpoints: "explicit" as const,
});

// OpenAI: the model pages and pricing page; the prompt-caching guide (1,024-token minimum; GPT-5.6 and later bill
// writes at 1.25x input and report cache_write_tokens; explicit prompt_cache_breakpoint marks from GPT-5.6); reasoning
// efforts per family; Responses-only models from the SDK's ResponsesModel list (openai 7.59.0) and the Codex guide.
const OPENAI_MODELS = "https://developers.openai.com/api/docs/models";
const OPENAI_PRICING = "https://developers.openai.com/api/docs/pricing";
const OPENAI_CACHING = "https://developers.openai.com/api/docs/guides/prompt-caching";
const OPENAI_DEPRECATIONS = "https://developers.openai.com/api/docs/deprecations";
const READ = "2026-12-03";
/** Entries re-read against their pages for issue 43. */
const REREAD = "2026-12-06";

function gpt(input: number, cached: number, output: number, { writes = false }: { writes?: boolean } = {}) {
  return { input, output, cache_read: cached, ...(writes ? { cache_write: input * 1.25 } : {}) };
}
/** GPT-5.6 and GPT-6: a prompt over 272K input tokens bills the whole call at 2x input and 1.5x output (model pages). */
const LONG_272K = { above_tokens: 272_000, input: 2, output: 1.5 };
const AUTOMATIC = {
  min_tokens: 1_024,
  ttls: ["in_memory" as const, "24h" as const],
  breakpoints: "automatic" as const,
};
const GPT_5_6_CACHE = { min_tokens: 1_024, ttls: ["30m" as const], breakpoints: "explicit_or_automatic" as const };
/** GPT-6.1 Terra and GPT-6.2 Sol also keep a cache 12 hours, at a higher write price (their model pages). */
const GPT_6_CACHE_12H = { ...GPT_5_6_CACHE, ttls: ["30m" as const, "12h" as const] };
/**
 * Why a model with two write prices has one `cache_write`: Loom asks for no retention, so the default 30 minutes is
 * what it writes and is billed; the 12-hour price (which only a request for that retention pays) stays in the notes.
 */
const TWELVE_HOUR_WRITES = (price: string) =>
  `Cache writes: the 30-minute price is cache_write (Loom requests no retention, so the default 30 minutes is ` +
  `what it pays); 12-hour writes cost ${price} per million tokens, a price the table has no field for.`;
// The GPT-5.6 and GPT-6 model pages: "Reasoning.effort supports: none, low, medium (default), high, xhigh, and max".
const GPT_5_6_EFFORT = ["none", "low", "medium", "high", "xhigh", "max"];

// Rules that involve more than one setting (checked before the first call, lib/models/models.ts applyRules).
const BETWEEN_TOOLS_EFFORT = {
  when: { thinking: ["between_tools"], effort: ["xhigh", "max"] },
  action: "refuse" as const,
  reason: "between_tools runs at effort low, medium or high only; the API answers 400",
  source: `${CLAUDE}/sonnet-5-5/whats-new-sonnet-5-5`,
};
const FORCED_TOOL_THINKING = {
  when: { forced_tool: true, thinking: ["unset"] },
  action: "send_thinking_disabled" as const,
  reason: "a forced tool cannot be combined with thinking, and sources disagree on whether adaptive is the default",
  source: "https://platform.claude.com/docs/en/build-with-claude/extended-thinking",
};

// Claude Opus 5 takes thinking disabled only at effort high or lower; it answers through a forced tool, which needs
// thinking disabled (FORCED_TOOL_THINKING sends it in place of an unset one), so effort xhigh or max cannot be run.
const OPUS_5_DISABLED_EFFORT = {
  when: { thinking: ["disabled", "unset"], effort: ["xhigh", "max"] },
  action: "refuse" as const,
  reason: "thinking can be disabled only at effort high or lower, and the forced tool Loom answers through needs it " +
    "disabled; the API answers 400",
  source: `${CLAUDE_ABOUT}/whats-new-opus-5`,
};

/** An older Claude model Loom knows the price of but not how it takes each setting: nothing it could reject. */
function conservativeClaude(prices: ModelEntry["prices"], lifecycle: string): ModelEntry {
  return {
    api: "messages",
    structured_output: "prompt",
    context_window: 200_000,
    max_output: 32_000,
    cache: claudeCache(4_096),
    prices,
    effort: [],
    thinking: [],
    retired: null,
    source: `${CLAUDE_PRICING} ${CLAUDE}/overview`,
    date: READ,
    notes: `${lifecycle ? `${lifecycle} ` : ""}Call settings kept conservative (schema in the prompt, no effort or ` +
      "thinking sent, 4,096-token cache minimum, 200K / 32K assumed): not read from a model page.",
  };
}

/** A retired dated Claude id: requests fail, so a run stops before any call and names the replacement. */
function retiredClaude(
  aliases: string[],
  retired: { date: string; replacement: string },
  source: string,
  notes: string,
): ModelEntry {
  return {
    ...conservativeClaude(null, ""),
    aliases,
    retired,
    source,
    date: REREAD,
    notes: `${notes} Call settings and limits are Loom's conservative ones; no price is kept.`,
  };
}

const anthropic: Record<string, ModelEntry> = {
  "anthropic/claude-sonnet-5-5": {
    api: "messages",
    structured_output: "output_config_format",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: claudeCache(512),
    // Cache reads $0.20/MTok (0.1x input), the stored overview page's; writes $2.50 / $4.
    prices: claude(2, 10, 0.2),
    effort: EFFORT,
    thinking: ["adaptive", "between_tools"],
    retired: null,
    rules: [BETWEEN_TOOLS_EFFORT],
    source: `${CLAUDE}/sonnet-5-5/overview ${CLAUDE}/sonnet-5-5/whats-new-sonnet-5-5 ${CLAUDE_PRICING} ${CACHING}`,
    date: REREAD,
    notes: "The cache read is not settled by a stored official page: the stored copies of the overview page " +
      "(read 2026-12-06) show $0.20 and predate the cut of 2026-10-07 that third parties read on the pricing page " +
      "($0.10: kurofune/claudit v1.9.2, TheKrush/PromptFuel v1.0.23, phuryn/claude-usage v1.5.7). The table keeps " +
      "the conservative value, the official page's $0.20: the higher price never lets --max-cost stop a run late " +
      "(an update or eval --prices may lower it with --allow-lower-prices once an official page shows the cut). " +
      "between_tools at effort low, medium or high only: What's new (read 2026-12-06).",
  },
  "anthropic/claude-haiku-5-5": {
    api: "messages",
    structured_output: "output_config_format",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: claudeCache(4_096),
    // Up to 100,000 prompt tokens: $0.10 / $0.50, 5m writes $0.125, reads $0.01; over it every rate is 5x.
    prices: { ...claude(0.1, 0.5, 0.01), long_prompt: { above_tokens: 100_000, input: 5, output: 5 } },
    effort: EFFORT,
    thinking: ["adaptive"],
    retired: null,
    source: `${CLAUDE}/haiku-5-5/overview ${CLAUDE_PRICING}`,
    date: READ,
    notes: "Released 2026-10-07. The $0.01 cache read is from third parties (TheKrush/PromptFuel v1.0.23, " +
      "kurofune/claudit v1.9.2); the minimum cacheable prompt is not on a page read, Haiku 4.5's 4,096 is kept.",
  },
  "anthropic/claude-opus-5-5": {
    api: "messages",
    structured_output: "output_config_format",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: claudeCache(512),
    // Cache reads at 0.05x input.
    prices: claude(4, 20, 0.2),
    effort: EFFORT,
    thinking: ["adaptive"],
    retired: null,
    source: `${CLAUDE}/opus-5-5/overview ${CLAUDE_PRICING} ${CACHING}`,
    date: READ,
  },
  "anthropic/claude-fable-5-2": {
    api: "messages",
    structured_output: "output_config_format",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: claudeCache(512),
    // $8 / $40, cache reads $0.20 (0.025x input); writes at the usual 1.25x / 2x ($10 / $16).
    prices: claude(8, 40, 0.2),
    effort: EFFORT,
    thinking: ["adaptive"],
    retired: null,
    source: `${CLAUDE}/fable-5-2/whats-new-fable-5-2 ${CLAUDE_PRICING}`,
    date: READ,
    notes: "Released 2026-11-09. Prices from third parties reading the pricing page (phuryn/claude-usage v1.5.7, " +
      "archid21/rightsize v0.10.2, docs.laozhang.ai); the 512-token cache minimum is carried over from Fable 5.1.",
  },
  "anthropic/claude-fable-5-1": {
    api: "messages",
    structured_output: "output_config_format",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: claudeCache(512),
    // Cache reads at 0.025x input.
    prices: claude(10, 50, 0.25),
    effort: EFFORT,
    thinking: ["adaptive"],
    retired: null,
    source: `${CLAUDE}/fable-5-1/overview ${CLAUDE_PRICING} ${CACHING}`,
    date: READ,
  },
  "anthropic/claude-sonnet-5": {
    api: "messages",
    structured_output: "forced_tool",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: claudeCache(1_024),
    prices: claude(2, 10, 0.2),
    effort: EFFORT,
    thinking: ["adaptive", "disabled"],
    retired: null,
    rules: [FORCED_TOOL_THINKING],
    source: `${CLAUDE}/sonnet-5/overview ${CLAUDE}/sonnet-5-5/whats-new-sonnet-5-5`,
    date: REREAD,
    notes: "Thinking disabled at effort xhigh or max: no rule, since no page read says the API refuses it (as the " +
      "Opus 5 page does for Opus 5). Read on 2026-12-06: the overview (thinking adaptive or disabled, effort low to " +
      "max, default high; its three changes from Sonnet 4.6 are adaptive by default, manual thinking and sampling " +
      "settings answering 400), What's new in Sonnet 5.5 (whose between_tools limit is Sonnet 5.5's own), the " +
      "thinking-troubleshooting page (its per-model table was not in the stored excerpt) and the effort page (an " +
      "older copy, Opus 4.6's). A third party (docs.apiyi.com, 2026-11-09) names Opus 5 and Haiku 5.5, not " +
      "Sonnet 5, as disabling thinking only at high or lower.",
  },
  "anthropic/claude-opus-5": {
    api: "messages",
    structured_output: "forced_tool",
    context_window: 1_000_000,
    max_output: 128_000,
    // "The minimum cacheable prompt length on Claude Opus 5 is 512 tokens, down from 1,024 on Claude Opus 4.8."
    cache: claudeCache(512),
    prices: claude(5, 25, 0.5),
    effort: EFFORT,
    thinking: ["adaptive", "disabled"],
    retired: null,
    rules: [OPUS_5_DISABLED_EFFORT, FORCED_TOOL_THINKING],
    source: `${CLAUDE_ABOUT}/whats-new-opus-5 ${CLAUDE}/opus-5/migration-guide ${CLAUDE_PRICING}`,
    date: REREAD,
    notes: "Legacy (released 2026-07-24, retirement not sooner than 2027-07-24). The 512-token cache minimum and " +
      "thinking disabled only at effort high or lower are the What's new page's; answer mode is carried over from " +
      "Claude Sonnet 5, its generation, not read from a page.",
  },
  // Older models still served. Their prices are the pricing page's; how they take a structured answer, thinking and
  // effort, their limits and their cache minimum were not read, so Loom sends them nothing they could reject: the
  // schema in the prompt, no effort or thinking setting, a 4,096-token cache minimum and 200K / 32K limits.
  "anthropic/claude-fable-5": conservativeClaude(claude(10, 50, 1), "Legacy since Fable 5.1 (2026-09-01)."),
  "anthropic/claude-opus-4-8": conservativeClaude(claude(5, 25, 0.5), ""),
  "anthropic/claude-opus-4-7": conservativeClaude(claude(5, 25, 0.5), ""),
  "anthropic/claude-opus-4-6": conservativeClaude(claude(5, 25, 0.5), ""),
  "anthropic/claude-sonnet-4-6": {
    ...conservativeClaude(claude(3, 15, 0.3), ""),
    notes: "Prices ($3 / $15) from a third party (docs.venice.ai); the pricing page excerpt read did not reach the " +
      "Sonnet rows. Call settings kept conservative (schema in the prompt, no effort or thinking sent, 4,096-token " +
      "cache minimum, 200K / 32K assumed).",
  },
  "anthropic/claude-haiku-4-5": {
    api: "messages",
    structured_output: "forced_tool",
    context_window: 200_000,
    max_output: 64_000,
    cache: claudeCache(4_096),
    prices: claude(1, 5, 0.1),
    effort: [],
    thinking: ["enabled", "disabled"],
    aliases: ["claude-haiku-4-5-20251001"],
    retired: null,
    source: `${CLAUDE}/haiku-4-5/overview ${CACHING}`,
    date: "2026-12-01",
  },
  "anthropic/claude-opus-4-5": {
    api: "messages",
    structured_output: "forced_tool",
    context_window: 200_000,
    max_output: 64_000,
    cache: claudeCache(4_096),
    prices: claude(5, 25, 0.5),
    effort: ["low", "medium", "high"],
    thinking: ["enabled", "disabled"],
    aliases: ["claude-opus-4-5-20251101"],
    // Deprecated: end of life January 22, 2027 (@anthropic-ai/sdk 1.13.0 changelog).
    retired: { date: "2027-01-22", replacement: "claude-opus-5-5" },
    source: `${CLAUDE}/opus-4-5/overview ${CACHING} ${DEPRECATIONS}`,
    date: "2026-12-01",
  },
  // Retired: requests answer 404. Kept so that a run names the replacement and old reports keep their cost.
  "anthropic/claude-sonnet-4-5": {
    api: "messages",
    structured_output: "forced_tool",
    context_window: 200_000,
    max_output: 64_000,
    cache: claudeCache(1_024),
    prices: claude(3, 15, 0.3),
    effort: [],
    thinking: ["enabled", "disabled"],
    aliases: ["claude-sonnet-4-5-20250929"],
    // Its overview page: "deprecated … and retires on November 30, 2026. Recommended replacement: Claude Sonnet 5.5"
    // (2026-09-29 is its release date, 2025's, and was wrongly taken for the retirement); @anthropic-ai/sdk 1.15.0
    // (2026-11-30): "remove retired Claude Sonnet 4.5 models".
    retired: { date: "2026-11-30", replacement: "claude-sonnet-5-5" },
    source: `${CLAUDE}/sonnet-4-5/overview ${DEPRECATIONS} ` +
      "https://github.com/anthropics/anthropic-sdk-typescript/blob/main/CHANGELOG.md",
    date: REREAD,
  },
  "anthropic/claude-opus-4-1": {
    api: "messages",
    structured_output: "forced_tool",
    context_window: 200_000,
    max_output: 32_000,
    cache: claudeCache(1_024),
    prices: claude(15, 75, 1.5),
    effort: [],
    thinking: ["enabled", "disabled"],
    aliases: ["claude-opus-4-1-20250805"],
    retired: { date: "2026-08-05", replacement: "claude-opus-5-5" },
    source: DEPRECATIONS,
    date: "2026-12-01",
  },
  // Retired dated ids: listed so that a run names the replacement instead of running them like a current model.
  "anthropic/claude-sonnet-4-20250514": retiredClaude(
    ["claude-sonnet-4-0"],
    { date: "2026-06-15", replacement: "claude-sonnet-4-6" },
    `${RELEASE_NOTES} ${DEPRECATIONS}`,
    "Claude Sonnet 4: retired 2026-06-15 with Claude Opus 4, upgrade to Sonnet 4.6 (the release notes, as " +
      "ottto-ai/ai-provider-watch recorded them on 2026-06-17).",
  ),
  "anthropic/claude-opus-4-20250514": retiredClaude(
    ["claude-opus-4-0"],
    { date: "2026-06-15", replacement: "claude-opus-4-8" },
    `${RELEASE_NOTES} ${DEPRECATIONS}`,
    "Claude Opus 4: retired 2026-06-15 with Claude Sonnet 4, upgrade to Opus 4.8 (the release notes, as " +
      "ottto-ai/ai-provider-watch recorded them on 2026-06-17).",
  ),
  // The deprecations page's model status table (read 2026-12-06) and the release notes of 2025-10-28: every other
  // retired dated Claude id, and Claude 2. Where the page's replacement is itself retired, the
  // replacement named is the one that model's own retirement names (claude-sonnet-4-5 → claude-sonnet-5-5, …).
  "anthropic/claude-3-7-sonnet-20250219": retiredClaude(
    ["claude-3-7-sonnet-latest"],
    { date: "2026-02-19", replacement: "claude-sonnet-5-5" },
    `${DEPRECATIONS} ${RELEASE_NOTES}`,
    "Claude Sonnet 3.7: deprecated 2025-10-28 (the release notes of that day), retired 2026-02-19 (the status " +
      "table). The page's replacement, Claude Sonnet 4.5, retired 2026-11-30 naming claude-sonnet-5-5.",
  ),
  "anthropic/claude-3-5-sonnet-20241022": retiredClaude(
    ["claude-3-5-sonnet-latest"],
    { date: "2025-10-28", replacement: "claude-sonnet-5-5" },
    `${DEPRECATIONS} ${RELEASE_NOTES}`,
    'Claude Sonnet 3.5 (both snapshots): "We\'ve retired the Claude Sonnet 3.5 models" (the release notes, ' +
      "2025-10-28). The page's replacement chain ends at claude-sonnet-5-5.",
  ),
  "anthropic/claude-3-5-sonnet-20240620": retiredClaude(
    [],
    { date: "2025-10-28", replacement: "claude-sonnet-5-5" },
    `${DEPRECATIONS} ${RELEASE_NOTES}`,
    "Claude Sonnet 3.5 (June 2024): retired with the October snapshot on 2025-10-28 (the release notes).",
  ),
  "anthropic/claude-3-opus-20240229": retiredClaude(
    ["claude-3-opus-latest"],
    { date: "2026-01-05", replacement: "claude-opus-5-5" },
    DEPRECATIONS,
    "Claude Opus 3: deprecated 2025-06-30, retired 2026-01-05 (the status table). The page's replacement, Claude " +
      "Opus 4.1, retired 2026-08-05; the table names claude-opus-5-5 for both.",
  ),
  "anthropic/claude-3-sonnet-20240229": retiredClaude(
    [],
    { date: "2025-07-21", replacement: "claude-sonnet-5-5" },
    DEPRECATIONS,
    "Claude Sonnet 3: deprecated 2025-01-21, retired 2025-07-21 (the status table).",
  ),
  "anthropic/claude-2.1": retiredClaude(
    [],
    { date: "2025-07-21", replacement: "claude-sonnet-5-5" },
    DEPRECATIONS,
    "Claude 2.1: deprecated 2025-01-21, retired 2025-07-21 (the status table).",
  ),
  "anthropic/claude-2.0": retiredClaude(
    [],
    { date: "2025-07-21", replacement: "claude-sonnet-5-5" },
    DEPRECATIONS,
    "Claude 2.0: deprecated 2025-01-21, retired 2025-07-21 (the status table).",
  ),
  "anthropic/claude-3-5-haiku-20241022": retiredClaude(
    ["claude-3-5-haiku-latest"],
    { date: "2026-02-19", replacement: "claude-haiku-4-5" },
    `${DEPRECATIONS} ${CLAUDE}/haiku-4-5/migration-guide`,
    "Claude Haiku 3.5: retired 2026-02-19, replacement Claude Haiku 4.5 (its migration guide names the move; the " +
      "date as coder/coder#22304 and the embabel agent docs give it).",
  ),
};

const gpt6 = (
  { input, cached, output, effort = GPT_5_6_EFFORT }: {
    input: number;
    cached: number;
    output: number;
    effort?: string[];
  },
) => ({
  api: "responses" as const,
  structured_output: "json_schema" as const,
  context_window: 1_050_000,
  max_output: 128_000,
  cache: GPT_5_6_CACHE,
  prices: { ...gpt(input, cached, output, { writes: true }), long_prompt: LONG_272K },
  effort,
  thinking: [],
  retired: null,
});

/**
 * A model of the GPT-5 generation the deprecations page shuts down: the GPT-5 entry's way of calling (Chat
 * Completions, a JSON-schema answer, automatic caching, 400,000 / 128,000), no price unless its page was read.
 */
function gpt5Family({ aliases, replacement }: { aliases: string[]; replacement: string }): ModelEntry {
  return {
    api: "chat-completions",
    structured_output: "json_schema",
    context_window: 400_000,
    max_output: 128_000,
    cache: AUTOMATIC,
    prices: null,
    effort: ["minimal", "low", "medium", "high"],
    thinking: [],
    aliases,
    retired: { date: "2026-12-11", replacement },
    source: OPENAI_DEPRECATIONS,
    date: REREAD,
  };
}

/**
 * A model the deprecations page shut down: requests fail, so a run stops before any call and names the replacement.
 * How it was called is not kept (Loom's conservative defaults), nor a price.
 */
function shutDown(
  aliases: string[],
  retired: { date: string; replacement: string },
  notes: string,
): ModelEntry {
  return {
    api: "chat-completions",
    structured_output: "prompt",
    context_window: 128_000,
    max_output: 8_192,
    cache: AUTOMATIC,
    prices: null,
    effort: [],
    thinking: [],
    aliases,
    retired,
    source: OPENAI_DEPRECATIONS,
    date: REREAD,
    notes: `${notes} Call settings are Loom's conservative ones; no price is kept.`,
  };
}
/** The legacy snapshots the deprecations page shut down on 2026-10-23 (its section of 2026-04-22). */
const OCTOBER_23 = (aliases: string[], replacement: string) =>
  shutDown(
    aliases,
    { date: "2026-10-23", replacement },
    "Shut down 2026-10-23 (the deprecations page's legacy " +
      "snapshots of 2026-04-22, as dev.to/importstatic quoted it on 2026-10-15 and samarthputhraya/Modelpin's " +
      "registry transcribed it on 2026-10-04); the replacement is the page's.",
  );

// GPT-6 and GPT-5.6: the Responses API (the GPT-6 Luna page: Chat Completions takes function calling only at effort
// none), 1,050,000-token context, 128,000 output, writes billed at 1.25x input, 2x / 1.5x over 272K prompt tokens.
const openai: Record<string, ModelEntry> = {
  // Released 2026-11-17. Its model page: "The API rejects requests that set reasoning effort to none" (so the table
  // lists low to max, and Loom refuses none before the first call); 1,050,000 context, 922,000 max input, 128,000
  // output; $2 / $0.10 cached / $2.50 cache writes / $10; "The cache write price is for 30 minutes of retention. A
  // 12-hour cache write costs $5".
  "openai/gpt-6.2-sol": {
    ...gpt6({ input: 2, cached: 0.1, output: 10, effort: ["low", "medium", "high", "xhigh", "max"] }),
    cache: GPT_6_CACHE_12H,
    source: `${OPENAI_MODELS}/gpt-6.2-sol ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: REREAD,
    notes: TWELVE_HOUR_WRITES("$5") + " 922,000 max input tokens: the table has no field for it; the context window " +
      "is the page's 1,050,000.",
  },
  "openai/gpt-6.2-astra": {
    ...gpt6({ input: 8, cached: 0.4, output: 40, effort: ["low", "medium", "high", "xhigh", "max"] }),
    source: `${OPENAI_MODELS}/gpt-6.2-astra ${OPENAI_MODELS} ${OPENAI_PRICING}`,
    date: REREAD,
    notes: "Released 2026-11-17; the flagship. Its model page is not among the stored pages: $8 / $40, 922,000 " +
      "max input, 128,000 output and effort none rejected are third parties' reading of it (dev.to/hassann, checked " +
      '2026-11-18; docs.laozhang.ai; vercel.com/ai-gateway); the $0.40 cached input ("60% cheaper" than GPT-6 ' +
      "Astra's $1) is BerriAI/litellm discussion #52347's; writes at the family's 1.25x ($10), not read.",
  },
  "openai/gpt-6-astra": {
    ...gpt6({ input: 10, cached: 1, output: 50, effort: ["low", "medium", "high", "xhigh", "max"] }),
    source: `${OPENAI_MODELS} ${OPENAI_MODELS}/gpt-6-astra ${OPENAI_PRICING}`,
    date: REREAD,
    notes: "Superseded by GPT-6.2 Astra. $10 / $50, the low-to-max efforts, 1.05M context and 128K output are the " +
      "models page's (an older stored copy, where it is the flagship); the $1 cached input and $12.50 writes are " +
      "third parties' citing its model page (BerriAI/litellm discussion #39633, prefect12/codex-token-meter 0.2.22).",
  },
  "openai/gpt-6.1-sol": {
    ...gpt6({ input: 2, cached: 0.1, output: 10, effort: ["low", "medium", "high", "xhigh", "max"] }),
    source: `${OPENAI_MODELS}/gpt-6.1-sol ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: READ,
    notes: "Released 2026-09-29. Prices ($2 / $0.10 cached / $10, $2.50 writes) and the effort list (no none or " +
      "minimal) from third parties citing the model page (amine123max/Codex-Manager 0.4.7, docs.litellm.ai, " +
      "dev.to/hassann); the model page itself was not in the stored pages.",
  },
  "openai/gpt-6.1-terra": {
    ...gpt6({ input: 1, cached: 0.05, output: 5 }),
    cache: GPT_6_CACHE_12H,
    source: `${OPENAI_MODELS}/gpt-6.1-terra ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: REREAD,
    notes: TWELVE_HOUR_WRITES("$2.50") + " Both write prices are third parties' reading of the model page " +
      "(apidog.com/blog/gpt-6-1-terra-pricing, TheKrush/PromptFuel v1.0.24); the page is not among the stored pages.",
  },
  "openai/gpt-6-sol": {
    ...gpt6({ input: 2, cached: 0.2, output: 10 }),
    source: `${OPENAI_MODELS}/gpt-6-sol ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: READ,
    notes: "Superseded by GPT-6.1 Sol. Prices from third parties (inference.sh, dev.to/hassann comparing the two " +
      "model pages); the model page itself was not in the stored pages.",
  },
  "openai/gpt-6-luna": {
    ...gpt6({ input: 0.1, cached: 0.01, output: 0.5 }),
    source: `${OPENAI_MODELS}/gpt-6-luna ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: READ,
  },
  "openai/gpt-5.6-sol": {
    // Its model page: $4 / $0.40 cached / $20, writes at 1.25x input ($5); "promotional prices … are available at
    // least until November 21, 2026".
    ...gpt6({ input: 4, cached: 0.4, output: 20 }),
    // The family's alias names Sol.
    aliases: ["gpt-5.6"],
    source: `${OPENAI_MODELS}/gpt-5.6-sol ${OPENAI_MODELS} ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: REREAD,
    notes: 'Promotional prices since 2026-08-21, guaranteed "at least until November 21, 2026". Read on ' +
      "2026-12-06, the model page (and the models page) still show them and announce no end, so the promotion has " +
      "not ended as far as the page says and the table prices what it shows; the list price before it was $5 / " +
      "$0.50 / $30, to which a models file may raise it (loom schema models).",
  },
  "openai/gpt-5.6-terra": {
    ...gpt6({ input: 2, cached: 0.2, output: 12 }),
    source: `${OPENAI_MODELS}/gpt-5.6-terra ${OPENAI_MODELS}/gpt-5.6-luna ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: READ,
    notes: "Input $2.00 from the Luna page's comparison table; $0.20 cached and $12 output since the cut of " +
      "2026-07-30 from third parties (docs.laozhang.ai, vercel.com/ai-gateway).",
  },
  "openai/gpt-5.6-luna": {
    ...gpt6({ input: 0.2, cached: 0.02, output: 1.2 }),
    source: `${OPENAI_MODELS}/gpt-5.6-luna ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: READ,
  },
  // The replacement gpt-5-codex's shutdown names. Automatic caching only (explicit marks are GPT-5.6 and later).
  "openai/gpt-5.4": {
    api: "responses",
    structured_output: "json_schema",
    context_window: 1_050_000,
    max_output: 128_000,
    cache: AUTOMATIC,
    prices: { ...gpt(2.5, 0.25, 15), long_prompt: LONG_272K },
    effort: ["none", "low", "medium", "high", "xhigh"],
    thinking: [],
    retired: null,
    source: `${OPENAI_MODELS}/gpt-5.4 ${OPENAI_PRICING} https://developers.openai.com/api/docs/guides/reasoning`,
    date: READ,
    notes: "The model page was not in the stored pages: $2.50 / $15, the 1,050,000 context, the effort list and the " +
      "272K tier are third parties' (vercel.com/ai-gateway, docs.venice.ai, wavespeed.ai, nxcode.io); the $0.25 " +
      "cached input is the GPT-5 family's 0.1x, not read anywhere.",
  },
  // Served only by the Responses API: Chat Completions answers "This model is only supported in v1/responses and not
  // in v1/chat/completions" (pgadmin-org/pgadmin4#9795; OpenAI's Codex prompting guide). Shut down: the API answers
  // 404, so a run stops before any call and names the replacement.
  "openai/gpt-5-codex": {
    api: "responses",
    structured_output: "json_schema",
    context_window: 400_000,
    max_output: 128_000,
    cache: AUTOMATIC,
    prices: gpt(1.25, 0.125, 10),
    effort: ["low", "medium", "high"],
    thinking: [],
    retired: { date: "2026-07-23", replacement: "gpt-5.4" },
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-5-codex`,
    date: READ,
    notes: "Shutdown 2026-07-23 (notice of 2026-04-22, replacement gpt-5.4) as the issue read the deprecations " +
      "page; the stored excerpts do not reach that entry, and dsiddharth2/codehawk#25 reports its 404.",
  },
  "openai/gpt-5": {
    api: "chat-completions",
    structured_output: "json_schema",
    context_window: 400_000,
    max_output: 128_000,
    cache: AUTOMATIC,
    prices: gpt(1.25, 0.125, 10),
    effort: ["minimal", "low", "medium", "high"],
    thinking: [],
    // The deprecations page names the dated id with it: "gpt-5, gpt-5-2025-08-07".
    aliases: ["gpt-5-2025-08-07"],
    // Deprecated 2026-06-11, shutdown 2026-12-11 (the deprecations page).
    retired: { date: "2026-12-11", replacement: "gpt-6.1-sol" },
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-5 ${OPENAI_PRICING}`,
    date: REREAD,
  },
  // The rest of the deprecation of 2026-06-11 (the deprecations page: "Dec 11, 2026 | gpt-5-mini,
  // gpt-5-mini-2025-08-07 | Deprecated | gpt-6.1-terra", …). A run within 30 days of the shutdown warns once; after it,
  // stops before any call naming the replacement.
  "openai/gpt-5-mini": {
    ...gpt5Family({ aliases: ["gpt-5-mini-2025-08-07"], replacement: "gpt-6.1-terra" }),
    // Its model page (marked "deprecating"): $0.25 / $0.025 cached / $2, 400,000 context, 128,000 output.
    prices: gpt(0.25, 0.025, 2),
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-5-mini`,
  },
  "openai/gpt-5-nano": {
    ...gpt5Family({ aliases: ["gpt-5-nano-2025-08-07"], replacement: "gpt-6-luna" }),
    // Its model page (marked "Deprecated"): $0.05 / $0.005 cached / $0.40, 400,000 context, 128,000 output.
    prices: gpt(0.05, 0.005, 0.4),
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-5-nano`,
    notes: 'Replacement gpt-6-luna: the stored excerpt of the deprecations page breaks off at "gpt-6"; ' +
      "dev.to/sunnatulla_dev, quoting the page, completes it, and the model page recommends GPT-6 Luna.",
  },
  "openai/gpt-5-pro": {
    ...gpt5Family({ aliases: ["gpt-5-pro-2025-10-06"], replacement: "gpt-6.1-sol" }),
    // Its model page: Responses API only, reasoning.effort high only, 400,000 context, 272,000 output, $15 / $120
    // and no cached-input price (so no prompt cache, and a cache read would cost what input costs).
    api: "responses",
    max_output: 272_000,
    cache: null,
    prices: { input: 15, output: 120, cache_read: 15 },
    effort: ["high"],
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-5-pro`,
    notes:
      "Replacement gpt-6.1-sol with reasoning.mode pro (Responses API only), as dev.to/sunnatulla_dev quotes the " +
      "deprecations page, whose stored excerpt stops before this row.",
  },
  "openai/o3": {
    ...gpt5Family({ aliases: ["o3-2025-04-16"], replacement: "gpt-6.1-sol" }),
    context_window: 200_000,
    max_output: 100_000,
    effort: ["low", "medium", "high"],
    notes: "Replacement gpt-6.1-sol, as dev.to/sunnatulla_dev quotes the deprecations page (whose stored excerpt " +
      "stops before the o3 row). 200,000 / 100,000 and the low/medium/high efforts are the 2025 model page's, not " +
      "read again; no price kept: a run's cost is null.",
  },
  "openai/gpt-5.1": {
    ...gpt5Family({ aliases: ["gpt-5.1-2025-11-13"], replacement: "gpt-6.1-sol" }),
    // Its model page (marked "Deprecated"): $1.25 / $0.125 cached / $10, 400,000 / 128,000, "Reasoning.effort
    // supports: none (default), low, medium, and high".
    prices: gpt(1.25, 0.125, 10),
    effort: ["none", "low", "medium", "high"],
    retired: { date: "2027-04-01", replacement: "gpt-6.1-sol" },
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-5.1`,
    notes: "Shutdown 2027-04-01 as dev.to/max_bob (checked against GET /v1/models shutdown_date) and " +
      "dev.to/aidriftline read the deprecations page; its stored excerpt does not reach that row, and the " +
      "replacement gpt-6.1-sol is not read anywhere: it is the current Sol, as for gpt-5.",
  },
  "openai/o3-pro": {
    ...gpt5Family({ aliases: ["o3-pro-2025-06-10"], replacement: "gpt-6.1-sol" }),
    api: "responses",
    effort: ["high"],
    notes: "Shuts down 2026-12-11 with o3 (dev.to/max_bob and dev.to/aideprecations quoting the deprecations page); " +
      "the replacement is the one the table names for gpt-5-pro (Sol with reasoning.mode pro). Responses API and " +
      "effort high only as for gpt-5-pro, not read from its page; no price kept: a run's cost is null.",
  },
  // Shut down: the API answers 404.
  "openai/gpt-3.5-turbo-0125": OCTOBER_23(["gpt-3.5-turbo"], "gpt-5.6-terra"),
  "openai/gpt-4-0613": OCTOBER_23(["gpt-4"], "gpt-5.6-sol"),
  "openai/gpt-4-1106-preview": OCTOBER_23([], "gpt-5.6-sol"),
  "openai/gpt-4-turbo-2024-04-09": OCTOBER_23(["gpt-4-turbo"], "gpt-5.6-sol"),
  "openai/gpt-4o-2024-05-13": OCTOBER_23([], "gpt-5.6-sol"),
  "openai/gpt-4.1-nano-2025-04-14": OCTOBER_23(["gpt-4.1-nano"], "gpt-5.6-luna"),
  "openai/o1-2024-12-17": OCTOBER_23(["o1"], "gpt-5.6-sol"),
  "openai/o1-pro-2025-03-19": OCTOBER_23(["o1-pro"], "gpt-5.6-sol"),
  "openai/o3-mini-2025-01-31": OCTOBER_23(["o3-mini"], "gpt-5.6-sol"),
  "openai/o4-mini-2025-04-16": OCTOBER_23(["o4-mini"], "gpt-5.6-terra"),
  "openai/gpt-4.5-preview-2025-02-27": shutDown(
    ["gpt-4.5-preview"],
    { date: "2025-07-14", replacement: "gpt-6-luna" },
    "Shut down 2025-07-14 (the deprecations page's section of 2025-04-14; Azure's retired-models table gives the " +
      "same date). The page's replacement, gpt-4.1, shuts down 2027-01-14 naming gpt-6-luna.",
  ),
  "openai/o1-preview-2024-09-12": shutDown(
    ["o1-preview"],
    { date: "2025-07-28", replacement: "gpt-6.1-sol" },
    "Shut down 2025-07-28 (the deprecations page's section of 2025-04-28; Azure's retired-models table gives the " +
      "same date). The page's replacement, o3, shuts down 2026-12-11 naming gpt-6.1-sol.",
  ),
  "openai/o1-mini-2024-09-12": shutDown(
    ["o1-mini"],
    { date: "2025-10-27", replacement: "gpt-5.6-terra" },
    "Shut down 2025-10-27 (the deprecations page's section of 2025-04-28). The page's replacement, o4-mini, shut " +
      "down 2026-10-23 naming gpt-5.6-terra.",
  ),
  // GPT-4 family: deprecated 2026-10-14, shutdown 2027-01-14, replacement gpt-6-luna (the deprecations page).
  "openai/gpt-4.1": {
    api: "chat-completions",
    structured_output: "json_schema",
    context_window: 1_047_576,
    max_output: 32_768,
    cache: AUTOMATIC,
    prices: gpt(2, 0.5, 8),
    effort: [],
    thinking: [],
    retired: { date: "2027-01-14", replacement: "gpt-6-luna" },
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-4.1 ${OPENAI_PRICING}`,
    date: READ,
  },
  "openai/gpt-4.1-mini": {
    api: "chat-completions",
    structured_output: "json_schema",
    context_window: 1_047_576,
    max_output: 32_768,
    cache: AUTOMATIC,
    prices: gpt(0.4, 0.1, 1.6),
    effort: [],
    thinking: [],
    retired: { date: "2027-01-14", replacement: "gpt-6-luna" },
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-4.1-mini ${OPENAI_PRICING}`,
    date: READ,
  },
  "openai/gpt-4o": {
    api: "chat-completions",
    structured_output: "json_schema",
    context_window: 128_000,
    max_output: 16_384,
    cache: AUTOMATIC,
    prices: gpt(2.5, 1.25, 10),
    effort: [],
    thinking: [],
    retired: { date: "2027-01-14", replacement: "gpt-6-luna" },
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-4o ${OPENAI_PRICING}`,
    date: READ,
  },
  "openai/gpt-4o-2024-08-06": {
    api: "chat-completions",
    structured_output: "json_schema",
    context_window: 128_000,
    max_output: 16_384,
    cache: AUTOMATIC,
    prices: gpt(2.5, 1.25, 10),
    effort: [],
    thinking: [],
    retired: { date: "2027-01-14", replacement: "gpt-6-luna" },
    source: `${OPENAI_DEPRECATIONS} ${OPENAI_MODELS}/gpt-4o ${OPENAI_PRICING}`,
    date: READ,
  },
};

/** The table Loom ships; `loom models` prints it. */
export const BUILT_IN_MODELS: ModelTable = {
  format: MODELS_FORMAT,
  currency: "USD",
  updated: REREAD,
  models: { ...anthropic, ...openai },
  // Unknown ids of a known family run like its current member (lib/models/models.ts resolveModel).
  families: {
    // The family's most conservative settings (schema in the prompt, no effort or thinking, 200K / 32K, a
    // 4,096-token cache minimum): an unknown claude-* id may be an old dated one that never had output_config.format,
    // a 1M context or a 512-token cache minimum.
    "anthropic/claude-": "anthropic/claude-sonnet-4-6",
    "openai/gpt-6": "openai/gpt-6.1-sol",
    "openai/gpt-5.6-": "openai/gpt-5.6-sol",
  },
};
