// Builds the provider a model configuration names. Where it goes (base URL, key variable, limits) is resolved once,
// by lib/settings/settings.ts; here the model table says how the model is called (a retired one stops before any
// request), the key is read from the variable the settings name, and a missing one stops the run too.
import { StartupError } from "../errors.ts";
import { holdKeys } from "../io/held-keys.ts";
import {
  ADAPTIVE_THINKING_MAX_TOKENS,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  LOCAL_TIMEOUT_MS,
} from "../providers/call-options.ts";
import { ProviderConfig } from "../settings/provider-config.ts";
import type { Provider } from "../vocabulary/turn.ts";
import { formatZodError } from "../text/zod-error.ts";
import { type ProviderSettings, resolveProviderConfig } from "../settings/provider-settings.ts";
import { createAnthropicProvider } from "../providers/anthropic/anthropic-provider.ts";
import { createOpenAIProvider } from "../providers/openai/openai-provider.ts";
import { createOpenAIResponsesProvider } from "../providers/openai/openai-responses-provider.ts";
import { BUILT_IN_MODELS } from "../models/built-in.ts";
import {
  applyRules,
  type ModelEntry,
  type ModelTable,
  type ResolvedModel,
  resolveModel,
  retirementOf,
  retirementWarningOf,
  routedEntry,
  type ThinkingType,
  unknownModelWarning,
} from "../models/models.ts";
import { createOllamaProvider } from "../providers/ollama/ollama-provider.ts";
import { ModelProvider, type OwnApiKind, PROVIDER_KINDS } from "../models/provider-kinds.ts";
import type { HttpOptions } from "../providers/http/post-json.ts";
import { ANSWER_MODES } from "../providers/answer-mode.ts";
import type { ChatCompletionsHooks } from "../providers/chat-completions.ts";
import { OPENAI_CHAT_HOOKS } from "../providers/openai/openai-chat.ts";
import { OPENROUTER_CHAT_HOOKS } from "../providers/openrouter/openrouter-chat.ts";

export type CreateProviderOptions = HttpOptions & {
  env: Record<string, string | undefined>;
  /** The model table (default: the built-in one): how the model is called, and whether it is retired. */
  models?: ModelTable;
  /** Where the one warning about a model the table does not know goes (default: none). */
  warn?: (message: string) => void;
  /** Today as YYYY-MM-DD, for retirement dates (default: the clock's). */
  today?: string;
};

/** A model configuration the caller wrote itself (a library call): resolved like a run's, then built. */
export function createProvider(config: ProviderConfig, options: CreateProviderOptions): Provider {
  const parsed = ProviderConfig.safeParse(config);
  if (!parsed.success) throw new StartupError(`Invalid model configuration: ${formatZodError(parsed.error)}`);
  const resolved = resolveProviderConfig(parsed.data, { env: options.env });
  if (!resolved.ok) throw new StartupError(resolved.message, resolved.code);
  return buildProvider(resolved.provider, options);
}

