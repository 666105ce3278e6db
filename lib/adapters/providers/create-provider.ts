// Builds the provider a model configuration names. Credentials come only from the environment variable the
// configuration (or the default for its kind) names; a missing one stops the run before any request.
import { StartupError } from "../../errors.ts";
import { withoutCredentials } from "../../text/safe-text.ts";
import {
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
import type { HttpOptions } from "./post-json.ts";

export type CreateProviderOptions = HttpOptions & { env: Record<string, string | undefined> };

function isUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

export function createProvider(config: ProviderConfig, { env, ...http }: CreateProviderOptions): Provider {
  const parsed = ProviderConfig.safeParse(config);
  if (!parsed.success) throw new StartupError(`Invalid model configuration: ${formatZodError(parsed.error)}`);
  const { kind, model, base_url, api_key_env, max_tokens, response_format, cache_ttl } = parsed.data;
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
        maxTokens: max_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
        cacheTtl: cache_ttl,
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
    maxTokens: max_tokens,
    responseFormat: response_format,
  }, http);
}
