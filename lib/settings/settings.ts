// Every run setting in one place: the user's defaults (a config file at $XDG_CONFIG_HOME/loom/config.jsonc, environment
// variables, flags) and what a catalog or a request file says, resolved by one precedence table (PRECEDENCE below),
// each value validated once and kept with its source, so `loom config` says exactly what a run would use and where
// each value came from. Pure: the environment and the files' contents are passed in.
import type { z } from "zod";
import { DEFAULT_MAX_STEPS } from "../policy.ts";
import { SandboxMode } from "../sandbox-state.ts";
import { StartupError } from "../errors.ts";
import { DEFAULT_DEADLINE_MS, DEFAULT_IDLE_TIMEOUT_MS, LOCAL_TIMEOUT_MS } from "../providers/call-options.ts";
import { HttpUrl, type ProviderConfig } from "./provider-config.ts";
import { ModelProvider, parseModelRef, PROVIDER_KINDS } from "../models/provider-kinds.ts";
import { withoutCredentials } from "../text/safe-text.ts";
import {
  type CatalogLevel,
  configShape,
  entryOf,
  type GenericKey,
  PRECEDENCE,
  projectShape,
  type RequestSettings,
  SETTING_KEYS,
  type SettingFlags,
  type SettingKey,
  SETTINGS,
  type Source,
  USER_ONLY_FIELDS,
  type ValueOf,
} from "./setting-table.ts";
import { z as zod } from "zod";

export { PRECEDENCE, USER_ONLY_FIELDS };
export type { RequestSettings, SettingFlags, Source };

export const UserConfig = zod.strictObject({
  $schema: zod.string().optional().describe("The JSON Schema of this file, for editors (loom schema config)"),
  ...configShape(),
}).describe("Loom's user configuration: defaults below the environment variables and the flags");
export type UserConfig = z.infer<typeof UserConfig>;

/**
 * A project's own settings (`.loom/config.jsonc`, found from the workspace upward): below the flags and the
 * environment, above the user's file. A project's file travels with the code it configures, so it is trusted no
 * further than that code: it can never say where requests and keys go (base URL, key variable), which model gets the
 * workspace, or lower the sandbox; its step limit may only lower the user's (docs/cli.md, "Config files").
 */
export const ProjectConfig = zod.strictObject({
  $schema: zod.string().optional().describe("The JSON Schema of this file, for editors"),
  ...projectShape(),
}).describe("A project's Loom settings (.loom/config.jsonc): limits and the context policy, nothing that widens a run");
export type ProjectConfig = z.infer<typeof ProjectConfig>;

/** A setting's value, its source and the flag, variable or file field it came from (null for a default). */
export type Setting<T> = { value: T; source: Source; from: string | null };
/** A setting nothing set and that has no default. */
export type Unset = { value: null; source: null; from: null };
const UNSET: Unset = { value: null, source: null, from: null };
export type SettingName = keyof typeof PRECEDENCE;

/** The flag a setting is given with, for its `from` ("--max-steps"). */
function flagName(key: keyof typeof SETTINGS): string | null {
  const flag = entryOf(key).flag;
  return flag === null ? null : `--${flag.name}`;
}

/** The settings a catalog gives: its defaults and, once a slice is chosen, that slice and its model. */
export type CatalogSettings = {
  /** The catalog file as the user named it, for messages. */
  file: string;
  defaults?: CatalogLevel;
  slice?: { name: string; entry: CatalogSliceEntry };
  /** The model entries by name (the slice's model, the classification model). */
  models?: Record<string, ProviderConfig>;
  /** Every slice by name, for a plan's catalog layer (each resolved as `slice` would be). */
  slices?: Record<string, CatalogSliceEntry>;
  /** The classification model's name in `models`, when the catalog routes by one. */
  classifier?: string;
};
type CatalogSliceEntry = CatalogLevel & { model: string; limits?: { max_steps: number } };

