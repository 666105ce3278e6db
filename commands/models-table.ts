// Where the model table comes from: a models file (parseModels, --models FILE), the table in use and `loom models
// update`: a table newer than the built-in one, installed in the user's config folder
// ($XDG_CONFIG_HOME/loom/models.json) from a release's models.json, a file or a URL, so prices and retirements stay
// true without a new binary. Every command reads the table through tableInUse: the built-in table with the installed
// one merged over it, both it and a --models file held to the floor of models.ts' overrideProblem (docs/providers.md).
import { createHash } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describeFsError, errorCode, InterruptedError, UsageError } from "../lib/errors.ts";
import { escapeControl } from "../lib/text/safe-text.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { mergeModels, ModelTable, overrideProblem } from "../lib/models/models.ts";
import { getCapped } from "../lib/providers/http/capped-get.ts";
import { describeJsonFailure, parseJsonc } from "../lib/text/json-text.ts";
import { describeIssues, MISSING_FIELDS } from "../lib/text/zod-error.ts";
import { configPath } from "../lib/settings/settings.ts";

type Env = Record<string, string | undefined>;

/** Where `loom models update` installs a table: beside the config file. null without XDG_CONFIG_HOME or HOME. */
export function installedModelsPath(env: Env): string | null {
  const config = configPath(env);
  return config === null ? null : `${dirname(config)}/models.json`;
}

/** The table every command uses, and where it came from ("built-in", or the installed file's path). */
export type TableInUse = {
  table: ModelTable;
  origin: string;
  updated: string | null;
  /** An installed table not used: the built-in one is newer (a newer binary since the update), or it breaks a rule. */
  ignored?: { path: string; updated: string | null; reason: string };
  /** The installed table's prices below the built-in one's (accepted with --allow-lower-prices), shown with it. */
  lowered?: string[];
};

/**
 * The built-in table with the installed one merged over it when that one is newer (a newer binary's table wins over an
 * older download) and keeps the rules every update is held to (models.ts: overrideProblem; its lower prices were
 * accepted when it was installed); else the built-in one. A file that cannot be read or parsed stops the command with
 * one line naming it; one dated in the future or breaking a rule is not used, and loom models and loom config say so.
 */
export function tableInUse(env: Env, { today }: { today: string }): TableInUse {
  const builtIn = { table: BUILT_IN_MODELS, origin: "built-in", updated: BUILT_IN_MODELS.updated ?? null };
  const path = installedModelsPath(env);
  if (path === null) return builtIn;
  let text: string;
  try {
    text = readTableFile(path);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return builtIn;
    throw new UsageError(`Cannot read the installed model table ${JSON.stringify(path)}: ${describeRead(error)}`);
  }
  const table = parseModels(text, { file: path });
  const updated = table.updated ?? null;
  if ((table.updated ?? "") <= (builtIn.updated ?? "")) {
    return { ...builtIn, ignored: { path, updated, reason: "is older" } };
  }
  const { problem, lowered } = overrideProblem(BUILT_IN_MODELS, table, { today, acceptLowerPrices: true });
  if (problem) return { ...builtIn, ignored: { path, updated, reason: `breaks a rule (${problem})` } };
  return { table: mergeModels(BUILT_IN_MODELS, table), origin: path, updated, ...(lowered.length ? { lowered } : {}) };
}

/** Today as YYYY-MM-DD by the clock (UTC): what the commands pass the table's rules. */
export function todayOf(now = Date.now()): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** "built-in, updated 2026-12-03 (0 days ago)": for loom models and loom config. */
export function describeTableInUse(
  { origin, updated, ignored, lowered = [] }: TableInUse,
  { today }: { today: string },
): string {
  const age = updated === null
    ? ""
    : ` (${Math.round((Date.parse(today) - Date.parse(updated)) / 86_400_000)} days ago)`;
  const older = ignored
    ? `; ${ignored.path} (updated ${ignored.updated ?? "unknown"}) ${ignored.reason} and is not used`
    : "";
  const lower = lowered.length > 0 ? `; prices below the built-in table's: ${lowered.join(", ")}` : "";
  return escapeControl(`model table: ${origin}, updated ${updated ?? "unknown"}${age}${older}${lower}`);
}

