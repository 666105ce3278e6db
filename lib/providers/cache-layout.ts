// What a provider body looks like to a prompt cache, without its text: the blocks in the order the cache hashes them,
// each with its section, size, a digest and whether it carries a breakpoint. The run report's cache explanation is
// computed from these (lib/cache-explanation.ts); no prompt is kept.
//
// Provider facts (read 2026-12-01):
// - Anthropic (platform.claude.com/docs/en/build-with-claude/prompt-caching): tools -> system -> messages; an entry is
//   written at each cache_control breakpoint whose prefix reaches the model's minimum; a breakpoint reads an entry
//   ending at it or at one of the 20 blocks before it; entries live 5 minutes (or 1 hour) from their last use.
// - OpenAI (developers.openai.com/docs/guides/prompt-caching): automatic, the longest prefix shared with a recent
//   request, from 1,024 tokens in 128-token steps; prompt_cache_key routes a run's requests together; entries are
//   usually cleared after 5-10 minutes of inactivity.
import type { CacheBlock, CacheLayout, TurnRequest } from "../vocabulary/turn.ts";
import { digestOf, utf8Length } from "../text/digest.ts";
import type { AnthropicRequestBody } from "./anthropic/convert-to-anthropic-request.ts";
import type { OpenAIRequestBody } from "./openai/convert-to-openai-request.ts";
import type { OpenAIResponsesBody } from "./openai/convert-to-openai-responses-request.ts";
import { renderSectionBlocks, splitPrefix } from "./render-sections.ts";

export const ANTHROPIC_LOOKBACK_BLOCKS = 20;
const MINUTE_MS = 60_000;
/** OpenAI's documented minimum, and the step cached prefixes grow by. */
const OPENAI_MIN_TOKENS = 1024;

const block = (section: CacheBlock["section"], text: string, breakpoint = false): CacheBlock => ({
  section,
  bytes: utf8Length(text),
  // 16 hex digits: enough to tell a run's blocks apart, and no text.
  digest: digestOf(text).slice(7, 23),
  breakpoint,
});

/** The sections of the non-prefix part, one entry per block the adapters send (events one block per event). */
function restSections(request: TurnRequest): { section: CacheBlock["section"]; text: string }[] {
  const { rest } = splitPrefix(request.sections);
  return rest.flatMap((section) => renderSectionBlocks(section).map((text) => ({ section: section.section, text })));
}

export function anthropicCacheLayout(
  request: TurnRequest,
  body: AnthropicRequestBody,
  { minTokens, ttl }: { minTokens: number; ttl: "5m" | "1h" },
): CacheLayout {
  const { prefix } = splitPrefix(request.sections);
  const rest = restSections(request);
  // The tools, or the output format a model takes instead of a forced tool, key the cache first.
  const blocks: CacheBlock[] = [block("tools", JSON.stringify(body.tools ?? body.output_config ?? null))];
  (body.system ?? []).forEach((b, i) => {
    blocks.push(block(prefix[i]?.section ?? "instructions", b.text, b.cache_control !== undefined));
  });
  // tool_choice is hashed before the messages and has no tokens: a zero-byte block keeps it in the chain.
  if (body.tool_choice) blocks.push({ ...block("tools", JSON.stringify(body.tool_choice)), bytes: 0 });
  body.messages[0].content.forEach((b, i) => {
    blocks.push(block(rest[i]?.section ?? "candidates", b.text, b.cache_control !== undefined));
  });
  return {
    mode: "breakpoints",
    min_tokens: minTokens,
    ttl_ms: (ttl === "1h" ? 60 : 5) * MINUTE_MS,
    lookback: ANTHROPIC_LOOKBACK_BLOCKS,
    blocks,
  };
}

export function openaiCacheLayout(
  request: TurnRequest,
  body: OpenAIRequestBody,
  { minTokens = OPENAI_MIN_TOKENS }: { minTokens?: number } = {},
): CacheLayout {
  const { prefix } = splitPrefix(request.sections);
  const blocks: CacheBlock[] = [block("tools", JSON.stringify(body.response_format ?? null))];
  const system = body.messages.find((m) => m.role === "system");
  if (system) blocks.push(block(prefix[prefix.length - 1]?.section ?? "instructions", system.content));
  const user = body.messages.find((m) => m.role === "user");
  const rest = restSections(request);
  // The user message is the rest's blocks joined with blank lines between sections: one block per piece, so two
  // requests share every piece up to their first difference. A message that is not that (an answer format appended
  // for a server without schema support) ends with one more block.
  let chars = 0;
  rest.forEach((r, i) => {
    const before = rest[i - 1];
    const text = (before !== undefined && before.section !== r.section ? "\n\n" : "") + r.text;
    blocks.push(block(r.section, text));
    chars += text.length;
  });
  if (user && user.content.length > chars) blocks.push(block("candidates", user.content.slice(chars)));
  return { mode: "automatic", min_tokens: minTokens, ttl_ms: 5 * MINUTE_MS, lookback: 0, blocks };
}

/**
 * The Responses API body (convert-to-openai-responses-request.ts): the answer format, the developer message (the
 * prefix), then one input_text part per section of the rest, the events part split per event as the prefix cache
 * sees it (and as the adapter sends it where the model takes prompt_cache_breakpoint marks, GPT-5.6 and later: the
 * marked parts, the prefix and the last event, are the breakpoints). Automatic like Chat Completions.
 */
export function openaiResponsesCacheLayout(
  request: TurnRequest,
  body: OpenAIResponsesBody,
  { minTokens = OPENAI_MIN_TOKENS }: { minTokens?: number } = {},
): CacheLayout {
  const { prefix } = splitPrefix(request.sections);
  const blocks: CacheBlock[] = [block("tools", JSON.stringify(body.text.format))];
  const developer = body.input.find((m) => m.role === "developer")?.content[0];
  if (developer) {
    blocks.push(
      block(prefix[prefix.length - 1]?.section ?? "instructions", developer.text, !!developer.prompt_cache_breakpoint),
    );
  }
  const parts = body.input.find((m) => m.role === "user")?.content ?? [];
  const rest = restSections(request);
  // With marks the events go one part per event, so the parts are these pieces and carry their own marks.
  const aligned = parts.length === rest.length;
  rest.forEach((r, i) => blocks.push(block(r.section, r.text, aligned && !!parts[i]?.prompt_cache_breakpoint)));
  return { mode: "automatic", min_tokens: minTokens, ttl_ms: 5 * MINUTE_MS, lookback: 0, blocks };
}
