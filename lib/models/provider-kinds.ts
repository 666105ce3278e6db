// The provider kinds, one entry each: everything Loom knows of a kind that is not a model's (the model table holds
// those). Settings, the model table's defaults for an unknown id, doctor and the run read a kind's facts here and
// nowhere else, and `PROVIDER_KINDS` covers the enum, so a kind added to ModelProvider without its entry is a type
// error (tests/provider-registry.test.ts). A kind that speaks Chat Completions as its facts here say (a local server,
// Groq, …) is this entry and its models alone; a kind with code of its own (an API of its own, a cache it marks or
// lays out) has its folder under lib/providers/, and its adapter in lib/run/create-provider.ts's OWN_ADAPTERS, which
// tsc makes list every kind whose `chat` is null. Here too the one grammar of "PROVIDER/MODEL" (parseModelRef,
// formatModelRef, modelRefText). Adding a provider: docs/architecture.md, "Adding a provider".
import { z } from "zod";

/**
 * The provider kinds: the two vendors' APIs, an OpenAI-compatible server, Ollama's native API and OpenRouter
 * (docs/providers.md). A local server's model ids are the user's own, so they are rarely in the table.
 */
export const ModelProvider = z.enum(["anthropic", "openai", "openai-compatible", "ollama", "openrouter"]);
export type ModelProvider = z.infer<typeof ModelProvider>;

/** Which HTTP API the adapter calls. */
export const ModelApi = z.enum(["messages", "chat-completions", "responses"]);
export type ModelApi = z.infer<typeof ModelApi>;

/** One kind's facts. */
type ProviderKindFacts = {
  /** The API's base URL when nothing else names one. */
  baseUrl: string;
  /** The environment variable that overrides the base URL (a configured base_url still wins); null: none. */
  baseUrlEnv: string | null;
  /** Where the key comes from when the config names no variable; null: no key needed. */
  keyEnv: string | null;
  /** What a key variable of this kind looks like: a file's api_key_env must match it (or be allowed). */
  keyName: RegExp;
  /** keyName in words, for the refusal. */
  keyShape: string;
  /**
   * The model settings only some kinds take (a catalog entry naming one for another kind is refused; thinking, from a
   * flag or the table's rules, stops the run before any call).
   */
  takes: { response_format: boolean; cache_ttl: boolean; thinking: boolean };
  /**
   * Its ids are other kinds' "PROVIDER/MODEL" (OpenRouter's "anthropic/claude-sonnet-5-5"): an id the table does not
   * list under this kind is run with what it says of the model routed to (lib/models/models.ts, routedEntry).
   */
  routes: boolean;
  /**
   * What it says of Chat Completions, when it speaks that API: its name in errors (`{base}` stands for its base URL,
   * without trailing slashes) and the output cap's field (OpenAI's reasoning models reject max_tokens; other servers
   * know only max_tokens). null: it speaks an API of its own, so its folder's adapter is an OWN_ADAPTERS entry.
   */
  chat: { serverName: string; maxTokensField: "max_tokens" | "max_completion_tokens" } | null;
  /**
   * What an id the table does not list is run with (lib/models/models.ts, defaultEntry): nothing a model could
   * reject. `local`: a local server's model, whose context and cache are the server's, read at run time.
   */
  unknownModel: {
    api: ModelApi;
    structured_output: "prompt" | "json_schema";
    cache: { min_tokens: number; ttls: ("5m" | "1h" | "in_memory")[]; breakpoints: "explicit" | "automatic" } | null;
    local: boolean;
  };
};

/** Chat Completions with the strict JSON-schema response format, as Loom always sent an OpenAI-style server. */
const CHAT = { api: "chat-completions", structured_output: "json_schema" } as const;

