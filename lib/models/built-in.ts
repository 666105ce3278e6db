// The shipped model table: every fact is the provider's published one, with where and when it was read. A user's models
// file (loom run --models FILE) replaces or adds entries. Update an entry by reading its source again and changing
// its date; tests/contract.test.ts fails when an entry names a model the official SDK types no longer list, unless
// the entry marks it retired.
import { type ModelEntry, MODELS_FORMAT, type ModelTable } from "./models.ts";

// Anthropic: the model pages (context, output, prices per counter, thinking, default effort, lifecycle), the
// "What's new" pages (forced tool use rejected by the 5.5 models), the prompt-caching page (minimum cacheable prompt)
// and the model-deprecations page; effort values from @anthropic-ai/sdk 1.15.0 (OutputConfig.effort).
const CLAUDE = "https://platform.claude.com/docs/en/models";
const CACHING = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching";
const DEPRECATIONS = "https://platform.claude.com/docs/en/about-claude/model-deprecations";
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
const OPENAI_PRICING = "https://openai.com/api/pricing/";
const OPENAI_CACHING = "https://developers.openai.com/api/docs/guides/prompt-caching";

function gpt(input: number, cached: number, output: number, { writes = false }: { writes?: boolean } = {}) {
  return { input, output, cache_read: cached, ...(writes ? { cache_write: input * 1.25 } : {}) };
}
const AUTOMATIC = {
  min_tokens: 1_024,
  ttls: ["in_memory" as const, "24h" as const],
  breakpoints: "automatic" as const,
};
const GPT_5_6_CACHE = { min_tokens: 1_024, ttls: ["30m" as const], breakpoints: "explicit_or_automatic" as const };
const GPT_5_6_EFFORT = ["none", "low", "medium", "high", "xhigh"];

const anthropic: Record<string, ModelEntry> = {
  "anthropic/claude-sonnet-5-5": {
    api: "messages",
    structured_output: "output_config_format",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: claudeCache(512),
    prices: claude(2, 10, 0.2),
    effort: EFFORT,
    thinking: ["adaptive", "between_tools"],
    retired: null,
    source: `${CLAUDE}/sonnet-5-5/overview ${CLAUDE}/sonnet-5-5/whats-new-sonnet-5-5 ${CACHING}`,
    date: "2026-12-01",
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
    source: `${CLAUDE}/opus-5-5/overview ${CACHING}`,
    date: "2026-12-01",
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
    source: `${CLAUDE}/fable-5-1/overview ${CACHING}`,
    date: "2026-12-01",
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
    source: `${CLAUDE}/sonnet-5/overview ${CLAUDE}/sonnet-5-5/whats-new-sonnet-5-5`,
    date: "2026-12-01",
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
    // @anthropic-ai/sdk 1.15.0 (2026-11-30): "remove retired Claude Sonnet 4.5 models".
    retired: { date: "2026-09-29", replacement: "claude-sonnet-5-5" },
    source: `${DEPRECATIONS} https://github.com/anthropics/anthropic-sdk-typescript/blob/main/CHANGELOG.md`,
    date: "2026-12-01",
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
};

const openai: Record<string, ModelEntry> = {
  "openai/gpt-5.6-sol": {
    api: "responses",
    structured_output: "json_schema",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: GPT_5_6_CACHE,
    prices: gpt(5, 0.5, 30, { writes: true }),
    effort: GPT_5_6_EFFORT,
    thinking: [],
    // The family's alias names Sol.
    aliases: ["gpt-5.6"],
    retired: null,
    source: `${OPENAI_MODELS}/gpt-5.6-sol ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: "2026-12-01",
  },
  "openai/gpt-5.6-terra": {
    api: "responses",
    structured_output: "json_schema",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: GPT_5_6_CACHE,
    prices: gpt(2.5, 0.25, 15, { writes: true }),
    effort: GPT_5_6_EFFORT,
    thinking: [],
    retired: null,
    source: `${OPENAI_MODELS}/gpt-5.6-terra ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: "2026-12-01",
  },
  "openai/gpt-5.6-luna": {
    api: "responses",
    structured_output: "json_schema",
    context_window: 1_000_000,
    max_output: 128_000,
    cache: GPT_5_6_CACHE,
    prices: gpt(1, 0.1, 6, { writes: true }),
    effort: GPT_5_6_EFFORT,
    thinking: [],
    retired: null,
    source: `${OPENAI_MODELS}/gpt-5.6-luna ${OPENAI_PRICING} ${OPENAI_CACHING}`,
    date: "2026-12-01",
  },
  // Served only by the Responses API: Chat Completions answers "This model is only supported in v1/responses and not
  // in v1/chat/completions" (pgadmin-org/pgadmin4#9795; OpenAI's Codex prompting guide).
  "openai/gpt-5-codex": {
    api: "responses",
    structured_output: "json_schema",
    context_window: 400_000,
    max_output: 128_000,
    cache: AUTOMATIC,
    prices: gpt(1.25, 0.125, 10),
    effort: ["low", "medium", "high"],
    thinking: [],
    retired: null,
    source: `${OPENAI_MODELS}/gpt-5-codex ${OPENAI_PRICING}`,
    date: "2026-12-01",
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
    retired: null,
    source: `${OPENAI_MODELS}/gpt-5 ${OPENAI_PRICING}`,
    date: "2025-10-01",
  },
  "openai/gpt-4.1": {
    api: "chat-completions",
    structured_output: "json_schema",
    context_window: 1_047_576,
    max_output: 32_768,
    cache: AUTOMATIC,
    prices: gpt(2, 0.5, 8),
    effort: [],
    thinking: [],
    retired: null,
    source: `${OPENAI_MODELS}/gpt-4.1 ${OPENAI_PRICING}`,
    date: "2025-10-01",
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
    retired: null,
    source: `${OPENAI_MODELS}/gpt-4.1-mini ${OPENAI_PRICING}`,
    date: "2025-10-01",
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
    retired: null,
    source: `${OPENAI_MODELS}/gpt-4o ${OPENAI_PRICING}`,
    date: "2025-10-01",
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
    retired: null,
    source: `${OPENAI_MODELS}/gpt-4o ${OPENAI_PRICING}`,
    date: "2025-10-01",
  },
};

/** The table Loom ships; `loom models` prints it. */
export const BUILT_IN_MODELS: ModelTable = {
  format: MODELS_FORMAT,
  currency: "USD",
  models: { ...anthropic, ...openai },
};