export type SettingsInput = {
  flags?: SettingFlags;
  env: Record<string, string | undefined>;
  userConfig?: { config: UserConfig; file: string };
  /** The project's `.loom/config.jsonc`, found from the workspace upward. */
  projectConfig?: { config: ProjectConfig; file: string };
  catalog?: CatalogSettings | null;
  request?: RequestSettings | null;
};

/** How one provider is reached: everything createProvider needs, resolved and checked. Never the key itself. */
export type ProviderSettings = {
  kind: ModelProvider;
  model: string;
  base_url: Setting<string>;
  /** The variable the key is read from; null: the provider needs none. */
  api_key_env: Setting<string | null>;
  provider_deadline_ms: Setting<number | null>;
  provider_idle_timeout_ms: Setting<number | null>;
  max_response_bytes: number | undefined;
  max_tokens: number | undefined;
  response_format: ProviderConfig["response_format"];
  cache_ttl: ProviderConfig["cache_ttl"];
  /** The request's (or the catalog entry's) effort and thinking; the model table checks them (createProvider). */
  effort: ProviderConfig["effort"];
  thinking: ProviderConfig["thinking"];
};

/** The settings of the generic rule: a value always when the setting has a default, else possibly unset. */
type GenericSettings = {
  [K in GenericKey]: (typeof SETTINGS)[K] extends { default: unknown } ? Setting<ValueOf<K>>
    : Setting<ValueOf<K>> | Unset;
};

export type RunSettings = GenericSettings & {
  /** "PROVIDER/MODEL" for a prompt or request; the catalog model's id for a catalog run. */
  model: Setting<string> | Unset;
  /** The mode test and command processes run under: the floor, raised by the slice's own mode. */
  sandbox: Setting<SandboxMode>;
  /** How the run's model is reached; null when no model is known yet (or it names no known provider). */
  provider: ProviderSettings | null;
};

/** A refusal: `user`: a flag, variable or config file is wrong (a usage error); `file`: a catalog or request is. */
export type Refusal = { ok: false; message: string; by: "user" | "file"; code: string };
export type Resolved = { ok: true; settings: RunSettings } | Refusal;

/** A catalog's settings, every level resolved at once: before a slice is chosen, each slice's, the classifier's. */
export type CatalogResolution = {
  /** The catalog's defaults over the user's settings: what a run says before routing chooses a slice. */
  catalog: Resolved;
  /** Each slice's settings by name: the chosen slice's are its run's. */
  slices: Readonly<Record<string, Resolved>>;
  /** How the catalog's classification model is reached; null when it names none. */
  classifier: ({ ok: true; provider: ProviderSettings } | Refusal) | null;
};

/**
 * A command's settings, resolved once: the flags, the environment (read once, into a frozen copy) and the config
 * files, every value validated and every default in place with its source. A request's or a catalog's own settings
 * are layered onto it later without reading or validating the user's again.
 */
export type SettingsPlan = {
  readonly settings: RunSettings;
  /** The settings of a run of this request (a request file, a recording's slice, a prompt). */
  readonly request: (request: RequestSettings) => Resolved;
  /** The settings of a run routed through this catalog, at every level. */
  readonly catalog: (catalog: Omit<CatalogSettings, "slice">) => CatalogResolution;
};

export type SettingsResult = { ok: true; settings: RunSettings; plan: SettingsPlan } | Refusal;

class Refused extends Error {
  constructor(message: string, readonly by: "user" | "file", readonly code: string) {
    super(message);
  }
}

/** The config file's path: $XDG_CONFIG_HOME/loom/config.jsonc, else ~/.config/loom/config.jsonc; null without either. */
export function configPath(env: Record<string, string | undefined>): string | null {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  if (xdg) return `${xdg.replace(/\/+$/, "")}/loom/config.jsonc`;
  const home = env.HOME?.trim();
  return home ? `${home.replace(/\/+$/, "")}/.config/loom/config.jsonc` : null;
}

/**
 * Every run setting by PRECEDENCE, validated once: a command calls it once, and a run's request or catalog is layered
 * onto its plan. Never throws for bad input: the result says what was wrong.
 */
