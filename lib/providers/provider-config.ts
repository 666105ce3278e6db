// Which model API to call and how: the schema is the type. Credentials are never in here, only the name of the
// environment variable that holds them.
import { z } from "zod";
import { ThinkingType } from "../models/models.ts";
import { ModelProvider } from "../models/provider-kinds.ts";

/** An http(s) URL: the one check of a base URL, wherever it is written (a file, a flag, a variable). */
export const HttpUrl = z.string().refine((text) => {
  try {
    return ["http:", "https:"].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}, { error: "expected an http(s) URL" });

/** How an OpenAI-compatible server is asked to constrain the answer. */
export const ResponseFormatMode = z.enum(["json_schema", "json_object", "none"]);
export type ResponseFormatMode = z.infer<typeof ResponseFormatMode>;

/** How long Anthropic keeps a cached prefix: 5 minutes (default; writes cost 1.25x input) or 1 hour (2x). */
export const CacheTtl = z.enum(["5m", "1h"]);
export type CacheTtl = z.infer<typeof CacheTtl>;
/** What a model's configuration may ask for: a lifetime, or `auto` (chosen from the run's pace). */
const CacheTtlSetting = z.enum([...CacheTtl.options, "auto"]);

export const ProviderConfig = z.strictObject({
  kind: ModelProvider.describe(
    "Which wire format: the Anthropic Messages API, the OpenAI API, an OpenAI-compatible local server (vLLM, " +
      "llama.cpp, LM Studio), Ollama's native API, or OpenRouter (Chat Completions, cache markers for Claude)",
  ),
  model: z.string().min(1).describe("Model id as the API knows it"),
  base_url: HttpUrl
    .optional()
    .describe(
      "API base URL; defaults to ANTHROPIC_BASE_URL / OPENAI_BASE_URL, then the public API (Ollama's for openai-compatible)",
    ),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional()
    .describe(
      "Environment variable holding the API key; defaults to ANTHROPIC_API_KEY / OPENAI_API_KEY; openai-compatible needs none",
    ),
  max_tokens: z.number().int().positive().optional().describe("Output token limit per call"),
  response_format: ResponseFormatMode.optional().describe(
    "openai-compatible only: json_schema (default), json_object, or none when the server supports neither",
  ),
  cache_ttl: CacheTtlSetting.optional().describe(
    "anthropic only: how long the prompt cache keeps the stable prefix and the events, 5m (default; writes cost " +
      "1.25x input) or 1h (writes 2x): 1h pays when calls are more than 5 minutes apart (slow tests, a human in the " +
      "loop); auto: 5m until calls more than 5 minutes apart are frequent enough that rewriting the prefix after " +
      "them costs more than the 1h premium on every write",
  ),
  effort: z.string().min(1).optional().describe(
    "How hard the model reasons: anthropic output_config.effort, openai reasoning effort; one of the values the " +
      "model table lists for the model (loom models). Default: the provider's",
  ),
  thinking: ThinkingType.optional().describe(
    "anthropic only: thinking.type (adaptive, disabled or between_tools), when the model table lists it for the " +
      "model. Default: the model's",
  ),
  idle_timeout_ms: z.number().int().positive().optional().describe(
    "An attempt fails when nothing (not even headers) arrives for this long; retried. Default 30000; " +
      "--provider-idle-timeout-ms overrides it",
  ),
  deadline_ms: z.number().int().positive().optional().describe(
    "One model call, every retry and wait included, ends by then. Default 60000; raise it for long answers; " +
      "--provider-deadline-ms overrides it",
  ),
  max_response_bytes: z.number().int().positive().optional().describe(
    "A response body over this fails the call without being read whole. Default 8388608 (8 MiB)",
  ),
});
export type ProviderConfig = z.infer<typeof ProviderConfig>;

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
