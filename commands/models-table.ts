// Where the model table comes from: a models file (parseModels, --models FILE), the table in use and `loom models
// update`: a table newer than the built-in one, installed in the user's config
// folder ($XDG_CONFIG_HOME/loom/models.json) from a release's models.json, a file or a URL, so prices and retirements
// stay true without a new binary. Every command reads the table through tableInUse (docs/providers.md).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describeFsError, errorCode, UsageError } from "../lib/errors.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { mergeModels, ModelTable, overrideProblem } from "../lib/models/models.ts";
import { describeJsonFailure, parseJsonc } from "../lib/text/json-text.ts";
import { describeIssues, MISSING_FIELDS } from "../lib/text/zod-error.ts";
import { configPath } from "../lib/settings/settings.ts";

type Env = Record<string, string | undefined>;

/** Where `loom models update` installs a table: beside the config file. null without XDG_CONFIG_HOME or HOME. */
function installedModelsPath(env: Env): string | null {
  const config = configPath(env);
  return config === null ? null : `${dirname(config)}/models.json`;
}

/** The table every command uses, and where it came from ("built-in", or the installed file's path). */
export type TableInUse = {
  table: ModelTable;
  origin: string;
  updated: string | null;
  /** An installed table not used because the built-in one is newer (a newer binary since the update). */
  ignored?: { path: string; updated: string | null };
};

/**
 * The installed table when there is one newer than the built-in (a newer binary's table wins over an older download);
 * else the built-in one. A broken installed file stops the command with one line naming it.
 */
export function tableInUse(env: Env): TableInUse {
  const builtIn = { table: BUILT_IN_MODELS, origin: "built-in", updated: BUILT_IN_MODELS.updated ?? null };
  const path = installedModelsPath(env);
  if (path === null) return builtIn;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return builtIn;
    throw new UsageError(`Cannot read the installed model table ${JSON.stringify(path)}: ${describeFsError(error)}`);
  }
  const table = parseModels(text, { file: path });
  if ((table.updated ?? "") <= (builtIn.updated ?? "")) {
    return { ...builtIn, ignored: { path, updated: table.updated ?? null } };
  }
  return { table, origin: path, updated: table.updated ?? null };
}

/** "built-in, updated 2026-12-03 (0 days ago)": for loom models and loom config. */
export function describeTableInUse({ origin, updated, ignored }: TableInUse, { today }: { today: string }): string {
  const age = updated === null
    ? ""
    : ` (${Math.round((Date.parse(today) - Date.parse(updated)) / 86_400_000)} days ago)`;
  const older = ignored ? `; ${ignored.path} (updated ${ignored.updated ?? "unknown"}) is older and not used` : "";
  return `model table: ${origin}, updated ${updated ?? "unknown"}${age}${older}`;
}

/**
 * Where `loom models update` reads with no --from: LOOM_MODELS_URL, else the latest release's models.json
 * (scripts/release.sh publishes it beside the binaries; the repository is install.sh's LOOM_REPO, loom-dev/loom).
 */
export function latestModelsUrl(env: Env): string {
  const url = env.LOOM_MODELS_URL?.trim();
  if (url) return url;
  return `https://github.com/${env.LOOM_REPO?.trim() || "loom-dev/loom"}/releases/latest/download/models.json`;
}

/** Plain HTTPS, or HTTP to this machine only (a local mirror, the tests). */
function checkUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--from ${JSON.stringify(url)}: not a URL`);
  }
  const local = ["127.0.0.1", "localhost", "[::1]"].includes(parsed.hostname);
  if (parsed.protocol !== "https:" && !(parsed.protocol === "http:" && local)) {
    throw new UsageError(`--from ${JSON.stringify(url)}: only https:// URLs (or http:// to this machine) are read`);
  }
  if (parsed.username || parsed.password) {
    throw new UsageError(`--from ${JSON.stringify(url)}: a URL with credentials is refused; the table is public`);
  }
}

/** GET with no credentials: no cookies, no authorization header, no redirect to another host's rules. */
async function get(url: string, fetchImpl: typeof fetch): Promise<{ status: number; text: string }> {
  const response = await fetchImpl(url, {
    method: "GET",
    credentials: "omit",
    headers: { accept: "application/json, text/plain" },
    redirect: "follow",
  });
  // A redirect may not leave HTTPS (or this machine).
  if (response.url && response.url !== url) checkUrl(response.url);
  return { status: response.status, text: await response.text() };
}

