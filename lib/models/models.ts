// Models are data (SPEC §9): what each model id is, how it is called and what it costs, from a shipped, dated table
// (lib/models/built-in.ts) that a user's models file overrides or adds to (`loom schema models`). Capabilities come
// from here and never from the shape of an id: an adapter asks `resolveModel` and sends what the entry says.
import { z } from "zod";
import { escapeControl } from "../text/safe-text.ts";

/** Anthropic thinking settings Loom can send (manual thinking, which needs a token budget, is not one). */
export const ThinkingType = z.enum(["adaptive", "disabled", "between_tools"]);
export type ThinkingType = z.infer<typeof ThinkingType>;

/** The format version of a models file; a change that old files cannot be read under bumps it. */
export const MODELS_FORMAT = 1;

/**
 * The provider kinds: the two vendors' APIs, an OpenAI-compatible server, Ollama's native API and OpenRouter
 * (docs/providers.md). A local server's model ids are the user's own, so they are rarely in the table.
 */
export const ModelProvider = z.enum(["anthropic", "openai", "openai-compatible", "ollama", "openrouter"]);
export type ModelProvider = z.infer<typeof ModelProvider>;

/** Which HTTP API the adapter calls. */
const ModelApi = z.enum(["messages", "chat-completions", "responses"]);
export type ModelApi = z.infer<typeof ModelApi>;

/** How a structured answer is obtained; Loom validates every answer itself whichever it is. */
export const StructuredOutput = z.enum([
  "output_config_format",
  "forced_tool",
  "strict_tool",
  "json_schema",
  "json_object",
  "prompt",
]).describe(
  "output_config_format: Anthropic's output_config.format (JSON schema); forced_tool: one tool and tool_choice " +
    "naming it; strict_tool: a strict tool the model may call (no forcing); json_schema: OpenAI's strict JSON-schema " +
    "response format (text.format on Responses, response_format on Chat Completions); json_object: JSON mode, the " +
    "schema shown in the prompt; prompt: no constraint, the schema shown in the prompt",
);
export type StructuredOutput = z.infer<typeof StructuredOutput>;

const Date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "expected YYYY-MM-DD");
/**
 * No list price is higher than this (USD per million tokens): a models file's 1.7e308 is a typo or an attack, and
 * would make every cost overflow to Infinity.
 */
const MAX_RATE = 10_000;
const Rate = z.number().nonnegative().max(MAX_RATE);

const ModelPrices = z.strictObject({
  input: Rate.describe("USD per million uncached input tokens"),
  output: Rate.describe("USD per million output tokens (reasoning included)"),
  cache_read: Rate.describe("USD per million input tokens read from the prompt cache"),
  cache_write_5m: Rate.optional().describe("USD per million tokens written to a 5-minute cache (Anthropic)"),
  cache_write_1h: Rate.optional().describe("USD per million tokens written to a 1-hour cache (Anthropic)"),
  cache_write: Rate.optional().describe(
    "USD per million tokens the provider bills for writing its own cache (OpenAI GPT-5.6 and later: 1.25x input); " +
      "absent: writes cost what uncached input costs",
  ),
}).describe("List prices in US dollars");
export type ModelPrices = z.infer<typeof ModelPrices>;

const CacheRules = z.strictObject({
  min_tokens: z.number().int().nonnegative().describe(
    "The shortest prompt prefix the provider caches, in tokens; a shorter prefix is never written",
  ),
  ttls: z.array(z.enum(["5m", "1h", "in_memory", "30m", "12h", "24h"])).describe(
    "Cache lifetimes the model accepts (in_memory: OpenAI's 5 to 10 minutes); the first is the default",
  ),
  breakpoints: z.enum(["explicit", "automatic", "explicit_or_automatic"]).describe(
    "explicit: the request marks where cached prefixes end (Anthropic cache_control); automatic: the provider " +
      "caches prefixes itself; explicit_or_automatic: automatic, and explicit marks are accepted (OpenAI " +
      "prompt_cache_breakpoint, GPT-5.6 and later)",
  ),
}).describe("How the model's prompt cache works");
export type CacheRules = z.infer<typeof CacheRules>;

