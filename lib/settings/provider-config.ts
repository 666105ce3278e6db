// Which model API to call and how: the schema is the type. Credentials are never in here, only the name of the
// environment variable that holds them.
import { z } from "zod";
import { ThinkingType } from "../models/models.ts";
import { ModelProvider } from "../models/provider-kinds.ts";
import { CacheTtl, ResponseFormatMode } from "../providers/call-options.ts";

/** An http(s) URL: the one check of a base URL, wherever it is written (a file, a flag, a variable). */
export const HttpUrl = z.string().refine((text) => {
  try {
    return ["http:", "https:"].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}, { error: "expected an http(s) URL" });

/** The longest wait a timer holds (2^31 - 1 ms, about 24.8 days): a longer one fires at once, failing every call. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Milliseconds a timer waits: a positive whole number, at most MAX_TIMER_MS. */
export const TimerMs = z.number().int().positive().max(MAX_TIMER_MS, {
  error: `expected at most ${MAX_TIMER_MS} milliseconds (about 24 days; a longer timer fires at once)`,
});

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
  idle_timeout_ms: TimerMs.optional().describe(
    "An attempt fails when nothing (not even headers) arrives for this long; retried. Default 30000; " +
      "--provider-idle-timeout-ms overrides it",
  ),
  deadline_ms: TimerMs.optional().describe(
    "One model call, every retry and wait included, ends by then. Default 60000; raise it for long answers; " +
      "--provider-deadline-ms overrides it",
  ),
  max_response_bytes: z.number().int().positive().optional().describe(
    "A response body over this fails the call without being read whole. Default 8388608 (8 MiB)",
  ),
});
export type ProviderConfig = z.infer<typeof ProviderConfig>;
