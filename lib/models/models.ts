// Models are data (SPEC §9): what each model id is, how it is called and what it costs, from a shipped, dated table
// (lib/models/built-in.ts) that a user's models file overrides or adds to (`loom schema models`). Capabilities come
// from here and never from the shape of an id: an adapter asks `resolveModel` and sends what the entry says.
import { z } from "zod";
import { escapeControl } from "../text/safe-text.ts";
import {
  formatModelRef,
  ModelApi,
  ModelProvider,
  type ModelRef,
  modelRefText,
  parseModelRef,
  PROVIDER_KINDS,
} from "./provider-kinds.ts";
import { priceCuts } from "./price-floor.ts";

/** Anthropic thinking settings Loom can send (manual thinking, which needs a token budget, is not one). */
export const ThinkingType = z.enum(["adaptive", "disabled", "between_tools"]);
export type ThinkingType = z.infer<typeof ThinkingType>;

/** The format version of a models file; a change that old files cannot be read under bumps it. */
export const MODELS_FORMAT = 1;

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
/** A list price is above zero: a zero rate makes a run's cost zero, and --max-cost would never stop it. */
const Rate = z.number().positive().max(MAX_RATE);

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
  long_prompt: z.strictObject({
    above_tokens: z.number().int().positive().describe(
      "A call whose prompt (uncached input, cache reads and cache writes) is longer than this is billed at the tier",
    ),
    input: z.number().positive().describe("Multiplier of every input rate (uncached, cache reads and writes)"),
    output: z.number().positive().describe("Multiplier of the output rate"),
  }).optional().describe(
    "A long-prompt price tier: the whole call billed at multiples of the rates above (OpenAI GPT-5.6 and GPT-6 " +
      "over 272K tokens: 2x input, 1.5x output; Claude Haiku 5.5 over 100K tokens: 5x)",
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

/** A setting of a run that a rule looks at; `forced_tool` is true when the model answers through a forced tool. */
const RuleWhen = z.strictObject({
  effort: z.array(z.string().min(1)).optional().describe("Effort values the rule applies to"),
  thinking: z.array(z.string().min(1)).optional().describe(
    'Thinking values the rule applies to; "unset" matches a run that sets none',
  ),
  forced_tool: z.boolean().optional().describe("true: applies when the model answers through a forced tool"),
}).describe("The settings the rule applies to: every one named must match");

const ModelRule = z.strictObject({
  when: RuleWhen,
  action: z.enum(["refuse", "send_thinking_disabled"]).describe(
    "refuse: stop before the first call; send_thinking_disabled: send thinking {type: disabled} in its place",
  ),
  reason: z.string().min(1).describe("What the provider does with the combination, in a few words"),
  source: z.string().min(1).describe("Where the rule was read (a URL)"),
}).describe("A rule that involves more than one setting, checked before the first call");
export type ModelRule = z.infer<typeof ModelRule>;

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
  local: z.boolean().optional().describe(
    "A model on a local server (openai-compatible, ollama): its context window and prompt cache are read from the " +
      "server at run time (/props, /v1/models); never a price: cost is tokens and seconds",
  ),
  retired: z.strictObject({
    date: Date.describe("When requests started failing (or will: a future date is a deprecation)"),
    replacement: z.string().min(1).describe("The model id to use instead, without the provider"),
  }).nullable().describe("null: not retired or deprecated"),
  rules: z.array(ModelRule).optional().describe("Combinations of settings the provider refuses or that need care"),
  source: z.string().min(1).describe("Where these facts were read (a URL; several separated by spaces)"),
  date: Date.describe("When they were read"),
  notes: z.string().min(1).optional().describe(
    "Which figures only third parties give, or were carried over from a sibling model, and why",
  ),
}).describe("One model: how Loom calls it, its limits, its cache and its prices");
export type ModelEntry = z.infer<typeof ModelEntry>;

const ModelKey = modelRefText();

export const ModelTable = z.strictObject({
  $schema: z.string().optional().describe("JSON Schema of this file (loom schema models); ignored by Loom"),
  format: z.literal(MODELS_FORMAT).describe("The models file format version"),
  currency: z.literal("USD").describe("Every price is in US dollars"),
  models: z.record(ModelKey, ModelEntry).describe('Models by "PROVIDER/MODEL" as loom run --model names them'),
  updated: Date.optional().describe(
    "When the table as a whole was last checked; loom models update takes only a table newer than the one in use " +
      "and not dated after today",
  ),
  families: z.record(modelRefText("PREFIX"), ModelKey).optional().describe(
    'Id prefixes the table knows the family of ("anthropic/claude-" → "anthropic/claude-sonnet-5-5"): an unknown ' +
      "id with the prefix takes that entry's API, answer mode, limits and cache rules, no price and no effort",
  ),
}).describe("A Loom models file (loom run --models FILE): entries replace or add to the built-in table");
export type ModelTable = z.infer<typeof ModelTable>;

