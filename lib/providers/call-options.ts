// What a provider call can be asked besides the request (how an answer is constrained, how long a cached prefix lives)
// and the limits a call runs under unless configured: the adapters' side of the user's model configuration
// (lib/settings/provider-config.ts).
import { z } from "zod";

/** How an OpenAI-compatible server is asked to constrain the answer. */
export const ResponseFormatMode = z.enum(["json_schema", "json_object", "none"]);
export type ResponseFormatMode = z.infer<typeof ResponseFormatMode>;

/** How long Anthropic keeps a cached prefix: 5 minutes (default; writes cost 1.25x input) or 1 hour (2x). */
export const CacheTtl = z.enum(["5m", "1h"]);
export type CacheTtl = z.infer<typeof CacheTtl>;

/** Anthropic requires max_tokens; the answers are small JSON, but write_file arguments carry whole files (never more
 * than the model table's output limit). */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8192;
/** Models that think adaptively when no thinking setting is sent (Sonnet 5.5, Opus 5.5, Fable 5.1, Sonnet 5: their
 * model pages, read 2026-12-01; default effort high) spend thinking tokens from the same max_tokens as the answer, so
 * 8,192 could cut a small JSON answer off after a long think. The limit only caps: output is billed as produced. */
export const ADAPTIVE_THINKING_MAX_TOKENS = 32_000;

/** No byte (headers included) for this long fails an attempt (retryable). */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
/** One model call, every attempt and wait included, ends by then. */
export const DEFAULT_DEADLINE_MS = 60_000;
/**
 * A local server's idle timeout and deadline per call (openai-compatible, ollama), unless configured: it sends nothing
 * until the answer is whole, evaluates an uncached prompt at 35-47 tokens/s on 2 cores and a grammar-constrained token
 * at up to ~145 ms (Gemma 3 270M), so a first call of a long run may take minutes. Ten minutes bounds a hung server
 * without failing a slow one (docs/live-model.md).
 */
export const LOCAL_TIMEOUT_MS = 600_000;