/** The facts as written, each kind's own type (which kinds speak an API of their own); read them as PROVIDER_KINDS. */
const KINDS = {
  anthropic: {
    baseUrl: "https://api.anthropic.com",
    baseUrlEnv: "ANTHROPIC_BASE_URL",
    keyEnv: "ANTHROPIC_API_KEY",
    keyName: /^[A-Z0-9_]*ANTHROPIC[A-Z0-9_]*_API_KEY$/,
    keyShape: "a name with ANTHROPIC ending in _API_KEY",
    takes: { response_format: false, cache_ttl: true, thinking: true },
    routes: false,
    chat: null,
    // The schema in the prompt (a forced tool is rejected by the 5.5 models, output_config.format by older ones), the
    // largest minimum cacheable prompt (4,096 tokens).
    unknownModel: {
      api: "messages",
      structured_output: "prompt",
      cache: { min_tokens: 4_096, ttls: ["5m", "1h"], breakpoints: "explicit" },
      local: false,
    },
  },
  openai: {
    baseUrl: "https://api.openai.com/v1",
    baseUrlEnv: "OPENAI_BASE_URL",
    keyEnv: "OPENAI_API_KEY",
    keyName: /^[A-Z0-9_]*OPENAI[A-Z0-9_]*_API_KEY$/,
    keyShape: "a name with OPENAI ending in _API_KEY",
    takes: { response_format: false, cache_ttl: false, thinking: false },
    routes: false,
    chat: { serverName: "OpenAI API", maxTokensField: "max_completion_tokens" },
    unknownModel: {
      ...CHAT,
      cache: { min_tokens: 1_024, ttls: ["in_memory"], breakpoints: "automatic" },
      local: false,
    },
  },
  "openai-compatible": {
    baseUrl: "http://127.0.0.1:11434/v1",
    baseUrlEnv: null,
    keyEnv: null,
    keyName: /^[A-Z][A-Z0-9_]*_API_KEY$/,
    keyShape: "a name ending in _API_KEY",
    takes: { response_format: true, cache_ttl: false, thinking: false },
    routes: false,
    chat: { serverName: "OpenAI-compatible server at {base}", maxTokensField: "max_tokens" },
    unknownModel: { ...CHAT, cache: null, local: true },
  },
  ollama: {
    // Ollama's native API has no /v1 (ollama docs/api.md, read 2026-12-01).
    baseUrl: "http://127.0.0.1:11434",
    baseUrlEnv: null,
    keyEnv: null,
    keyName: /^[A-Z][A-Z0-9_]*_API_KEY$/,
    keyShape: "a name ending in _API_KEY",
    takes: { response_format: false, cache_ttl: false, thinking: false },
    routes: false,
    chat: null,
    unknownModel: { ...CHAT, cache: null, local: true },
  },
  openrouter: {
    // https://openrouter.ai/docs/quickstart (read 2026-12-01): the OpenAI-compatible base.
    baseUrl: "https://openrouter.ai/api/v1",
    baseUrlEnv: null,
    keyEnv: "OPENROUTER_API_KEY",
    keyName: /^[A-Z0-9_]*OPENROUTER[A-Z0-9_]*_API_KEY$/,
    keyShape: "a name with OPENROUTER ending in _API_KEY",
    takes: { response_format: false, cache_ttl: false, thinking: false },
    routes: true,
    chat: { serverName: "OpenRouter API", maxTokensField: "max_tokens" },
    unknownModel: { ...CHAT, cache: null, local: false },
  },
} satisfies Record<ModelProvider, ProviderKindFacts>;

export const PROVIDER_KINDS: Record<ModelProvider, ProviderKindFacts> = KINDS;

/** The kinds with an API of their own (`chat: null`): each needs its folder's adapter (create-provider.ts). */
export type OwnApiKind = {
  [K in ModelProvider]: K extends keyof typeof KINDS ? (typeof KINDS)[K]["chat"] extends null ? K : never : never;
}[ModelProvider];

/** A model as a slice names it ("PROVIDER/MODEL"), parsed: its kind, and the id that kind's API knows. */
export type ModelRef = { provider: ModelProvider; id: string };

/**
 * The grammar of "PROVIDER/MODEL", the one there is: a kind, a slash, and the id that kind's API knows, without
 * whitespace. An id may hold slashes of its own (OpenRouter's "anthropic/claude-sonnet-5-5"): only the first one
 * separates the kind.
 */
const MODEL_REF = new RegExp(`^(${ModelProvider.options.join("|")})/(\\S+)$`);

/** What a "PROVIDER/MODEL" that names no kind was expected to be, for a run's refusal of one. */
export const MODEL_REF_EXPECTED = `PROVIDER/MODEL with PROVIDER one of ${ModelProvider.options.join(", ")}`;

/** "PROVIDER/MODEL" as a ModelRef, or null when it names no known kind: the one place a model name is split. */
export function parseModelRef(model: string): ModelRef | null {
  const match = MODEL_REF.exec(model);
  const provider = ModelProvider.safeParse(match?.[1]);
  return match && provider.success ? { provider: provider.data, id: match[2] ?? "" } : null;
}

/** A ModelRef as "PROVIDER/MODEL": the one place a model name is joined. */
export function formatModelRef({ provider, id }: ModelRef): string {
  return `${provider}/${id}`;
}

/**
 * A "PROVIDER/MODEL" in a file Loom reads (a config, a models or prices file): the same grammar, as a schema (`what`:
 * the word after the slash its refusal names, "PREFIX" for a models file's families).
 */
export function modelRefText(what = "MODEL"): z.ZodString {
  return z.string().regex(MODEL_REF, `expected PROVIDER/${what}`);
}
