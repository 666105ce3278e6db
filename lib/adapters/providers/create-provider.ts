// Builds the provider a model configuration names. Credentials come only from the environment variable the
// configuration (or the default for its kind) names; a missing one stops the run before any request.
import { StartupError } from "../../errors.ts";
import { withoutCredentials } from "../../text/safe-text.ts";
import {
  ADAPTIVE_THINKING_MAX_TOKENS,
  BASE_URL_ENVS,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  DEFAULT_BASE_URLS,
  DEFAULT_KEY_ENVS,
  ProviderConfig,
} from "../../providers/provider-config.ts";
import type { Provider } from "../../vocabulary/turn.ts";
import { formatZodError } from "../../text/zod-error.ts";
import { createAnthropicProvider } from "./anthropic-provider.ts";
import { createOpenAIProvider } from "./openai-provider.ts";
import { createOpenAIResponsesProvider } from "./openai-responses-provider.ts";
import { BUILT_IN_MODELS } from "../../models/built-in.ts";
import {
  type ModelTable,
  type ResolvedModel,
  resolveModel,
  retirementOf,
  unknownModelWarning,
} from "../../models/models.ts";
import { createOllamaProvider } from "./ollama-provider.ts";
import { openRouterEntry } from "../../providers/mark-openrouter-cache.ts";
import type { HttpOptions } from "./post-json.ts";

export type CreateProviderOptions = HttpOptions & {
  env: Record<string, string | undefined>;
  /** The model table (default: the built-in one): how the model is called, and whether it is retired. */
  models?: ModelTable;
  /** Where the one warning about a model the table does not know goes (default: none). */
  warn?: (message: string) => void;
  /** Today as YYYY-MM-DD, for retirement dates (default: the clock's). */
  today?: string;
};

function isUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

