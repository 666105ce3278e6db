// The user's defaults: a config file ($XDG_CONFIG_HOME/loom/config.jsonc), environment variables and flags, resolved
// with one precedence — flag > environment > config file > built-in — and each value's source kept, so `loom config`
// can say where it came from.
import { z } from "zod";
import { ContextPolicyName, DEFAULT_POLICY } from "./policy.ts";

const HttpUrl = z.string().refine((text) => {
  try {
    return ["http:", "https:"].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}, { error: "expected an http(s) URL" });

export const UserConfig = z.strictObject({
  $schema: z.string().optional().describe("The JSON Schema of this file, for editors (loom schema config)"),
  model: z.string().regex(/^[^/\s]+\/\S+$/, { error: "expected PROVIDER/MODEL" }).optional().describe(
    'The model of prompt runs (loom run "TEXT"): "PROVIDER/MODEL", e.g. "anthropic/claude-sonnet-5-5"',
  ),
  context_policy: ContextPolicyName.optional().describe("The context policy of run and replay: legacy or bounded"),
  base_url: HttpUrl.optional().describe(
    "The API base URL of the model's provider, e.g. an OpenAI-compatible server: http://127.0.0.1:8080/v1",
  ),
}).describe("Loom's user configuration: defaults below the environment variables and the flags");
export type UserConfig = z.infer<typeof UserConfig>;

/** Where a setting's value came from, strongest first. */
export type Source = "flag" | "environment" | "config" | "built-in";

export type Setting<T> = {
  value: T | null;
  source: Source | null; /** The flag, variable or file field. */
  from: string | null;
};

/** Each setting: its flag, its environment variable, its config field and its built-in default (null: none). */
export const SETTINGS = {
  model: { flag: "--model", env: "LOOM_MODEL", field: "model", builtIn: null, expected: "PROVIDER/MODEL" },
  context_policy: {
    flag: "--context-policy",
    env: "LOOM_CONTEXT_POLICY",
    field: "context_policy",
    builtIn: DEFAULT_POLICY,
    expected: ContextPolicyName.options.join(" or "),
  },
  base_url: {
    flag: "--base-url",
    env: "LOOM_PROVIDER_BASE_URL",
    field: "base_url",
    builtIn: null,
    expected: "an http(s) URL",
  },
} as const satisfies Record<
  string,
  { flag: string; env: string; field: keyof UserConfig; builtIn: string | null; expected: string }
>;
export type SettingName = keyof typeof SETTINGS;

export type Settings = { [K in SettingName]: Setting<string> };

/** The config file's path: $XDG_CONFIG_HOME/loom/config.jsonc, else ~/.config/loom/config.jsonc; null without either. */
export function configPath(env: Record<string, string | undefined>): string | null {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  if (xdg) return `${xdg.replace(/\/+$/, "")}/loom/config.jsonc`;
  const home = env.HOME?.trim();
  return home ? `${home.replace(/\/+$/, "")}/.config/loom/config.jsonc` : null;
}

/**
 * The settings by precedence: a flag, then its environment variable, then the config file, then the built-in default.
 * Environment values are checked like the file's: a bad one is named by its variable.
 */
export function resolveSettings(
  { flags = {}, env, config = {}, file = "config.jsonc" }: {
    flags?: Partial<Record<SettingName, string | undefined>>;
    env: Record<string, string | undefined>;
    config?: UserConfig;
    file?: string;
  },
): { ok: true; settings: Settings } | { ok: false; message: string } {
  const settings = {} as Settings;
  for (const [name, s] of Object.entries(SETTINGS) as [SettingName, (typeof SETTINGS)[SettingName]][]) {
    const fromEnv = env[s.env]?.trim() || undefined;
    if (fromEnv !== undefined) {
      const checked = UserConfig.shape[s.field].safeParse(fromEnv);
      if (!checked.success) {
        return { ok: false, message: `${s.env} ${JSON.stringify(fromEnv)}: expected ${s.expected}` };
      }
    }
    const flag = flags[name];
    settings[name] = flag !== undefined
      ? { value: flag, source: "flag", from: s.flag }
      : fromEnv !== undefined
      ? { value: fromEnv, source: "environment", from: s.env }
      : config[s.field] !== undefined
      ? { value: config[s.field]!, source: "config", from: `${file}: ${s.field}` }
      : s.builtIn !== null
      ? { value: s.builtIn, source: "built-in", from: null }
      : { value: null, source: null, from: null };
  }
  return { ok: true, settings };
}
