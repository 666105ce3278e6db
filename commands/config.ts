// The user config file ($XDG_CONFIG_HOME/loom/config.jsonc), read once per command, and `loom config`: every setting a
// run would use — with the same flags, catalog (and slice) or request file — its value and where it came from. Both
// read lib/settings/settings.ts's one resolveSettings, so they cannot disagree.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { readConfigFile } from "../lib/io/config-file.ts";
import { dirname, join, resolve } from "node:path";
import {
  configPath,
  ProjectConfig,
  type Resolved,
  resolveSettings,
  type RunSettings,
  type Setting,
  type SettingFlags,
  type SettingsInput,
  type SettingsPlan,
  type Unset,
  USER_ONLY_FIELDS,
  UserConfig,
} from "../lib/settings/settings.ts";
import { describeFsError, UsageError } from "../lib/errors.ts";
import { loadCatalog } from "../lib/catalog/catalog.ts";
import { readJson } from "../lib/text/json-text.ts";
import { formatZodError } from "../lib/text/zod-error.ts";
import { parseCommand, type Values } from "./cli-spec.ts";
import type { Io } from "./io.ts";
import { readRequest } from "./request-file.ts";
import { Reporter } from "./reporter.ts";
import { CONFIG_SPEC } from "./specs.ts";
import { entryOf, parseSettingFlags, positiveInteger, SETTING_KEYS } from "../lib/settings/setting-table.ts";
import { describeTableInUse, installedModelsPath, tableInUse, todayOf } from "./models-table.ts";
import type { NamedPath } from "./output-paths.ts";

export type LoadedConfig = { path: string | null; found: boolean; config: UserConfig };

/** The project's file, found from `from` upward: `.loom/config.jsonc` in the first folder that has one. */
const PROJECT_FILE = ".loom/config.jsonc";

/** Whether a folder can be listed and entered (tried, not access(2): root passes that for any mode). */
function enterable(dir: string): boolean {
  try {
    readdirSync(dir);
    statSync(join(dir, "."));
    return true;
  } catch {
    return false;
  }
}

/** A config file that is not JSON: where, never what (the file may be anything a link led to). */
function notJson(path: string, failure: { line: number; column: number }): string {
  return `${path}: not valid JSON (line ${failure.line}, column ${failure.column})`;
}

/**
 * The files a command reads at start, as inputs no output may name (issue 43): the user config file, the project config
 * file looked for from each workspace upward (every place up to the nearest that exists) and the installed model table.
 * Named whether or not they exist: an output written there is read as configuration by every later command.
 */