export function createProvider(
  config: ProviderConfig,
  { env, models = BUILT_IN_MODELS, warn, today = new Date().toISOString().slice(0, 10), ...http }:
    CreateProviderOptions,
): Provider {
  const parsed = ProviderConfig.safeParse(config);
  if (!parsed.success) throw new StartupError(`Invalid model configuration: ${formatZodError(parsed.error)}`);
  const { kind, base_url, api_key_env, max_tokens, response_format, cache_ttl, effort, thinking } = parsed.data;
  // The table says how the model is called; a retired one stops here, before any request, naming its replacement.
  const resolved = resolveModel(models, kind, parsed.data.model);
  const { entry, id: model } = resolved;
  const retired = retirementOf(resolved, { today });
  if (retired) throw new StartupError(retired, "model_retired");
  // Through OpenRouter, the model routed to ("anthropic/claude-sonnet-5-5") says how it caches.
  const routed = kind === "openrouter" ? openRouterEntry(models, parsed.data.model) : null;
  // A local server's model ids are the user's own (qwen2.5-coder:7b, …): its defaults are the server's, not a guess.
  if (!resolved.known && !routed && kind !== "openai-compatible" && kind !== "ollama") {
    warn?.(unknownModelWarning(resolved));
  }
  checkSetting(resolved, "effort", effort, entry.effort);
  checkSetting(resolved, "thinking", thinking, entry.thinking);
  if (thinking !== undefined && kind !== "anthropic") {
    throw new StartupError(`Model "${model}": thinking applies only to kind "anthropic", not "${kind}"`);
  }
  // Thinking cannot be combined with a forced tool (tool_choice "tool" or "any"): the API answers 400
  // (platform.claude.com/docs/en/build-with-claude/extended-thinking, "Tool use"; read 2026-12-01).
  if (thinking !== undefined && thinking !== "disabled" && entry.structured_output === "forced_tool") {
    throw new StartupError(
      `Model "${resolved.key}": thinking "${thinking}" cannot be combined with the forced tool this model answers ` +
        'through; leave thinking unset or use "disabled"',
      "invalid_model_setting",
    );
  }
  const { idle_timeout_ms, deadline_ms, max_response_bytes } = parsed.data;
  // The caller's limits (flags such as --provider-deadline-ms) override the configuration's, as flags do elsewhere.
  http.timeoutMs ??= idle_timeout_ms;
  http.deadlineMs ??= deadline_ms;
  http.maxResponseBytes ??= max_response_bytes;
  if (response_format !== undefined && kind !== "openai-compatible") {
    throw new StartupError(`Model "${model}": response_format applies only to kind "openai-compatible", not "${kind}"`);
  }
  if (cache_ttl !== undefined && kind !== "anthropic") {
    throw new StartupError(`Model "${model}": cache_ttl applies only to kind "anthropic", not "${kind}"`);
  }

  const keyEnv = api_key_env ?? DEFAULT_KEY_ENVS[kind];
  const apiKey = keyEnv ? env[keyEnv]?.trim() || null : null;
  if (keyEnv && !apiKey) {
    throw new StartupError(
      `Model "${model}" (${kind}) needs an API key: set the environment variable ${keyEnv}`,
      "missing_credential",
    );
  }

  const baseUrlEnv = BASE_URL_ENVS[kind];
  const fromEnv = baseUrlEnv ? env[baseUrlEnv]?.trim() || undefined : undefined;
  if (base_url === undefined && fromEnv !== undefined && !isUrl(fromEnv)) {
    // A value with "@" may hold a password that no parser can tell from the rest: it is not echoed.
    const shown = fromEnv.includes("@") ? '(not shown: it holds "@")' : JSON.stringify(fromEnv);
    throw new StartupError(`${baseUrlEnv} is not an http(s) URL: ${shown}`);
  }
  const baseUrl = base_url ?? fromEnv ?? DEFAULT_BASE_URLS[kind];
  // Credentials in the URL would be sent to the API and shown wherever the URL is: refused, and never echoed.
  const bare = withoutCredentials(baseUrl);
  if (bare.had) {
    throw new StartupError(
      `Model "${model}": the base URL ${JSON.stringify(bare.url)} (${
        base_url === undefined ? baseUrlEnv : "base_url"
      }) ` +
        "holds a user name or password; remove it (API keys come from api_key_env)",
      "invalid_base_url",
    );
  }

  if (kind === "anthropic") {
    return createAnthropicProvider(
      {
        apiKey: apiKey as string,
        keyEnv: keyEnv as string,
        baseUrl,
        model,
        maxTokens: max_tokens ??
          Math.min(
            entry.thinking.includes("adaptive") ? ADAPTIVE_THINKING_MAX_TOKENS : DEFAULT_ANTHROPIC_MAX_TOKENS,
            entry.max_output,
          ),
        cacheTtl: cache_ttl,
        // The model's minimum cacheable prompt, for the run report's cache explanation (the model table's).
        ...(entry.cache ? { minCacheTokens: entry.cache.min_tokens } : {}),
        structuredOutput: entry.structured_output,
        effort,
        thinking,
      },
      http,
    );
  }
  if (kind === "ollama") return createOllamaProvider({ apiKey, keyEnv, baseUrl, model, maxTokens: max_tokens }, http);
  const openai = { kind, apiKey, keyEnv, baseUrl, model, maxTokens: max_tokens, effort };
  if (kind === "openai" && entry.api === "responses") {
    return createOpenAIResponsesProvider({
      ...openai,
      explicitCache: entry.cache?.breakpoints === "explicit_or_automatic",
    }, http);
  }
  return createOpenAIProvider({
    ...openai,
    cacheMarkers: routed?.entry.cache?.breakpoints === "explicit",
    // A configured response_format (openai-compatible servers) wins over the table's mode.
    responseFormat: response_format ??
      (entry.structured_output === "json_object"
        ? "json_object"
        : entry.structured_output === "prompt"
        ? "none"
        : "json_schema"),
  }, http);
}

/** A setting the model table says the model does not accept is refused before any request, with what it accepts. */
function checkSetting(model: ResolvedModel, name: string, value: string | undefined, accepted: readonly string[]) {
  if (value === undefined || !model.known || accepted.includes(value)) return;
  throw new StartupError(
    `Model "${model.key}": ${name} ${JSON.stringify(value)} is not accepted; the model table lists ${
      accepted.length > 0 ? accepted.join(", ") : "none"
    } (loom models)`,
    "invalid_model_setting",
  );
}
