// How a setting's value is found: the candidates of each source, the first present in its PRECEDENCE row, a
// variable checked by its entry's schema, and the refusal a bad value is. What every part of the resolution shares
// (settings.ts, provider-settings.ts, sandbox-grants.ts). Pure.
import type { z } from "zod";
import type { ProviderConfig } from "./provider-config.ts";
import {
  type CatalogLevel,
  entryOf,
  PRECEDENCE,
  type RequestSettings,
  type SettingFlags,
  SETTINGS,
  type Source,
  type ValueOf,
} from "./setting-table.ts";
import type { ProjectConfig, UserConfig } from "./config-files.ts";

/** A setting's value, its source and the flag, variable or file field it came from (null for a default). */
export type Setting<T> = { value: T; source: Source; from: string | null };
/** A setting nothing set and that has no default. */
export type Unset = { value: null; source: null; from: null };
const UNSET: Unset = { value: null, source: null, from: null };
export type SettingName = keyof typeof PRECEDENCE;

/** The flag a setting is given with, for its `from` ("--max-steps"). */
export function flagName(key: keyof typeof SETTINGS): string | null {
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

/** A refusal: `user`: a flag, variable or config file is wrong (a usage error); `file`: a catalog or request is. */
export type Refusal = { ok: false; message: string; by: "user" | "file"; code: string };
export class Refused extends Error {
  constructor(message: string, readonly by: "user" | "file", readonly code: string) {
    super(message);
  }
}

/** A candidate value and the flag, variable or file field it is written in (null: built in). */
export type Found<T> = { value: T; from: string | null };
export type Candidates<T> = Partial<Record<Source, Found<T> | undefined>>;

/** `value` found at `from`, or undefined when it is not set there. */
export function found<T>(value: T | undefined, from: string | null): Found<T> | undefined {
  return value === undefined ? undefined : { value, from };
}

export function byDefault<T>(value: T): Found<T> {
  return { value, from: null };
}

/** The first candidate present, in the setting's PRECEDENCE order; unset when none is. */
export function first<T>(name: SettingName, candidates: Candidates<T>): Setting<T> | Unset {
  for (const source of PRECEDENCE[name]) {
    const candidate = candidates[source];
    if (candidate !== undefined) return { value: candidate.value, source, from: candidate.from };
  }
  return UNSET;
}

/** The same for a setting with a default: one is always found. */
export function pick<T>(name: SettingName, candidates: Candidates<T> & { "default": Found<T> }): Setting<T> {
  const setting = first(name, candidates);
  if (setting.source === null) throw new Error(`${name}: its PRECEDENCE row lists no default`);
  return setting;
}

/** A setting's variable, checked by its schema (the config field's, the one validation); unset or blank: undefined. */
export function envValue<K extends keyof typeof SETTINGS>(
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

/** "catalog.json: models.fast.base_url"; a field path without a parent ("") names the key alone. */
export function at(file: string, field: string, key: string): string {
  return `${file}: ${field === "" ? key : `${field}.${key}`}`;
}

/**
 * The entries whose value is set: an optional setting is left out rather than undefined (flags, options, a request).
 * The one cast: Object.fromEntries cannot type a subset of T's keys.
 */
export function definedOnly<T extends object>(values: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
