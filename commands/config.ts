// The user config file ($XDG_CONFIG_HOME/loom/config.jsonc), read once per command, and `loom config`: every setting
// with its value and where it came from.
import { readFileSync } from "node:fs";
import { configPath, resolveSettings, type SettingName, SETTINGS, type Settings, UserConfig } from "../lib/config.ts";
import { describeFsError, UsageError } from "../lib/errors.ts";
import { describeJsonFailure, readJson } from "../lib/text/json-text.ts";
import { formatZodError } from "../lib/text/zod-error.ts";
import { parseCommand } from "./cli-spec.ts";
import type { Io } from "./io.ts";
import { CONFIG_SPEC } from "./specs.ts";

export type LoadedConfig = { path: string | null; found: boolean; config: UserConfig };

/** The config file, validated; a missing file is an empty config, a bad one a usage error naming file and field. */
function loadUserConfig(env: Record<string, string | undefined>): LoadedConfig {
  const path = configPath(env);
  if (path === null) return { path, found: false, config: {} };
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return { path, found: false, config: {} };
    throw new UsageError(`Cannot read the config file ${JSON.stringify(path)}: ${describeFsError(error)}`);
  }
  const json = readJson(text);
  if (!json.ok) throw new UsageError(`${path}: not valid JSON: ${describeJsonFailure(json)}`);
  const parsed = UserConfig.safeParse(json.value);
  if (!parsed.success) {
    throw new UsageError(`${path}: ${formatZodError(parsed.error, { schema: UserConfig, worded: true })}`);
  }
  return { path, found: true, config: parsed.data };
}

/** The settings a command runs with: its flags over the environment over the config file over the built-in defaults. */
export function userSettings(
  io: Io,
  flags: Partial<Record<SettingName, string | undefined>> = {},
): Settings & { config: LoadedConfig } {
  const config = loadUserConfig(io.env);
  const resolved = resolveSettings({ flags, env: io.env, config: config.config, file: config.path ?? "config" });
  if (!resolved.ok) throw new UsageError(resolved.message);
  return { ...resolved.settings, config };
}

export function configCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(CONFIG_SPEC, argv, { command: "config" });
  if (positionals.length > 0) throw new UsageError(`loom config takes no arguments (see loom config --help)`);
  const settings = userSettings(io);
  const names = Object.keys(SETTINGS) as SettingName[];
  if (values.json) {
    io.stdout(`${
      JSON.stringify(
        {
          file: { path: settings.config.path, found: settings.config.found },
          settings: Object.fromEntries(names.map((n) => [n, settings[n]])),
        },
        null,
        2,
      )
    }\n`);
    return Promise.resolve(0);
  }
  const rows = names.map((n) => {
    const s = settings[n];
    const where = s.source === null
      ? `not set (${SETTINGS[n].flag}, ${SETTINGS[n].env} or "${SETTINGS[n].field}" in the config file)`
      : s.source === "built-in"
      ? "built-in default"
      : s.source === "config"
      ? `config file`
      : s.from!;
    return [n, s.value ?? "—", where];
  });
  const width = (c: number) => Math.max(...rows.map((r) => r[c].length));
  const file = settings.config.path === null
    ? "config file: none (set XDG_CONFIG_HOME or HOME)"
    : `config file: ${settings.config.path}${settings.config.found ? "" : " (not found)"}`;
  io.stdout(
    `${file}\n${rows.map((r) => `${r[0].padEnd(width(0))}  ${r[1].padEnd(width(1))}  ${r[2]}`).join("\n")}\n` +
      "Precedence: flag > environment > config file > built-in.\n",
  );
  return Promise.resolve(0);
}