export function resolveSettings(input: SettingsInput): SettingsResult {
  // The environment is read once, here: every later layer reads this copy.
  const env: Record<string, string | undefined> = Object.freeze({ ...input.env });
  const user: SettingsInput = { ...input, env };
  const resolved = attempt(() => resolveAll(user));
  if (!resolved.ok) return resolved;
  // A request or catalog given here is layered at once (the plan's own layers start from the user's level).
  const given = user.request || user.catalog ? attempt(() => layered(resolved.settings, user)) : resolved;
  if (!given.ok) return given;
  const { catalog: _c, request: _r, ...base } = user;
  const plan: SettingsPlan = Object.freeze({
    settings: given.settings,
    request: (request: RequestSettings) => attempt(() => layered(resolved.settings, { ...base, request })),
    catalog: (catalog: Omit<CatalogSettings, "slice">): CatalogResolution => {
      const entries = Object.entries(catalog.slices ?? {});
      const classifier = catalog.classifier;
      return {
        catalog: attempt(() => layered(resolved.settings, { ...base, catalog })),
        slices: Object.fromEntries(
          entries.map((
            [name, entry],
          ) => [
            name,
            attempt(() => layered(resolved.settings, { ...base, catalog: { ...catalog, slice: { name, entry } } })),
          ]),
        ),
        classifier: classifier === undefined
          ? null
          : attemptProvider(() => catalogProvider({ ...base, catalog }, classifier)),
      };
    },
  });
  return { ok: true, settings: given.settings, plan };
}

function attempt(resolve: () => RunSettings): Resolved {
  try {
    return { ok: true, settings: resolve() };
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { ok: false, message: error.message, by: error.by, code: error.code };
  }
}

function attemptProvider(resolve: () => ProviderSettings): { ok: true; provider: ProviderSettings } | Refusal {
  try {
    return { ok: true, provider: resolve() };
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { ok: false, message: error.message, by: error.by, code: error.code };
  }
}

/** The sandbox floor alone (--sandbox, else LOOM_SANDBOX, else auto): for a workspace made outside a run. */
export function sandboxFloor(flags: SettingFlags, env: Record<string, string | undefined>): Setting<SandboxMode> {
  return pick("sandbox", {
    flag: found(flags.sandbox, flagName("sandbox")),
    environment: found(envValue(env, "sandbox", SandboxMode), SETTINGS.sandbox.env),
    "default": byDefault<SandboxMode>("auto"),
  });
}

/**
 * The user's level, resolved once per command: the flags, the environment and the config files, every value
 * validated. A request or a catalog is layered onto it (layered), never resolved again.
 */
function resolveAll(input: SettingsInput): RunSettings {
  const flags = input.flags ?? {};
  const { env } = input;
  const config = input.userConfig?.config ?? {};
  const configAt = (field: keyof UserConfig) => `${input.userConfig?.file ?? "config.jsonc"}: ${field}`;
  const project = input.projectConfig?.config ?? {};
  const projectAt = (field: keyof ProjectConfig) => `${input.projectConfig?.file ?? ".loom/config.jsonc"}: ${field}`;
  const model = first("model", {
    flag: found(flags.model, flagName("model")),
    environment: found(envValue(env, "model"), SETTINGS.model.env),
    config: found(config.model, configAt("model")),
  });
  // A project's file may lower the user's step limit, never raise it: more steps is more spend.
  const userMaxSteps = config.max_steps ?? DEFAULT_MAX_STEPS;
  if (project.max_steps !== undefined && project.max_steps > userMaxSteps) {
    throw new Refused(
      `${projectAt("max_steps")} ${project.max_steps} is above the user's limit ${userMaxSteps} ` +
        `(${
          config.max_steps === undefined ? "the default" : configAt("max_steps")
        }): a project's file may only lower ` +
        "limits; raise it with --max-steps or in your own config file",
      "user",
      "invalid_config",
    );
  }
  /** A setting of the generic rule, from the user's sources (its entry says where each is written). */
  const generic = (key: GenericKey): Setting<unknown> | Unset => {
    const entry = entryOf(key);
    return first(key, {
      flag: found(flags[key], flagName(key)),
      environment: entry.env === null ? undefined : found(envValue(env, key), entry.env),
      project: key in project
        ? found(project[key as keyof ProjectConfig], projectAt(key as keyof ProjectConfig))
        : undefined,
      config: key in config ? found(config[key as keyof UserConfig], configAt(key as keyof UserConfig)) : undefined,
      "default": "default" in entry ? byDefault(entry.default) : undefined,
    });
  };
  // The one cast: each generic setting's value is of its entry's type (the table the type is derived from).
  const settings = Object.fromEntries(GENERIC_KEYS.map((key) => [key, generic(key)])) as GenericSettings;
  const provider = model.source === null ? null : modelProvider(input, model.value);
  return { ...settings, model, sandbox: sandboxFloor(flags, env), provider };
}

