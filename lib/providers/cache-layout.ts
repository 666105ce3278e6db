// What a provider body looks like to a prompt cache, without its text: the blocks in the order the cache hashes them,
// each with its section, size, a digest and whether it carries a breakpoint. The run report's cache explanation is
// computed from these (lib/cache-explanation.ts); no prompt is kept. The pieces every layout is made of are here; each
// kind lays out its own body in its folder (anthropic/anthropic-cache-layout.ts, openai/openai-cache-layout.ts), so
// nothing here knows a provider's body.
import type { CacheBlock, TurnRequest } from "../vocabulary/turn.ts";
import { digestOf, utf8Length } from "../text/digest.ts";
import { renderSectionBlocks, splitPrefix } from "./render-sections.ts";

export const MINUTE_MS = 60_000;

/** One block of a body: its section, its size, a digest of its text and whether a breakpoint ends it. */
export function cacheBlock(section: CacheBlock["section"], text: string, breakpoint = false): CacheBlock {
  return {
    section,
    bytes: utf8Length(text),
    // 16 hex digits: enough to tell a run's blocks apart, and no text.
    digest: digestOf(text).slice(7, 23),
    breakpoint,
  };
}

/** The sections of the non-prefix part, one entry per block the adapters send (events one block per event). */
export function restSections(request: TurnRequest): { section: CacheBlock["section"]; text: string }[] {
  const { rest } = splitPrefix(request.sections);
  return rest.flatMap((section) => renderSectionBlocks(section).map((text) => ({ section: section.section, text })));
}