/** A model id the table resolved: its entry (or the conservative defaults), and the id the API is sent. */
export type ResolvedModel = {
  key: string;
  provider: ModelProvider;
  /** The id sent to the API: the entry's own, also when the caller named an alias. */
  id: string;
  entry: ModelEntry;
  /** false: the table does not know the id and `entry` is the conservative default or its family's. */
  known: boolean;
  /** The entry an unknown id was run like ("anthropic/claude-sonnet-5-5"), when the table knows its family. */
  assumed?: string;
};

/**
 * What an id the table does not know is run with: nothing that a model could reject — how its kind calls an unknown
 * model (PROVIDER_KINDS' unknownModel: API, answer mode, cache, local), no effort, no thinking setting, no price.
 */
function defaultEntry(provider: ModelProvider): ModelEntry {
  const { local, ...calling } = PROVIDER_KINDS[provider].unknownModel;
  return {
    ...calling,
    context_window: 128_000,
    max_output: 8_192,
    prices: null,
    effort: [],
    thinking: [],
    ...(local ? { local: true } : {}),
    retired: null,
    source: "Loom's conservative defaults for a model its table does not list",
    date: "2026-12-01",
  };
}

/** How an overlay (a --models file, an installed update) is checked against the table under it. */
export type OverlayOptions = {
  /** Today as YYYY-MM-DD (the caller's clock): a table or entry dated later is refused. */
  today: string;
  /** Prices below the table's are accepted (and listed in `lowered`): the user said so on the command line. */
  acceptLowerPrices?: boolean;
  /** The flag that accepts lower prices, named in the refusal; absent: lower prices are never accepted. */
  lowerPricesFlag?: string;
};

/**
 * Why a models file may not be merged into `base` (one line naming the field), or null; and the prices it lowers when
 * the caller accepts that ("openai/gpt-5.6-luna: input 0.2 → 0.15"). The floor Loom states, for a --models file and an
 * installed update alike, since either is data someone else may have written:
 * - a model `base` prices keeps a price (never null, never zero), and no rate goes below `base`'s unless the user's
 *   flag accepts it (--max-cost and the reported cost rest on them);
 * - a retirement `base` knows is never undone or postponed (a retired model would be sent requests again);
 * - no alias takes an id `base` already resolves to another model (it would reroute that model's calls);
 * - no date is in the future (a table dated 9999-12-31 would outrank every later table and binary).
 * An entry keyed by one of `base`'s aliases ("openai/gpt-5.6") is held to the floor of the model the alias names.
 */
export function overrideProblem(
  base: ModelTable,
  override: ModelTable,
  { today, acceptLowerPrices = false, lowerPricesFlag }: OverlayOptions,
): { problem: string | null; lowered: string[] } {
  const lowered: string[] = [];
  const refuse = (problem: string) => ({ problem, lowered });
  if (override.updated !== undefined && override.updated > today) {
    return refuse(`updated ${override.updated} is in the future (today is ${today}); a table is dated when checked`);
  }
  for (const [key, entry] of Object.entries(override.models)) {
    const field = `models[${JSON.stringify(key)}]`;
    if (entry.date > today) return refuse(`${field}.date ${entry.date} is in the future (today is ${today})`);
    const ref = parseModelRef(key);
    if (ref === null) continue; // the key's schema names a kind: never here
    const known = resolveModel(base, ref.provider, ref.id);
    const listed = known.known ? known.entry : undefined;
    const floor = listed?.prices;
    if (floor) {
      if (entry.prices === null) return refuse(`${field}.prices is null, but Loom's table prices it`);
      // Every price-shaped field: the rates, each write lifetime, the long-prompt tier (price-floor.ts).
      const cuts = priceCuts(floor, entry.prices);
      const [first] = cuts;
      if (first !== undefined && !acceptLowerPrices) {
        return refuse(
          `${field}.prices.${first.refusal} (the cost and --max-cost rest on it; ${
            lowerPricesFlag
              ? `${lowerPricesFlag} accepts a lower price`
              : "a models file may raise prices, not lower them"
          })`,
        );
      }
      lowered.push(...cuts.map((cut) => `${key}: ${cut.change}`));
    }
    const retired = listed?.retired;
    if (retired && (entry.retired === null || entry.retired.date > retired.date)) {
      return refuse(
        `${field}.retired ${
          entry.retired === null ? "is null" : `is ${entry.retired.date}`
        }, but Loom's table retires it on ${retired.date} (a known retirement is never undone or postponed by data)`,
      );
    }
    for (const alias of entry.aliases ?? []) {
      const other = resolveModel(base, ref.provider, alias);
      if (other.known && other.key !== known.key) {
        return refuse(
          `${field}.aliases names ${JSON.stringify(alias)}, which is ${JSON.stringify(other.key)} in Loom's table: ` +
            "it would reroute that model's calls; name the entry itself",
        );
      }
    }
  }
  return { problem: null, lowered };
}