/**
 * A request's or a catalog's settings layered onto the user's: a layer sits right below the flags in every
 * precedence that has it (tests/resolve-once.test.ts holds PRECEDENCE to that), so a flag's value stays, else the
 * layer's, else the user's. The sandbox is the user's floor, which the layer may raise, never lower.
 */
function layered(user: RunSettings, input: SettingsInput): RunSettings {
  const { catalog = null, request = null } = input;
  const defaults = catalog?.defaults ?? {};
  const slice = catalog?.slice;
  const file = catalog?.file ?? "";
  /** A catalog setting: the slice's own, else the defaults'. */
  const levelled = <T>(own: T | undefined, fallback: T | undefined, field: string): Found<T> | undefined =>
    own !== undefined
      ? { value: own, from: `${file}: slices.${slice?.name}.${field}` }
      : found(fallback, `${file}: defaults.${field}`);
  const fromRequest = <T>(value: T | undefined, field: string) => found(value, `${request?.file}: ${field}`);
  const modelEntry = slice ? catalog?.models?.[slice.entry.model] : undefined;
  const source: "request" | "catalog" | null = request !== null ? "request" : catalog !== null ? "catalog" : null;
  const over = <T>(name: SettingName, setting: Setting<T> | Unset, layer: Found<T> | undefined): Setting<T> | Unset =>
    source === null || setting.source === "flag" || layer === undefined ||
      !(PRECEDENCE[name] as readonly Source[]).includes(source)
      ? setting
      : { value: layer.value, source, from: layer.from };
  const model = over(
    "model",
    user.model,
    request
      ? fromRequest(request.model, "model")
      : found(modelEntry?.model, `${file}: models.${slice?.entry.model}.model`),
  );
  const generic = (key: GenericKey): Setting<unknown> | Unset => {
    const entry = entryOf(key);
    const layer = request
      ? entry.request && fromRequest(entry.request.read(request), entry.request.field)
      : entry.catalog && levelled(
        slice ? entry.catalog.read(slice.entry) : undefined,
        entry.catalog.levelled ? entry.catalog.read(defaults) : undefined,
        entry.catalog.field,
      );
    return over(key, user[key] as Setting<unknown> | Unset, layer);
  };
  const settings = Object.fromEntries(GENERIC_KEYS.map((key) => [key, generic(key)])) as GenericSettings;
  const floor = user.sandbox;
  const asked = first("sandbox", {
    request: fromRequest(request?.sandbox?.mode, "sandbox.mode"),
    catalog: levelled(slice?.entry.sandbox?.mode, defaults.sandbox?.mode, "sandbox.mode"),
  });
  // The data may raise the floor (auto < required), never lower it; off is only ever the user's word.
  const sandbox = asked.source !== null && STRENGTH[asked.value] > STRENGTH[floor.value] ? asked : floor;
  const provider = slice !== undefined && modelEntry !== undefined
    ? catalogProvider(input, slice.entry.model)
    : model.source !== null && catalog === null
    ? modelProvider(input, model.value)
    : null;
  return { ...settings, model, sandbox, provider };
}

