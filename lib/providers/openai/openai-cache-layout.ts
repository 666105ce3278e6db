// An OpenAI body as its prompt cache sees it (developers.openai.com/docs/guides/prompt-caching, read 2026-12-01):
// automatic, the longest prefix shared with a recent request, from 1,024 tokens in 128-token steps; prompt_cache_key
// routes a run's requests together; entries are usually cleared after 5-10 minutes of inactivity.
import type { CacheBlock, CacheLayout, TurnRequest } from "../../vocabulary/turn.ts";
import { cacheBlock, MINUTE_MS, restSections } from "../cache-layout.ts";
import type { ChatCompletionsBody } from "../chat-completions.ts";
import { splitPrefix } from "../render-sections.ts";
import type { OpenAIResponsesBody } from "./convert-to-openai-responses-request.ts";

/** OpenAI's documented minimum, and the step cached prefixes grow by. */
const OPENAI_MIN_TOKENS = 1024;

/** A Chat Completions body: the answer format, the system message (the prefix), then the user message's pieces. */
export function openaiCacheLayout(
  request: TurnRequest,
  body: ChatCompletionsBody,
  { minTokens = OPENAI_MIN_TOKENS }: { minTokens?: number } = {},
): CacheLayout {
  const { prefix } = splitPrefix(request.sections);
  const blocks: CacheBlock[] = [cacheBlock("tools", JSON.stringify(body.response_format ?? null))];
  const system = body.messages.find((m) => m.role === "system");
  if (system) blocks.push(cacheBlock(prefix[prefix.length - 1]?.section ?? "instructions", system.content));
  const user = body.messages.find((m) => m.role === "user");
  const rest = restSections(request);
  // The user message is the rest's blocks joined with blank lines between sections: one block per piece, so two
  // requests share every piece up to their first difference. A message that is not that (an answer format appended
  // for a server without schema support) ends with one more block.
  let chars = 0;
  rest.forEach((r, i) => {
    const before = rest[i - 1];
    const text = (before !== undefined && before.section !== r.section ? "\n\n" : "") + r.text;
    blocks.push(cacheBlock(r.section, text));
    chars += text.length;
  });
  if (user && user.content.length > chars) blocks.push(cacheBlock("candidates", user.content.slice(chars)));
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
  const blocks: CacheBlock[] = [cacheBlock("tools", JSON.stringify(body.text.format))];
  const developer = body.input.find((m) => m.role === "developer")?.content[0];
  if (developer) {
    blocks.push(
      cacheBlock(
        prefix[prefix.length - 1]?.section ?? "instructions",
        developer.text,
        !!developer.prompt_cache_breakpoint,
      ),
    );
  }
  const parts = body.input.find((m) => m.role === "user")?.content ?? [];
  const rest = restSections(request);
  // With marks the events go one part per event, so the parts are these pieces and carry their own marks.
  const aligned = parts.length === rest.length;
  rest.forEach((r, i) => blocks.push(cacheBlock(r.section, r.text, aligned && !!parts[i]?.prompt_cache_breakpoint)));
  return { mode: "automatic", min_tokens: minTokens, ttl_ms: 5 * MINUTE_MS, lookback: 0, blocks };
}
