// Builds the provider a model configuration names. Everything about where it goes (base URL, key variable, limits) is
// resolved once, by lib/settings/settings.ts; here the key is read from the variable named there, and a missing one stops the run
// before any request.
import { StartupError } from "../../errors.ts";
import { DEFAULT_ANTHROPIC_MAX_TOKENS, type ProviderConfig } from "../../providers/provider-config.ts";
import type { Provider } from "../../vocabulary/turn.ts";
import { formatZodError } from "../../text/zod-error.ts";
import { type ProviderSettings, resolveProviderConfig } from "../../settings/settings.ts";
import { ProviderConfig as ProviderConfigSchema } from "../../providers/provider-config.ts";
import { createAnthropicProvider } from "./anthropic-provider.ts";
import { createOpenAIProvider } from "./openai-provider.ts";
import type { HttpOptions } from "./post-json.ts";

export type CreateProviderOptions = HttpOptions & { env: Record<string, string | undefined> };

/** A model configuration the caller wrote itself (a library call): resolved like a run's, then built. */
export function createProvider(config: ProviderConfig, { env, ...http }: CreateProviderOptions): Provider {
  const parsed = ProviderConfigSchema.safeParse(config);
  if (!parsed.success) throw new StartupError(`Invalid model configuration: ${formatZodError(parsed.error)}`);
  const resolved = resolveProviderConfig(parsed.data, { env });
  if (!resolved.ok) throw new StartupError(resolved.message, resolved.code);
  return buildProvider(resolved.provider, { env, ...http });
}

/** The provider of resolved settings; the key comes from the environment variable they name. */
export function buildProvider(settings: ProviderSettings, { env, ...http }: CreateProviderOptions): Provider {
  const { kind, model } = settings;
  // The caller's limits (flags such as --provider-deadline-ms) are already above the configuration's in the settings.
  http.timeoutMs ??= settings.provider_idle_timeout_ms.value ?? undefined;
  http.deadlineMs ??= settings.provider_deadline_ms.value ?? undefined;
  http.maxResponseBytes ??= settings.max_response_bytes;
  const keyEnv = settings.api_key_env.value;
  const apiKey = keyEnv ? env[keyEnv]?.trim() || null : null;
  if (keyEnv && !apiKey) {
    throw new StartupError(
      `Model "${model}" (${kind}) needs an API key: set the environment variable ${keyEnv}`,
      "missing_credential",
    );
  }
  const baseUrl = settings.base_url.value;
  if (kind === "anthropic") {
    if (keyEnv === null || apiKey === null) throw new Error("anthropic has a default key variable");
    return createAnthropicProvider(
      {
        apiKey,
        keyEnv,
        baseUrl,
        model,
        maxTokens: settings.max_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
        cacheTtl: settings.cache_ttl,
      },
      http,
    );
  }
  return createOpenAIProvider({
    kind,
    apiKey,
    keyEnv,
    baseUrl,
    model,
    maxTokens: settings.max_tokens,
    responseFormat: settings.response_format,
  }, http);
}
