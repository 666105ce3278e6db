// An Anthropic Messages body as its prompt cache sees it (platform.claude.com/docs/en/build-with-claude/prompt-caching,
// read 2026-12-01): tools -> system -> messages; an entry is written at each cache_control breakpoint whose prefix
// reaches the model's minimum; a breakpoint reads an entry ending at it or at one of the 20 blocks before it; entries
// live 5 minutes (or 1 hour) from their last use.
import type { CacheBlock, CacheLayout, TurnRequest } from "../../vocabulary/turn.ts";
import { cacheBlock, MINUTE_MS, restSections } from "../cache-layout.ts";
import { splitPrefix } from "../render-sections.ts";
import type { AnthropicRequestBody } from "./convert-to-anthropic-request.ts";

export const ANTHROPIC_LOOKBACK_BLOCKS = 20;

export function anthropicCacheLayout(
  request: TurnRequest,
  body: AnthropicRequestBody,
  { minTokens, ttl }: { minTokens: number; ttl: "5m" | "1h" },
): CacheLayout {
  const { prefix } = splitPrefix(request.sections);
  const rest = restSections(request);
  // The tools, or the output format a model takes instead of a forced tool, key the cache first.
  const blocks: CacheBlock[] = [cacheBlock("tools", JSON.stringify(body.tools ?? body.output_config ?? null))];
  (body.system ?? []).forEach((b, i) => {
    blocks.push(cacheBlock(prefix[i]?.section ?? "instructions", b.text, b.cache_control !== undefined));
  });
  // tool_choice is hashed before the messages and has no tokens: a zero-byte block keeps it in the chain.
  if (body.tool_choice) blocks.push({ ...cacheBlock("tools", JSON.stringify(body.tool_choice)), bytes: 0 });
  body.messages[0].content.forEach((b, i) => {
    blocks.push(cacheBlock(rest[i]?.section ?? "candidates", b.text, b.cache_control !== undefined));
  });
  return {
    mode: "breakpoints",
    min_tokens: minTokens,
    ttl_ms: (ttl === "1h" ? 60 : 5) * MINUTE_MS,
    lookback: ANTHROPIC_LOOKBACK_BLOCKS,
    blocks,
  };
}