/**
 * The table with `override`'s entries replacing or adding to `base`'s. An entry that replaces one keeps that one's
 * aliases besides its own: dropping "gpt-5.6" from GPT-5.6 Sol's entry would make the alias an unknown id, run with
 * no price (and no --max-cost).
 */
export function mergeModels(base: ModelTable, override: ModelTable | null): ModelTable {
  if (!override) return base;
  const families = { ...base.families, ...override.families };
  const models = { ...base.models };
  for (const [key, entry] of Object.entries(override.models)) {
    const under = Object.hasOwn(base.models, key) ? base.models[key]?.aliases ?? [] : [];
    const aliases = [...new Set([...under, ...(entry.aliases ?? [])])];
    models[key] = under.length > 0 ? { ...entry, aliases } : entry;
  }
  return {
    ...base,
    models,
    ...(Object.keys(families).length > 0 ? { families } : {}),
  };
}

/** The entry of "PROVIDER/MODEL" (or an alias of one), with the id to send; unknown ids get the defaults. */
export function resolveModel(table: ModelTable, provider: ModelProvider, id: string): ResolvedModel {
  const key = formatModelRef({ provider, id });
  const exact = Object.hasOwn(table.models, key) ? table.models[key] : undefined;
  if (exact !== undefined) return { key, provider, id, entry: exact, known: true };
  for (const [other, entry] of Object.entries(table.models)) {
    const ref = entry.aliases?.includes(id) ? parseModelRef(other) : null;
    if (ref?.provider === provider) return { key: other, provider, id: ref.id, entry, known: true };
  }
  const family = familyOf(table, key);
  if (family) return { key, provider, id, entry: family.entry, known: false, assumed: family.key };
  return { key, provider, id, entry: defaultEntry(provider), known: false };
}

/**
 * The entry an unknown "PROVIDER/ID" runs like: the table's family with the longest matching prefix, taken for how the
 * model is called (API, answer mode, limits, cache rules) but with no price, no effort and no thinking setting, which
 * are the model's own. null when no family matches.
 */
function familyOf(table: ModelTable, key: string): { key: string; entry: ModelEntry } | null {
  const prefixes = Object.keys(table.families ?? {}).filter((prefix) => key.startsWith(prefix));
  const prefix = prefixes.sort((a, b) => b.length - a.length)[0];
  const like = prefix === undefined ? undefined : table.families?.[prefix];
  const entry = like === undefined ? undefined : table.models[like];
  if (like === undefined || entry === undefined) return null;
  return {
    key: like,
    entry: {
      ...entry,
      prices: null,
      effort: [],
      thinking: [],
      aliases: [],
      retired: null,
      rules: [],
      source: `the family of ${like} (${entry.source})`,
    },
  };
}

/** "claude-sonnet-4-5 was retired on 2026-09-29; use claude-sonnet-5-5", or null while the model is in service. */
export function retirementOf(model: ResolvedModel, { today }: { today: string }): string | null {
  const retired = model.entry.retired;
  if (!retired || retired.date > today) return null;
  return escapeControl(`${model.id} was retired on ${retired.date}; use ${retired.replacement}`);
}

/** How long before an announced shutdown a run warns. */
const RETIREMENT_WARNING_DAYS = 30;

/**
 * The one warning of a run on a model whose announced shutdown is at most 30 days away ("gpt-5 shuts down on
 * 2026-12-11 (in 8 days); use gpt-6.1-sol"), or null.
 */