/** The largest table file Loom reads (the built-in one as JSON is about 30 KB). */
const MAX_TABLE_BYTES = 4 * 1024 * 1024;
/** How long `loom models update` waits for a URL's whole answer (redirects and checksum each on their own). */
const FETCH_TIMEOUT_MS = 60_000;

/**
 * A table file's text (a model table, a price table): a regular file of at most MAX_TABLE_BYTES (a link to /dev/zero, a FIFO or a huge file is refused
 * in one line before it is read whole). Throws the fs error (ENOENT for a missing file) or a usage error.
 */
export function readTableFile(path: string): string {
  const fd = openSync(path, "r");
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`${JSON.stringify(path)} is not a regular file`);
    if (stat.size > MAX_TABLE_BYTES) {
      throw new UsageError(`${JSON.stringify(path)} is ${stat.size} bytes, over the ${MAX_TABLE_BYTES}-byte cap`);
    }
    // One byte more than its size: a file that grows while read (a FIFO swapped in) is not read past the cap.
    const bytes = new Uint8Array(stat.size + 1);
    let total = 0;
    while (total < bytes.length) {
      const n = readSync(fd, bytes, total, bytes.length - total, null);
      if (n === 0) break;
      total += n;
    }
    if (total > stat.size) throw new UsageError(`${JSON.stringify(path)} changed while it was read`);
    return new TextDecoder().decode(bytes.subarray(0, total));
  } finally {
    closeSync(fd);
  }
}

const describeRead = (error: unknown) => (error instanceof UsageError ? error.message : describeFsError(error));

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

/** GET with no credentials, no redirect off the origin, capped in size and time, ended by the signal. */
async function get(
  url: string,
  { fetchImpl, signal, timeoutMs }: { fetchImpl: typeof fetch; signal?: AbortSignal; timeoutMs: number },
): Promise<{ status: number; text: string }> {
  const got = await getCapped(url, { fetch: fetchImpl, maxBytes: MAX_TABLE_BYTES, timeoutMs, signal, check: checkUrl });
  return { status: got.status, text: new TextDecoder().decode(got.bytes) };
}

/** The expected SHA-256 of a `models.json.sha256` file ("HEX  models.json" or "HEX"), or a usage error. */
function expectedSum(text: string, where: string): string {
  const hex = text.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new UsageError(`${where}: expected a SHA-256 (64 hex digits)`, "models_invalid");
  }
  return hex;
}

export type UpdateResult = {
  path: string;
  updated: string;
  models: number;
  from: string;
  /** "pinned": matched --checksum; "beside": matched FILE.sha256 / URL.sha256 (same origin: not proof); null: none. */
  checksum: "pinned" | "beside" | null;
  /** The prices it lowers below the built-in table's, accepted by --allow-lower-prices ("KEY: input 0.2 → 0.15"). */
  lowered: string[];
};

/** The flag that accepts an update's prices below the built-in table's. */
const LOWER_PRICES_FLAG = "--allow-lower-prices";

/**
 * Reads a table (a file, a URL, or the latest release's models.json), checks its checksum (the pinned --checksum, else
 * the one beside it when there is one), its schema, that it is dated neither in the future nor before the table in
 * use, and the rules every table merged over the built-in one keeps (models.ts: overrideProblem), then installs it
 * atomically in the config folder. It is merged over the built-in table when used, never in place of it.
 */
