// How one provider is reached, resolved and checked: its base URL (flag, variable, config file, catalog entry,
// the kind's own), its key variable, its call limits, and where credentials may go (SPEC §9). Pure.
import { DEFAULT_DEADLINE_MS, DEFAULT_IDLE_TIMEOUT_MS, LOCAL_TIMEOUT_MS } from "../providers/call-options.ts";
import { HttpUrl, type ProviderConfig } from "./provider-config.ts";
import { ModelProvider, parseModelRef, PROVIDER_KINDS } from "../models/provider-kinds.ts";
import { withoutCredentials } from "../text/safe-text.ts";
import type { SettingFlags } from "./setting-table.ts";
import {
  at,
  byDefault,
  definedOnly,
  flagName,
  type Found,
  found,
  pick,
  Refused,
  type Setting,
  type SettingsInput,
} from "./sources.ts";

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

/** "PROVIDER/MODEL" of a prompt or a request: the user's base URL settings apply. */
export function modelProvider(input: SettingsInput, model: string): ProviderSettings | null {
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
export function catalogProvider(input: SettingsInput, name: string): ProviderSettings {
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

function originOf(url: string | undefined): string[] {
  if (!url?.trim()) return [];
  try {
    return [new URL(url.trim()).origin];
  } catch {
    return [];
  }
}