/** The settings of the generic rule, in the table's order. */
const GENERIC_KEYS = SETTING_KEYS.filter((key): key is GenericKey => entryOf(key).generic === true);

const STRENGTH: Record<SandboxMode, number> = { off: 0, auto: 1, required: 2 };

/** A candidate value and the flag, variable or file field it is written in (null: built in). */
type Found<T> = { value: T; from: string | null };
type Candidates<T> = Partial<Record<Source, Found<T> | undefined>>;

/** `value` found at `from`, or undefined when it is not set there. */
function found<T>(value: T | undefined, from: string | null): Found<T> | undefined {
  return value === undefined ? undefined : { value, from };
}

function byDefault<T>(value: T): Found<T> {
  return { value, from: null };
}

/** The first candidate present, in the setting's PRECEDENCE order; unset when none is. */
function first<T>(name: SettingName, candidates: Candidates<T>): Setting<T> | Unset {
  for (const source of PRECEDENCE[name]) {
    const candidate = candidates[source];
    if (candidate !== undefined) return { value: candidate.value, source, from: candidate.from };
  }
  return UNSET;
}

/** The same for a setting with a default: one is always found. */
function pick<T>(name: SettingName, candidates: Candidates<T> & { "default": Found<T> }): Setting<T> {
  const setting = first(name, candidates);
  if (setting.source === null) throw new Error(`${name}: its PRECEDENCE row lists no default`);
  return setting;
}

/** A setting's variable, checked by its schema (the config field's, the one validation); unset or blank: undefined. */
function envValue<K extends keyof typeof SETTINGS>(
  env: Record<string, string | undefined>,
  key: K,
  schema: z.ZodType | null = entryOf(key).schema,
): ValueOf<K> | undefined {
  const { env: name, expected } = entryOf(key);
  const text = name === null ? undefined : env[name]?.trim() || undefined;
  if (name === null || text === undefined) return undefined;
  const parsed = schema?.safeParse(text);
  // The one cast: the schema is the entry's, of its value's type.
  if (parsed?.success) return parsed.data as ValueOf<K>;
  throw new Refused(`${name} ${JSON.stringify(text)}: expected ${expected}`, "user", "invalid_setting");
}

/** "PROVIDER/MODEL" of a prompt or a request: the user's base URL settings apply. */
function modelProvider(input: SettingsInput, model: string): ProviderSettings | null {
  const ref = parseModelRef(model);
  // An unknown provider is the provider's own error when the run starts (providerForModel); config shows no URL.
  if (ref === null) return null;
  const flags = input.flags ?? {};
  const variable = PROVIDER_KINDS[ref.provider].baseUrlEnv;
  const base_url = pick("base_url", {
    flag: found(flags.base_url === undefined ? undefined : checkedUrl(flags.base_url, "--base-url"), "--base-url"),
    // Loom's own variable, then the provider's (ANTHROPIC_BASE_URL, …): both the user's environment.
    environment: providerVariable(input.env, "LOOM_PROVIDER_BASE_URL") ?? providerVariable(input.env, variable),
    config: found(input.userConfig?.config.base_url, `${input.userConfig?.file ?? "config.jsonc"}: base_url`),
    "default": byDefault(PROVIDER_KINDS[ref.provider].baseUrl),
  });
  const { effort, thinking } = input.request ?? {};
  const named = { kind: ref.provider, model: ref.id, ...definedOnly({ effort, thinking }) };
  return provider(input, named, base_url, null);
}

/** A catalog model entry: its own base_url and api_key_env, held to where the user sends keys. */
function catalogProvider(input: SettingsInput, name: string): ProviderSettings {
  const catalog = input.catalog;
  const entry = catalog?.models?.[name];
  if (catalog == null || entry === undefined) throw new Error(`no catalog model ${name}`);
  return entryProvider(input, entry, { file: catalog.file, field: `models.${name}` }, { checked: true });
}

