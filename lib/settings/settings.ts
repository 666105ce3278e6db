// Every run setting resolved in one place: the user's defaults (a config file at $XDG_CONFIG_HOME/loom/config.jsonc, environment
// variables, flags) and what a catalog or a request file says, resolved by one precedence table (PRECEDENCE below),
// each value validated once and kept with its source, so `loom config` says exactly what a run would use and where
// each value came from. Pure: the environment and the files' contents are passed in.
import { DEFAULT_MAX_STEPS } from "../policy.ts";
import type { SandboxMode } from "../sandbox-state.ts";
import {
  entryOf,
  type GenericKey,
  PRECEDENCE,
  type RequestSettings,
  SETTING_KEYS,
  type SettingFlags,
  type SettingKey,
  SETTINGS,
  type Source,
  type ValueOf,
} from "./setting-table.ts";
import { configPath, ProjectConfig, USER_ONLY_FIELDS, UserConfig } from "./config-files.ts";
import {
  byDefault,
  type CatalogSettings,
  definedOnly,
  envValue,
  first,
  flagName,
  type Found,
  found,
  type Refusal,
  Refused,
  type Setting,
  type SettingName,
  type SettingsInput,
  type Unset,
} from "./sources.ts";
import { catalogProvider, modelProvider, type ProviderSettings } from "./provider-settings.ts";
import { sandboxFloor } from "./sandbox-grants.ts";

export { configPath, definedOnly, PRECEDENCE, ProjectConfig, USER_ONLY_FIELDS, UserConfig };
export type {
  CatalogSettings,
  ProviderSettings,
  Refusal,
  RequestSettings,
  Setting,
  SettingFlags,
  SettingName,
  SettingsInput,
  Source,
  Unset,
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
  /** The sandbox relaxations the user granted (--sandbox-network, --sandbox-env, --sandbox-read-only): a run's file
   * may ask for these only. */
  readonly grants: Readonly<Pick<SettingFlags, "sandbox_network" | "sandbox_env" | "sandbox_read_only">>;
  /** The settings of a run of this request (a request file, a recording's slice, a prompt). */
  readonly request: (request: RequestSettings) => Resolved;
  /** The settings of a run routed through this catalog, at every level. */
  readonly catalog: (catalog: Omit<CatalogSettings, "slice">) => CatalogResolution;
};

export type SettingsResult = { ok: true; settings: RunSettings; plan: SettingsPlan } | Refusal;

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
  const { sandbox_network, sandbox_env, sandbox_read_only } = user.flags ?? {};
  const plan: SettingsPlan = Object.freeze({
    settings: given.settings,
    grants: Object.freeze(definedOnly({ sandbox_network, sandbox_env, sandbox_read_only })),
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

/** What `loom config` shows, checked against what is resolved: a shown setting the resolution lacks is a type error. */
type ShownAs<W> = { [K in SettingKey]: (typeof SETTINGS)[K] extends { shown: W } ? K : never }[SettingKey];
type Holds<T extends true> = T;
export type ShownAreResolved = Holds<
  [ShownAs<"run">] extends [keyof RunSettings] ? [ShownAs<"provider">] extends [keyof ProviderSettings] ? true : false
    : false
>;