export function startupFiles(env: Record<string, string | undefined>, workspaces: readonly string[]): NamedPath[] {
  const files: NamedPath[] = [];
  const user = configPath(env);
  if (user !== null) files.push({ flag: "the user config file", path: user });
  const table = installedModelsPath(env);
  if (table !== null) files.push({ flag: "the installed model table", path: table });
  for (const workspace of workspaces) {
    for (let dir = resolve(workspace);; dir = dirname(dir)) {
      const path = join(dir, PROJECT_FILE);
      files.push({ flag: "a project config file", path });
      if (exists(path) || dirname(dir) === dir) break;
    }
  }
  return files;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The nearest project config file from `from` (a workspace) upward, validated; null when there is none. */
function loadProjectConfig(from: string): { config: ProjectConfig; file: string } | null {
  for (let dir = resolve(from);; dir = dirname(dir)) {
    const path = join(dir, PROJECT_FILE);
    const read = readConfigFile(path, { inFolder: true });
    if (!read.ok && !read.missing) {
      // A workspace Loom cannot enter has no project file it could read: the run's own start fails, naming the
      // workspace (exit 3, its report written), as every start failure does.
      if (!enterable(dir)) return null;
      throw new UsageError(`Cannot read the project config file ${JSON.stringify(path)}: it ${read.problem}`);
    }
    if (read.ok) {
      const json = readJson(read.text);
      if (!json.ok) throw new UsageError(notJson(path, json));
      if (json.value !== null && typeof json.value === "object" && !Array.isArray(json.value)) {
        for (const [field, why] of Object.entries(USER_ONLY_FIELDS)) {
          if (Object.hasOwn(json.value, field)) {
            throw new UsageError(
              `${path}: ${field} cannot be set in a project's file: ${why} (set it in your own config file or with a flag)`,
            );
          }
        }
      }
      const parsed = ProjectConfig.safeParse(json.value);
      if (!parsed.success) {
        throw new UsageError(`${path}: ${formatZodError(parsed.error, { schema: ProjectConfig, worded: true })}`);
      }
      return { config: parsed.data, file: path };
    }
    if (dirname(dir) === dir) return null;
  }
}

/** The config file, validated; a missing file is an empty config, a bad one a usage error naming file and field. */
function loadUserConfig(env: Record<string, string | undefined>): LoadedConfig {
  const path = configPath(env);
  if (path === null) return { path, found: false, config: {} };
  const read = readConfigFile(path);
  if (!read.ok && read.missing) return { path, found: false, config: {} };
  if (!read.ok) throw new UsageError(`Cannot read the config file ${JSON.stringify(path)}: it ${read.problem}`);
  const json = readJson(read.text);
  if (!json.ok) throw new UsageError(notJson(path, json));
  const parsed = UserConfig.safeParse(json.value);
  if (!parsed.success) {
    throw new UsageError(`${path}: ${formatZodError(parsed.error, { schema: UserConfig, worded: true })}`);
  }
  return { path, found: true, config: parsed.data };
}

/**
 * A command's one resolution of its settings — its flags, the environment, the config files — checked now: a bad
 * variable or file field is a usage error before anything runs. `plan` is that resolution, for the command and its
 * run to use (a request or catalog is layered onto it, never resolved again).
 */
export function userSettings(
  io: Io,
  flags: SettingFlags = {},
  { workspace = io.cwd }: { workspace?: string } = {},
): { file: LoadedConfig; plan: SettingsPlan } {
  const file = loadUserConfig(io.env);
  const project = loadProjectConfig(resolve(io.cwd, workspace));
  const resolved = resolveSettings({
    flags,
    env: io.env,
    userConfig: { config: file.config, file: file.path ?? "config" },
    ...(project ? { projectConfig: project } : {}),
  });
  if (!resolved.ok) throw new UsageError(resolved.message);
  return { file, plan: resolved.plan };
}

/** The setting flags as resolveSettings takes them, each checked by its entry in the settings table. */
export function settingFlags(values: Readonly<Record<string, unknown>>): SettingFlags {
  return parseSettingFlags(values);
}

export { positiveInteger };

/** The settings as `loom config` shows them: one row each, the run's order. */
export type SettingRow = { name: string; value: string | number | null; source: string | null; from: string | null };

/** The rows, from the settings table: the run's settings, then (when a model is known) its provider's. */
function settingRows(settings: RunSettings): SettingRow[] {
  const rows = (where: "run" | "provider", of: Readonly<Record<string, unknown>>): SettingRow[] =>
    SETTING_KEYS.flatMap((name) => {
      if (entryOf(name).shown !== where) return [];
      const setting = of[name] as Setting<string | number | null> | Unset | undefined;
      if (setting === undefined) throw new Error(`loom config: ${name} is shown but not resolved`);
      return [{ name, ...setting }];
    });
  return [...rows("run", settings), ...(settings.provider === null ? [] : rows("provider", settings.provider))];
}

export async function configCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(CONFIG_SPEC, argv, { command: "config" });
  if (positionals.length > 0) {
    throw new UsageError(`Unexpected argument ${JSON.stringify(positionals[0])} (see loom config --help)`);
  }
  // The project file is found from the workspace upward, as loom run -w DIR finds it: the two cannot disagree.
  const user = userSettings(io, settingFlags(values), { workspace: values.workspace ?? io.cwd });
  const resolved = layered(user.plan, await filesOf(values, io));
  const reporter = new Reporter(io, { command: "config", format: values.json ? "json" : "text" });
  if (!resolved.ok) throw new UsageError(resolved.message);
  const today = todayOf(io.now?.());
  const table = tableInUse(io.env, { today });
  const line = describeTableInUse(table, { today });
  return reporter.settings({
    file: user.file,
    rows: settingRows(resolved.settings),
    models: { origin: table.origin, updated: table.updated, line },
  });
}

/** The settings a run of the catalog's slice (else before routing) or of the request would use. */
function layered(plan: SettingsPlan, { catalog, request }: Pick<SettingsInput, "catalog" | "request">): Resolved {
  if (request) return plan.request(request);
  if (!catalog) return { ok: true, settings: plan.settings };
  const { slice, ...rest } = catalog;
  const levels = plan.catalog(rest);
  return slice === undefined ? levels.catalog : levels.slices[slice.name] ?? levels.catalog;
}

/** --catalog FILE [--slice NAME] or --request FILE, read as a run reads them. */
async function filesOf(
  values: Values<typeof CONFIG_SPEC.flags>,
  io: Io,
): Promise<Pick<SettingsInput, "catalog" | "request">> {
  if (values.slice !== undefined && values.catalog === undefined) throw new UsageError("--slice needs --catalog FILE");
  if (values.catalog !== undefined) {
    const name = values.catalog;
    let text: string;
    try {
      text = readFileSync(resolve(io.cwd, name), "utf8");
    } catch (error) {
      throw new UsageError(`Cannot read catalog ${JSON.stringify(name)}: ${describeFsError(error)}`);
    }
    const catalog = loadCatalog(text, { file: name });
    const slice = values.slice;
    const entry = slice === undefined ? undefined : catalog.slices[slice];
    if (slice !== undefined && (entry === undefined || !Object.hasOwn(catalog.slices, slice))) {
      throw new UsageError(`Unknown slice ${JSON.stringify(slice)} in ${name}`);
    }
    const classifier = catalog.routes?.classification?.model;
    return {
      catalog: {
        file: name,
        defaults: catalog.defaults,
        models: catalog.models,
        slices: catalog.slices,
        ...(classifier === undefined ? {} : { classifier }),
        ...(slice === undefined || entry === undefined ? {} : { slice: { name: slice, entry } }),
      },
    };
  }
  if (values.request !== undefined) {
    const workspace = values.workspace === undefined ? undefined : resolve(io.cwd, values.workspace);
    const request = await readRequest(values.request, { io, workspace });
    return { request: { file: values.request, ...request } };
  }
  return {};
}