/**
 * A model configuration a library caller passes itself (createProvider): the caller is the user, so its base_url and
 * api_key_env are taken as given; the same resolution and checks otherwise.
 */
export function resolveProviderConfig(
  config: ProviderConfig,
  { env, flags = {} }: { env: Record<string, string | undefined>; flags?: SettingFlags },
): { ok: true; provider: ProviderSettings } | { ok: false; message: string; code: string } {
  try {
    const where = { file: "the model configuration", field: "" };
    return { ok: true, provider: entryProvider({ env, flags }, config, where, { checked: false }) };
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { ok: false, message: error.message, code: error.code };
  }
}

function entryProvider(
  input: SettingsInput,
  entry: ProviderConfig,
  { file, field }: { file: string; field: string },
  { checked }: { checked: boolean },
): ProviderSettings {
  const variable = PROVIDER_KINDS[entry.kind].baseUrlEnv;
  const base_url = pick("base_url", {
    catalog: found(entry.base_url, at(file, field, "base_url")),
    environment: providerVariable(input.env, variable),
    "default": byDefault(PROVIDER_KINDS[entry.kind].baseUrl),
  });
  return provider(input, entry, base_url, { file, field, checked });
}

/** ANTHROPIC_BASE_URL / OPENAI_BASE_URL, checked; unset or blank: undefined. */
function providerVariable(env: Record<string, string | undefined>, variable: string | null): Found<string> | undefined {
  const text = variable ? env[variable]?.trim() || undefined : undefined;
  if (variable === null || text === undefined) return undefined;
  return { value: checkedUrl(text, variable), from: variable };
}

/** The one http(s) check of a base URL from a flag or a variable (files are checked by their schema's HttpUrl). */
function checkedUrl(text: string, where: string): string {
  if (HttpUrl.safeParse(text).success) return text;
  // A value with "@" may hold a password that no parser can tell from the rest: it is not echoed.
  const shown = text.includes("@") ? '(not shown: it holds "@")' : JSON.stringify(text);
  throw new Refused(`${where} ${shown}: expected an http(s) URL`, "user", "invalid_base_url");
}

function provider(
  input: SettingsInput,
  entry: ProviderConfig,
  base_url: Setting<string>,
  file: { file: string; field: string; checked: boolean } | null,
): ProviderSettings {
  const flags = input.flags ?? {};
  const where = file ? `${file.file}: ${file.field}` : `Model "${entry.model}"`;
  for (const field of ["response_format", "cache_ttl"] as const) {
    if (entry[field] === undefined || PROVIDER_KINDS[entry.kind].takes[field]) continue;
    const kinds = ModelProvider.options.filter((kind) => PROVIDER_KINDS[kind].takes[field]).map((k) => `"${k}"`);
    throw new Refused(
      `${where}: ${field} applies only to kind ${kinds.join(" or ")}, not "${entry.kind}"`,
      "file",
      "invalid_model",
    );
  }
  // Credentials in the URL would be sent to the API and shown wherever the URL is: refused, and never echoed.
  const bare = withoutCredentials(base_url.value);
  if (bare.had) {
    throw new Refused(
      `Model "${entry.model}": the base URL ${JSON.stringify(bare.url)} (${base_url.from ?? "base_url"}) ` +
        "holds a user name or password; remove it (API keys come from api_key_env)",
      "file",
      "invalid_base_url",
    );
  }
  const api_key_env: Setting<string | null> = entry.api_key_env !== undefined && file !== null
    ? { value: entry.api_key_env, source: "catalog", from: at(file.file, file.field, "api_key_env") }
    : { value: entry.api_key_env ?? PROVIDER_KINDS[entry.kind].keyEnv, source: "default", from: null };
  if (file?.checked) checkKeyDestination(input, { kind: entry.kind, base_url, api_key_env, ...file });
  const user = input.userConfig, project = input.projectConfig;
  const limit = (
    flag: number | undefined,
    own: number | undefined,
    key: string,
    name: "provider_deadline_ms" | "provider_idle_timeout_ms",
    fallback: number,
  ) =>
    pick<number | null>(name, {
      flag: found(flag, flagName(name)),
      catalog: file === null ? undefined : found(own, at(file.file, file.field, key)),
      project: found(project?.config[name], `${project?.file}: ${name}`),
      config: found(user?.config[name], `${user?.file}: ${name}`),
      // The default the HTTP adapters apply, stated here so `loom config` shows what a run uses.
      "default": byDefault(own ?? fallback),
    });
  return {
    kind: entry.kind,
    model: entry.model,
    base_url,
    api_key_env,
    provider_deadline_ms: limit(
      flags.provider_deadline_ms,
      entry.deadline_ms,
      "deadline_ms",
      "provider_deadline_ms",
      PROVIDER_KINDS[entry.kind].unknownModel.local ? LOCAL_TIMEOUT_MS : DEFAULT_DEADLINE_MS,
    ),
    provider_idle_timeout_ms: limit(
      flags.provider_idle_timeout_ms,
      entry.idle_timeout_ms,
      "idle_timeout_ms",
      "provider_idle_timeout_ms",
      PROVIDER_KINDS[entry.kind].unknownModel.local ? LOCAL_TIMEOUT_MS : DEFAULT_IDLE_TIMEOUT_MS,
    ),
    max_response_bytes: entry.max_response_bytes,
    max_tokens: entry.max_tokens,
    response_format: entry.response_format,
    cache_ttl: entry.cache_ttl,
    effort: entry.effort,
    thinking: entry.thinking,
  };
}