/** The provider of resolved settings; the key comes from the environment variable they name. */
export function buildProvider(
  settings: ProviderSettings,
  { env, models = BUILT_IN_MODELS, warn, today = new Date().toISOString().slice(0, 10), ...http }:
    CreateProviderOptions,
): Provider {
  const { kind, effort } = settings;
  // The table says how the model is called; a retired one stops here, before any request, naming its replacement.
  const resolved = resolveModel(models, kind, settings.model);
  const { entry, id: model } = resolved;
  const retired = retirementOf(resolved, { today });
  if (retired) throw new StartupError(retired, "model_retired");
  // Within 30 days of an announced shutdown: one warning with the date and the replacement.
  const shutdown = retirementWarningOf(resolved, { today });
  if (shutdown) warn?.(shutdown);
  // Through a kind that routes (OpenRouter), the model routed to ("anthropic/claude-sonnet-5-5") says how it caches.
  const routed = routedEntry(models, { provider: kind, id: settings.model });
  // A local server's model ids are the user's own (qwen2.5-coder:7b, …): its defaults are the server's, not a guess.
  if (!resolved.known && !routed && !PROVIDER_KINDS[kind].unknownModel.local) {
    warn?.(unknownModelWarning(resolved));
  }
  checkSetting(resolved, "effort", effort, entry.effort);
  checkSetting(resolved, "thinking", settings.thinking, entry.thinking);
  // Rules over more than one setting (the table's data): a refused combination stops here, before the first call.
  const ruled = applyRules(resolved, { effort, thinking: settings.thinking });
  if (ruled.refusal) throw new StartupError(ruled.refusal, "invalid_model_setting");
  const thinking = ruled.thinking;
  if (thinking !== undefined && !PROVIDER_KINDS[kind].takes.thinking) {
    const kinds = ModelProvider.options.filter((k) => PROVIDER_KINDS[k].takes.thinking).map((k) => `"${k}"`);
    throw new StartupError(`Model "${model}": thinking applies only to kind ${kinds.join(" or ")}, not "${kind}"`);
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
  // The caller's limits (flags such as --provider-deadline-ms) are already above the configuration's in the settings.
  // The defaults are a local server's ten minutes for the local kinds (resolveSettings), and for a local model the
  // table names under another kind.
  const local = entry.local === true;
  const limit = (setting: { value: number | null; source: string | null }) =>
    setting.source === "default" && local ? Math.max(setting.value ?? 0, LOCAL_TIMEOUT_MS) : setting.value ?? undefined;
  http.timeoutMs ??= limit(settings.provider_idle_timeout_ms);
  http.deadlineMs ??= limit(settings.provider_deadline_ms);
  http.maxResponseBytes ??= settings.max_response_bytes;
  const keyEnv = settings.api_key_env.value;
  const apiKey = keyEnv ? env[keyEnv]?.trim() || null : null;
  holdKeys([apiKey]); // redacted from everything Loom prints or writes (held-keys.ts)
  if (keyEnv && !apiKey) {
    throw new StartupError(
      `Model "${model}" (${kind}) needs an API key: set the environment variable ${keyEnv}`,
      "missing_credential",
    );
  }
  return adapterOf(kind)({ settings, entry, routed, model, apiKey, keyEnv, thinking }, http);
}

/** What an adapter is built from: the resolved settings, the model's entry and the key read from its variable. */
type AdapterInput = {
  settings: ProviderSettings;
  entry: ModelEntry;
  /** Through OpenRouter: the model routed to, when the table knows it. */
  routed: ReturnType<typeof routedEntry>;
  model: string;
  apiKey: string | null;
  keyEnv: string | null;
  thinking: ThinkingType | undefined;
};

type Adapter = (input: AdapterInput, http: HttpOptions) => Provider;

/**
 * The Chat Completions adapter of a kind that speaks it (OpenAI's own, a local server, OpenRouter, any kind whose
 * PROVIDER_KINDS entry has `chat`), as its facts say, with the code its folder adds (an automatic cache's layout, cache
 * markers), if any.
 */
const chatCompletions =
  (kind: ModelProvider, hooks: ChatCompletionsHooks = {}): Adapter =>
  ({ settings, entry, routed, model, apiKey, keyEnv }, http) => {
    const chat = PROVIDER_KINDS[kind].chat;
    if (chat === null) throw new Error(`${kind} does not speak Chat Completions`);
    return createOpenAIProvider({
      name: settings.kind,
      chat: {
        serverName: (base) => chat.serverName.replaceAll("{base}", base),
        maxTokensField: chat.maxTokensField,
        automaticCache: hooks.automaticCache ?? null,
        markCache: hooks.markCache ?? null,
      },
      apiKey,
      keyEnv,
      baseUrl: settings.base_url.value,
      model,
      maxTokens: settings.max_tokens,
      effort: settings.effort,
      cacheMarkers: routed?.entry.cache?.breakpoints === "explicit",
      local: entry.local === true,
      // A configured response_format (openai-compatible servers) wins over the table's mode.
      responseFormat: settings.response_format ?? ANSWER_MODES["chat-completions"][entry.structured_output],
    }, http);
  };

/**
 * The adapters of the kinds with code of their own, built from resolved settings: every kind with an API of its own
 * (its PROVIDER_KINDS `chat` is null; tsc asks for its entry here) and the Chat Completions kinds whose folders add code.
 * A kind not listed speaks Chat Completions as its PROVIDER_KINDS entry says, and needs nothing here.
 */
const OWN_ADAPTERS: Record<OwnApiKind, Adapter> & Partial<Record<ModelProvider, Adapter>> = {
  anthropic: ({ settings, entry, model, apiKey, keyEnv, thinking }, http) => {
    if (keyEnv === null || apiKey === null) throw new Error("anthropic has a default key variable");
    return createAnthropicProvider(
      {
        apiKey,
        keyEnv,
        baseUrl: settings.base_url.value,
        model,
        maxTokens: settings.max_tokens ??
          Math.min(
            entry.thinking.includes("adaptive") ? ADAPTIVE_THINKING_MAX_TOKENS : DEFAULT_ANTHROPIC_MAX_TOKENS,
            entry.max_output,
          ),
        cacheTtl: settings.cache_ttl,
        // The model's minimum cacheable prompt, for the run report's cache explanation (the model table's).
        ...(entry.cache ? { minCacheTokens: entry.cache.min_tokens } : {}),
        structuredOutput: entry.structured_output,
        effort: settings.effort,
        thinking,
      },
      http,
    );
  },
  openai: (input, http) =>
    input.entry.api === "responses"
      ? createOpenAIResponsesProvider({
        apiKey: input.apiKey,
        keyEnv: input.keyEnv,
        baseUrl: input.settings.base_url.value,
        model: input.model,
        maxTokens: input.settings.max_tokens,
        effort: input.settings.effort,
        explicitCache: input.entry.cache?.breakpoints === "explicit_or_automatic",
      }, http)
      : chatCompletions("openai", OPENAI_CHAT_HOOKS)(input, http),
  ollama: ({ settings, model, apiKey, keyEnv }, http) =>
    createOllamaProvider(
      { apiKey, keyEnv, baseUrl: settings.base_url.value, model, maxTokens: settings.max_tokens },
      http,
    ),
  openrouter: chatCompletions("openrouter", OPENROUTER_CHAT_HOOKS),
};

/** A kind's adapter: its own, else the Chat Completions one its facts describe. */
function adapterOf(kind: ModelProvider): Adapter {
  return OWN_ADAPTERS[kind] ?? chatCompletions(kind);
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