export const ModelEntry = z.strictObject({
  api: ModelApi.describe("The API Loom calls: messages (Anthropic), chat-completions or responses (OpenAI)"),
  structured_output: StructuredOutput,
  context_window: z.number().int().positive().describe("Input and output tokens one call may hold"),
  max_output: z.number().int().positive().describe("The most output tokens one call may produce"),
  cache: CacheRules.nullable().describe("null: the model has no prompt cache"),
  prices: ModelPrices.nullable().describe("null: no published price; a run's cost is then null"),
  effort: z.array(z.string().min(1)).describe(
    "Effort values the model accepts (Anthropic output_config.effort, OpenAI reasoning effort); [] when none",
  ),
  thinking: z.array(z.string().min(1)).describe(
    "Anthropic thinking.type values the model accepts; [] when it takes no thinking setting",
  ),
  aliases: z.array(z.string().min(1)).optional().describe(
    "Other ids the provider documents for this model; Loom sends the entry's own id",
  ),
  retired: z.strictObject({
    date: Date.describe("When requests started failing (or will: a future date is a deprecation)"),
    replacement: z.string().min(1).describe("The model id to use instead, without the provider"),
  }).nullable().describe("null: not retired or deprecated"),
  source: z.string().min(1).describe("Where these facts were read (a URL; several separated by spaces)"),
  date: Date.describe("When they were read"),
}).describe("One model: how Loom calls it, its limits, its cache and its prices");
export type ModelEntry = z.infer<typeof ModelEntry>;

const ModelKey = z.string().regex(new RegExp(`^(${ModelProvider.options.join("|")})/.+$`), "expected PROVIDER/MODEL");

export const ModelTable = z.strictObject({
  $schema: z.string().optional().describe("JSON Schema of this file (loom schema models); ignored by Loom"),
  format: z.literal(MODELS_FORMAT).describe("The models file format version"),
  currency: z.literal("USD").describe("Every price is in US dollars"),
  models: z.record(ModelKey, ModelEntry).describe('Models by "PROVIDER/MODEL" as loom run --model names them'),
}).describe("A Loom models file (loom run --models FILE): entries replace or add to the built-in table");
export type ModelTable = z.infer<typeof ModelTable>;

/** A model id the table resolved: its entry (or the conservative defaults), and the id the API is sent. */
export type ResolvedModel = {
  key: string;
  provider: ModelProvider;
  /** The id sent to the API: the entry's own, also when the caller named an alias. */
  id: string;
  entry: ModelEntry;
  /** false: the table does not know the id and `entry` is the conservative default. */
  known: boolean;
};

/**
 * What an id the table does not know is run with: nothing that a model could reject. Anthropic: the schema in the
 * prompt (a forced tool is rejected by the 5.5 models, output_config.format by older ones), the largest minimum
 * cacheable prompt (4,096 tokens) and no effort; OpenAI and OpenAI-compatible servers: Chat Completions with the strict
 * JSON-schema response format, as Loom always sent them. No price.
 */
function defaultEntry(provider: ModelProvider): ModelEntry {
  const anthropic = provider === "anthropic";
  return {
    api: anthropic ? "messages" : "chat-completions",
    structured_output: anthropic ? "prompt" : "json_schema",
    context_window: 128_000,
    max_output: 8_192,
    cache: anthropic
      ? { min_tokens: 4_096, ttls: ["5m", "1h"], breakpoints: "explicit" }
      : provider === "openai"
      ? { min_tokens: 1_024, ttls: ["in_memory"], breakpoints: "automatic" }
      : null,
    prices: null,
    effort: [],
    thinking: [],
    retired: null,
    source: "Loom's conservative defaults for a model its table does not list",
    date: "2026-12-01",
  };
}