/**
 * Credentials go only where the user sent them (SPEC §9): a file's api_key_env names a key of that provider (or one
 * the user allowed with --allow-key-env), and a provider's default key goes only to that provider's own host, a base
 * URL the user set (flag, environment, config file) or a host the user allowed with --allow-key-host.
 */
function checkKeyDestination(
  input: SettingsInput,
  { kind, base_url, api_key_env, file, field }: {
    kind: ModelProvider;
    base_url: Setting<string>;
    api_key_env: Setting<string | null>;
    file: string;
    field: string;
  },
): void {
  const flags = input.flags ?? {};
  const key = api_key_env.value;
  if (key === null) return;
  const target = new URL(base_url.value);
  const host = target.host;
  // A file names which variable holds a key only when the user allowed that variable (a catalog is data someone
  // handed you: `*_API_KEY` is any service's key). The kind's own default variable is held to the host rules below;
  // a key-shaped variable that is not set holds nothing to send (the missing key is then reported as such).
  const allowedEnv = (flags.allow_key_env ?? []).includes(key);
  if (api_key_env.source === "catalog" && key !== PROVIDER_KINDS[kind].keyEnv && !allowedEnv) {
    if (!PROVIDER_KINDS[kind].keyName.test(key)) {
      throw new Refused(
        `${file}: ${field}.api_key_env ${JSON.stringify(key)} does not name an API key of ${kind} (expected ` +
          `${PROVIDER_KINDS[kind].keyShape}); nothing was sent to ${host} (--allow-key-env ${key} allows it)`,
        "file",
        "key_refused",
      );
    }
    if (input.env[key] !== undefined) {
      throw new Refused(
        `${file}: ${field}.api_key_env ${JSON.stringify(key)} is not a variable you allowed for keys; nothing was ` +
          `sent to ${host} (--allow-key-env ${key} allows it)`,
        "file",
        "key_refused",
      );
    }
  }
  const owner = ModelProvider.options.find((k) => PROVIDER_KINDS[k].keyEnv === key);
  if (owner === undefined || base_url.source !== "catalog") return;
  // A base URL the user set (flag, environment, config file) is taken as given; the provider's own is https on its
  // own port: the same host over plain http or on another port is not the provider.
  const userUrls = [
    flags.base_url,
    input.env.LOOM_PROVIDER_BASE_URL,
    input.env[PROVIDER_KINDS[owner].baseUrlEnv ?? ""],
    input.userConfig?.config.base_url,
    PROVIDER_KINDS[owner].baseUrl,
  ];
  const origins = new Set(userUrls.flatMap((url) => originOf(url)));
  const hosts = new Set((flags.allow_key_host ?? []).map((h) => h.toLowerCase()));
  if (origins.has(target.origin) || hosts.has(host) || hosts.has(target.hostname)) return;
  const why = [...origins].some((o) => new URL(o).hostname === target.hostname)
    ? `not ${owner}'s own origin (${target.protocol === "https:" ? "another port" : `${target.protocol}, not https`})`
    : `neither ${owner}'s own host nor a base URL you set`;
  throw new Refused(
    `${file}: ${field}.base_url would send ${key} to ${host}, ${why}; nothing was sent ` +
      `(--allow-key-host ${host} allows it)`,
    "file",
    "key_refused",
  );
}