export async function updateModels(
  { from, env, cwd, sha256, allowLowerPrices = false, today }: {
    from: string | undefined;
    env: Env;
    cwd: string;
    /** The table's SHA-256 as the user pinned it (hex). */
    sha256?: string | undefined;
    allowLowerPrices?: boolean;
    today: string;
  },
  { fetchImpl = globalThis.fetch, signal, timeoutMs = FETCH_TIMEOUT_MS }: {
    fetchImpl?: typeof fetch;
    /** Ends the fetch (SIGINT, SIGTERM): an interrupt. */
    signal?: AbortSignal;
    timeoutMs?: number;
  } = {},
): Promise<UpdateResult> {
  const path = installedModelsPath(env);
  if (path === null) throw new UsageError("loom models update needs XDG_CONFIG_HOME or HOME to install the table");
  const pinned = sha256 === undefined ? null : expectedSum(sha256, "--checksum");
  const source = from ?? latestModelsUrl(env);
  const remote = /^[a-z]+:\/\//i.test(source);
  let text: string;
  let beside: string | null = null;
  if (remote) {
    checkUrl(source);
    const body = await get(source, { fetchImpl, signal, timeoutMs });
    if (body.status !== 200) throw new UsageError(`Cannot fetch ${source}: HTTP ${body.status}`);
    text = body.text;
    if (pinned === null) {
      const checksum = await get(`${source}.sha256`, { fetchImpl, signal, timeoutMs }).catch((error: unknown) => {
        if (error instanceof InterruptedError) throw error;
        return null;
      });
      if (checksum?.status === 200) beside = expectedSum(checksum.text, `${source}.sha256`);
    }
  } else {
    const file = resolve(cwd, source);
    try {
      text = readTableFile(file);
    } catch (error) {
      throw new UsageError(`--from ${JSON.stringify(source)}: ${describeRead(error)}`);
    }
    if (pinned === null) {
      let sumText: string | null = null;
      try {
        sumText = readTableFile(`${file}.sha256`);
      } catch (error) {
        if (errorCode(error) !== "ENOENT") {
          throw new UsageError(`--from ${JSON.stringify(source)}.sha256: ${describeRead(error)}`);
        }
      }
      if (sumText !== null) beside = expectedSum(sumText, `${source}.sha256`);
    }
  }
  const sum = pinned ?? beside;
  if (sum !== null) {
    const actual = createHash("sha256").update(text).digest("hex");
    if (actual !== sum) {
      const said = pinned !== null ? "--checksum says" : "its checksum file says";
      throw new UsageError(`${source}: the SHA-256 is ${actual}, ${said} ${sum}; not installed`, "models_invalid");
    }
  }
  const table = parseModels(text, { file: source });
  if (table.updated === undefined) {
    throw new UsageError(`${source}: the table has no "updated" date; not installed`, "models_invalid");
  }
  const review = overrideProblem(BUILT_IN_MODELS, table, {
    today,
    acceptLowerPrices: allowLowerPrices,
    lowerPricesFlag: LOWER_PRICES_FLAG,
  });
  if (review.problem) {
    throw new UsageError(
      `Invalid models file ${JSON.stringify(source)}: ${review.problem}; not installed`,
      "models_invalid",
    );
  }
  const current = tableInUse(env, { today });
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
    checksum: pinned !== null ? "pinned" : beside !== null ? "beside" : null,
    lowered: review.lowered,
  };
}

/**
 * The table in use (the built-in one, or a newer one `loom models update` installed), with the entries of FILE
 * (--models) replacing or adding to it under the same rules as an update, lower prices never accepted.
 */
export function readModels(
  file: string | undefined,
  { cwd, env, now }: { cwd: string; env: Record<string, string | undefined>; now?: () => number },
): ModelTable {
  const today = todayOf(now?.());
  const base = tableInUse(env, { today }).table;
  if (file === undefined) return base;
  let text: string;
  try {
    text = readTableFile(resolve(cwd, file));
  } catch (error) {
    throw new UsageError(`--models ${JSON.stringify(file)}: ${describeRead(error)}`);
  }
  const override = parseModels(text, { file });
  const { problem } = overrideProblem(base, override, { today });
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