/**
 * Why a models file may not be merged into `base` (one line naming the field), or null. The floor Loom states: a model
 * `base` prices keeps at least those prices (a file may raise them, never lower them or drop them: --max-cost and the
 * reported cost rest on them); and no alias may take an id `base` already resolves to another model (it would reroute
 * that model's calls without a word).
 */
export function overrideProblem(base: ModelTable, override: ModelTable): string | null {
  for (const [key, entry] of Object.entries(override.models)) {
    const listed = Object.hasOwn(base.models, key) ? base.models[key] : undefined;
    const floor = listed?.prices;
    if (floor) {
      if (entry.prices === null) return `models[${JSON.stringify(key)}].prices is null, but Loom's table prices it`;
      for (const [rate, value] of Object.entries(floor) as [keyof ModelPrices, number | undefined][]) {
        const given = entry.prices[rate];
        if (value !== undefined && (given ?? 0) < value) {
          return `models[${JSON.stringify(key)}].prices.${rate} ${given ?? "(absent)"} is below Loom's list price ` +
            `${value} (a models file may raise prices, not lower them: the cost and --max-cost rest on them)`;
        }
      }
    }
    const provider = key.slice(0, key.indexOf("/")) as ModelProvider;
    for (const alias of entry.aliases ?? []) {
      const known = resolveModel(base, provider, alias);
      if (known.known && known.key !== key) {
        return `models[${JSON.stringify(key)}].aliases names ${JSON.stringify(alias)}, which is ` +
          `${JSON.stringify(known.key)} in Loom's table: it would reroute that model's calls; name the entry itself`;
      }
    }
  }
  return null;
}

/** The table with `override`'s entries replacing or adding to `base`'s. */
export function mergeModels(base: ModelTable, override: ModelTable | null): ModelTable {
  return override ? { ...base, models: { ...base.models, ...override.models } } : base;
}

/** The entry of "PROVIDER/MODEL" (or an alias of one), with the id to send; unknown ids get the defaults. */
export function resolveModel(table: ModelTable, provider: ModelProvider, id: string): ResolvedModel {
  const key = `${provider}/${id}`;
  const exact = Object.hasOwn(table.models, key) ? table.models[key] : undefined;
  if (exact !== undefined) return { key, provider, id, entry: exact, known: true };
  for (const [other, entry] of Object.entries(table.models)) {
    if (other.startsWith(`${provider}/`) && entry.aliases?.includes(id)) {
      return { key: other, provider, id: other.slice(provider.length + 1), entry, known: true };
    }
  }
  return { key, provider, id, entry: defaultEntry(provider), known: false };
}

/** "claude-sonnet-4-5 was retired on 2026-09-29; use claude-sonnet-5-5", or null while the model is in service. */
export function retirementOf(model: ResolvedModel, { today }: { today: string }): string | null {
  const retired = model.entry.retired;
  if (!retired || retired.date > today) return null;
  return escapeControl(`${model.id} was retired on ${retired.date}; use ${retired.replacement}`);
}

/** The one warning an id the table does not know gets: what it runs with, and how to describe it. */
export function unknownModelWarning(model: ResolvedModel): string {
  const { api, structured_output } = model.entry;
  return `model ${JSON.stringify(model.key)} is not in Loom's model table: running it with conservative defaults ` +
    `(${api}, ${structured_output}, no price); describe it in a models file (loom schema models) and pass ` +
    "--models FILE";
}

/**
 * The prompt-cache facts of a model, for placing breakpoints and explaining misses: the minimum cacheable prefix in
 * tokens, the lifetimes it accepts (default first) and whether marks are explicit. null: no prompt cache.
 */
export function cacheRulesOf(table: ModelTable, model: string): CacheRules | null {
  const slash = model.indexOf("/");
  const provider = ModelProvider.safeParse(model.slice(0, slash));
  if (slash === -1 || !provider.success) return null;
  return resolveModel(table, provider.data, model.slice(slash + 1)).entry.cache;
}