/** What the sandbox of a run lets its processes have beyond the floor: network, host variables, read-only mounts. */
export type SandboxRelaxations = { network: boolean; env: readonly string[]; read_only: readonly string[] };

/**
 * The relaxations a run's processes get: only what the user granted (the command line; a library caller's flags),
 * narrowed by what the slice's file says. A request, catalog, recording or suite is data someone may have handed you:
 * asking for more than was granted is refused, in one line naming the file and the field.
 */
export function grantedSandbox(
  asked: { network?: boolean; env?: readonly string[]; read_only?: readonly string[] } | undefined,
  flags: SettingFlags,
  source: string,
): SandboxRelaxations {
  const refuse = (field: string, what: string, flag: string) => {
    throw new StartupError(
      `${source}: ${field} ${what}; a file may only narrow the sandbox (${flag} on the command line allows it)`,
      "sandbox_relaxation_refused",
    );
  };
  const network = flags.sandbox_network === true;
  if (asked?.network === true && !network) refuse("sandbox.network", "asks for the network", "--sandbox-network");
  const grantedEnv = flags.sandbox_env ?? [];
  asked?.env?.forEach((name, i) => {
    if (!grantedEnv.includes(name)) {
      refuse(`sandbox.env[${i}]`, `passes the host variable ${JSON.stringify(name)}`, `--sandbox-env ${name}`);
    }
  });
  const grantedPaths = flags.sandbox_read_only ?? [];
  asked?.read_only?.forEach((path, i) => {
    if (!grantedPaths.includes(path)) {
      refuse(`sandbox.read_only[${i}]`, `mounts the host path ${JSON.stringify(path)}`, `--sandbox-read-only ${path}`);
    }
  });
  return {
    network: network && asked?.network !== false,
    env: asked?.env ?? grantedEnv,
    read_only: asked?.read_only ?? grantedPaths,
  };
}

function originOf(url: string | undefined): string[] {
  if (!url?.trim()) return [];
  try {
    return [new URL(url.trim()).origin];
  } catch {
    return [];
  }
}

/** "catalog.json: models.fast.base_url"; a field path without a parent ("") names the key alone. */
function at(file: string, field: string, key: string): string {
  return `${file}: ${field === "" ? key : `${field}.${key}`}`;
}

/**
 * The entries whose value is set: an optional setting is left out rather than undefined (flags, options, a request).
 * The one cast: Object.fromEntries cannot type a subset of T's keys.
 */
export function definedOnly<T extends object>(values: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** What `loom config` shows, checked against what is resolved: a shown setting the resolution lacks is a type error. */
type ShownAs<W> = { [K in SettingKey]: (typeof SETTINGS)[K]["shown"] extends W ? K : never }[SettingKey];
type Holds<T extends true> = T;
export type ShownAreResolved = Holds<
  [ShownAs<"run">] extends [keyof RunSettings] ? [ShownAs<"provider">] extends [keyof ProviderSettings] ? true : false
    : false
>;