export function retirementWarningOf(model: ResolvedModel, { today }: { today: string }): string | null {
  const retired = model.entry.retired;
  if (!retired || retired.date <= today) return null;
  const days = dayNumber(retired.date) - dayNumber(today);
  if (!(days <= RETIREMENT_WARNING_DAYS)) return null;
  // A models file's replacement is its author's text: written with its control characters as escapes.
  return escapeControl(
    `model ${JSON.stringify(model.key)} shuts down on ${retired.date} (in ${days} day${days === 1 ? "" : "s"}); ` +
      `use ${retired.replacement}`,
  );
}

/** Days since 1970-01-01 of a YYYY-MM-DD date (proleptic Gregorian; pure arithmetic, no clock). */
function dayNumber(date: string): number {
  const [y0 = 0, m = 1, d = 1] = date.split("-").map(Number);
  const y = m <= 2 ? y0 - 1 : y0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

/** The settings of a run that rules look at. */
export type RuleSettings = { effort?: string | undefined; thinking?: ThinkingType | undefined };

/**
 * What the model's rules make of a run's settings: a one-line refusal naming the model, both settings and the source,
 * or the thinking setting to send in place of the run's (a forced tool with thinking left to the model's default).
 */
export function applyRules(
  model: ResolvedModel,
  settings: RuleSettings,
): { refusal: string | null; thinking: ThinkingType | undefined } {
  let thinking = settings.thinking;
  for (const rule of model.entry.rules ?? []) {
    if (!ruleMatches(rule, model.entry, settings)) continue;
    if (rule.action === "send_thinking_disabled") {
      thinking = "disabled";
      continue;
    }
    const named = [
      rule.when.thinking ? `thinking ${JSON.stringify(settings.thinking ?? "unset")}` : null,
      rule.when.effort ? `effort ${JSON.stringify(settings.effort)}` : null,
      rule.when.forced_tool ? "a forced tool" : null,
    ].filter((part) => part !== null);
    return {
      refusal: `Model "${model.key}": ${named.join(" with ")} is refused by the API (${rule.reason}; ${rule.source})`,
      thinking,
    };
  }
  return { refusal: null, thinking };
}

function ruleMatches(rule: ModelRule, entry: ModelEntry, settings: RuleSettings): boolean {
  const { effort, thinking, forced_tool } = rule.when;
  if (effort && (settings.effort === undefined || !effort.includes(settings.effort))) return false;
  if (thinking && !thinking.includes(settings.thinking ?? "unset")) return false;
  if (forced_tool !== undefined && forced_tool !== (entry.structured_output === "forced_tool")) return false;
  return true;
}

/** The one warning an id the table does not know gets: what it runs with, and how to describe it. */
export function unknownModelWarning(model: ResolvedModel): string {
  const { api, structured_output } = model.entry;
  const how = model.assumed
    ? `running it like ${JSON.stringify(model.assumed)}, its family (${api}, ${structured_output}, price unknown)`
    : `running it with conservative defaults (${api}, ${structured_output}, price unknown)`;
  return escapeControl(
    `model ${JSON.stringify(model.key)} is not in Loom's model table: ${how}; describe it in a models file ` +
      "(loom schema models) and pass --models FILE",
  );
}

/**
 * The prompt-cache facts of a model, for placing breakpoints and explaining misses: the minimum cacheable prefix in
 * tokens, the lifetimes it accepts (default first) and whether marks are explicit. null: no prompt cache.
 */
export function cacheRulesOf(table: ModelTable, model: string): CacheRules | null {
  const ref = parseModelRef(model);
  return ref === null ? null : resolveModel(table, ref.provider, ref.id).entry.cache;
}

/**
 * What the table says of a model reached through a kind that routes to others' models (PROVIDER_KINDS' `routes`:
 * OpenRouter): the entry of its own "KIND/ID" when the table lists one, else that of the model it routes to, since
 * such ids are "AUTHOR/MODEL" and for the providers Loom knows those are the table's own keys
 * ("anthropic/claude-sonnet-5-5"). A Claude model's entry says its cache breakpoints are explicit, and that is what
 * makes Loom send the markers. null when the kind does not route, or the table knows neither.
 */
export function routedEntry(table: ModelTable, { provider, id }: ModelRef): ResolvedModel | null {
  if (!PROVIDER_KINDS[provider].routes) return null;
  const own = resolveModel(table, provider, id);
  if (own.known) return own;
  const ref = parseModelRef(id);
  if (ref === null || PROVIDER_KINDS[ref.provider].routes) return null;
  const routed = resolveModel(table, ref.provider, ref.id);
  return routed.known ? routed : null;
}