/** The expected SHA-256 of a `models.json.sha256` file ("HEX  models.json" or "HEX"), or a usage error. */
function expectedSum(text: string, where: string): string {
  const hex = text.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new UsageError(`${where}: not a SHA-256 checksum file`, "models_invalid");
  return hex;
}

export type UpdateResult = { path: string; updated: string; models: number; from: string; checksum: boolean };

/**
 * Reads a table (a file, a URL, or the latest release's models.json), checks its checksum when one comes with it,
 * its schema and that it is newer than the table in use, then installs it atomically in the config folder.
 */
export async function updateModels(
  { from, env, cwd }: { from: string | undefined; env: Env; cwd: string },
  { fetchImpl = globalThis.fetch }: { fetchImpl?: typeof fetch } = {},
): Promise<UpdateResult> {
  const path = installedModelsPath(env);
  if (path === null) throw new UsageError("loom models update needs XDG_CONFIG_HOME or HOME to install the table");
  const source = from ?? latestModelsUrl(env);
  const remote = /^[a-z]+:\/\//i.test(source);
  let text: string;
  let sum: string | null = null;
  if (remote) {
    checkUrl(source);
    const body = await get(source, fetchImpl).catch((error: unknown) => {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`Cannot fetch ${source}: ${error instanceof Error ? error.message : String(error)}`);
    });
    if (body.status !== 200) throw new UsageError(`Cannot fetch ${source}: HTTP ${body.status}`);
    text = body.text;
    const checksum = await get(`${source}.sha256`, fetchImpl).catch(() => null);
    if (checksum?.status === 200) sum = expectedSum(checksum.text, `${source}.sha256`);
  } else {
    const file = resolve(cwd, source);
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new UsageError(`--from ${JSON.stringify(source)}: ${describeFsError(error)}`);
    }
    if (existsSync(`${file}.sha256`)) sum = expectedSum(readFileSync(`${file}.sha256`, "utf8"), `${source}.sha256`);
  }
  if (sum !== null) {
    const actual = createHash("sha256").update(text).digest("hex");
    if (actual !== sum) {
      throw new UsageError(`${source}: the SHA-256 is ${actual}, its checksum file says ${sum}; not installed`);
    }
  }
  const table = parseModels(text, { file: source });
  if (table.updated === undefined) {
    throw new UsageError(`${source}: the table has no "updated" date; not installed`, "models_invalid");
  }
  const current = tableInUse(env);
  if (current.updated !== null && table.updated <= current.updated) {
    throw new UsageError(
      `${source}: the table is updated ${table.updated}, not newer than the one in use (${current.origin}, ` +
        `${current.updated}); not installed`,
      "models_stale",
    );
  }
  // Atomic: a reader sees the old file or the new one, never half of one.
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(table, null, 2)}\n`, { mode: 0o644 });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new UsageError(`Cannot write ${JSON.stringify(path)}: ${describeFsError(error)}`);
  }
  return {
    path,
    updated: table.updated,
    models: Object.keys(table.models).length,
    from: source,
    checksum: sum !== null,
  };
}

/**
 * The table in use (the built-in one, or a newer one `loom models update` installed), with the entries of FILE
 * (--models) replacing or adding to it.
 */
export function readModels(
  file: string | undefined,
  { cwd, env }: { cwd: string; env: Record<string, string | undefined> },
): ModelTable {
  const base = tableInUse(env).table;
  if (file === undefined) return base;
  let text: string;
  try {
    text = readFileSync(resolve(cwd, file), "utf8");
  } catch (error) {
    throw new UsageError(`--models ${JSON.stringify(file)}: ${describeFsError(error)}`);
  }
  const override = parseModels(text, { file });
  const problem = overrideProblem(base, override);
  if (problem) throw new UsageError(`Invalid models file ${JSON.stringify(file)}: ${problem}`, "models_invalid");
  return mergeModels(base, override);
}

/** A models file (JSON or JSONC), validated: one line naming the file, the field path and what was expected. */
export function parseModels(text: string, { file }: { file: string }): ModelTable {
  const where = `Invalid models file ${JSON.stringify(file)}`;
  const json = parseJsonc(text);
  if (!json.ok) throw new UsageError(`${where}: ${describeJsonFailure(json)}`, "models_invalid");
  const parsed = ModelTable.safeParse(json.value, { error: MISSING_FIELDS });
  if (parsed.success) return parsed.data;
  throw new UsageError(
    `${where}: ${describeIssues(parsed.error, { schema: ModelTable }).slice(0, 3).join("; ")}`,
    "models_invalid",
  );
}
