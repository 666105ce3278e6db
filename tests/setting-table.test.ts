// A setting is one entry (issue 45): lib/settings/setting-table.ts holds each setting's flag, variable, config field,
// precedence, default, parsing and where `loom config` shows it; the specs, the config schemas, the precedence,
// `loom config`'s rows and the library's options are derived from it. On a scratch copy of the product code, a
// setting added to the table alone compiles and `loom config` shows it; a half-added one fails tsc.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { entryOf, parseSettingFlags, PRECEDENCE, SETTING_KEYS, SETTINGS } from "../lib/settings/setting-table.ts";
import { ProjectConfig, resolveSettings, USER_ONLY_FIELDS, UserConfig } from "../lib/settings/settings.ts";
import { CONFIG_SPEC, RUN_SPEC } from "../commands/specs.ts";
import { RUN_OPTION_NAMES } from "../lib/run/run-options.ts";
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { withSettingsTable } from "../scripts/gen-settings-table.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The flags of `loom run` that are not settings: what the run's input is made of (run.ts reads each). */
const RUN_OWN_FLAGS = [
  "actions",
  "test-command",
  "test-timeout",
  "allow-command",
  "instructions",
  "catalog",
  "slice",
  "workspace",
  "context-report",
  "record",
  "trace",
  "diff",
  "output-format",
  "json",
  "quiet",
];

test("every flag of loom run is a setting of the table or one of the run's own inputs; config takes every shown one", () => {
  const settingFlags = SETTING_KEYS.flatMap((key) => {
    const flag = entryOf(key).flag;
    return flag !== null && entryOf(key).commands.includes("run") ? [flag.name] : [];
  });
  assert.deepEqual(Object.keys(RUN_SPEC.flags).sort(), [...settingFlags, ...RUN_OWN_FLAGS].sort());
  // A setting loom config shows can be given to loom config as to loom run.
  for (const key of SETTING_KEYS) {
    const { flag, shown } = entryOf(key);
    if (flag !== null && shown !== null) {
      assert.ok(Object.hasOwn(CONFIG_SPEC.flags, flag.name), `config --${flag.name}`);
    }
  }
});

test("the config files, the precedence and the parsing are the table's", () => {
  for (const key of SETTING_KEYS) {
    const entry = entryOf(key);
    assert.equal(Object.hasOwn(UserConfig.shape, key), entry.schema !== null, `config.jsonc: ${key}`);
    const projectMay = entry.schema !== null && (entry.project === true || typeof entry.project === "object");
    assert.equal(Object.hasOwn(ProjectConfig.shape, key), projectMay, `.loom/config.jsonc: ${key}`);
    assert.equal(Object.hasOwn(USER_ONLY_FIELDS, key), typeof entry.project === "string", `user only: ${key}`);
    assert.equal(Object.hasOwn(PRECEDENCE, key), entry.precedence !== null, `precedence: ${key}`);
  }
  // Each flag is parsed by its entry: one bad value, one line naming the flag.
  assert.deepEqual(parseSettingFlags({ "max-steps": "7", "max-cost": "$0.5", "provider-deadline-ms": "100" }), {
    max_steps: 7,
    max_cost: 0.5,
    provider_deadline_ms: 100,
  });
  assert.throws(() => parseSettingFlags({ "max-cost": "free" }), /^.*--max-cost "free": expected an amount/);
  // --max-cost and --require-passing-tests go through the resolution: over the request's own.
  const plan = resolveSettings({ env: {}, flags: { max_cost: 2, require_passing_tests: true } });
  assert.ok(plan.ok);
  const run = plan.plan.request({ file: "r.json", model: "openai/gpt-5", limits: { max_steps: 3, max_cost_usd: 9 } });
  assert.ok(run.ok);
  assert.deepEqual(run.settings.max_cost, { value: 2, source: "flag", from: "--max-cost" });
  assert.deepEqual(run.settings.require_passing_tests, {
    value: true,
    source: "flag",
    from: "--require-passing-tests",
  });
  const bare = resolveSettings({ env: {} });
  assert.ok(bare.ok);
  const own = bare.plan.request({ file: "r.json", model: "openai/gpt-5", limits: { max_steps: 3, max_cost_usd: 9 } });
  assert.ok(own.ok);
  assert.deepEqual(own.settings.max_cost, { value: 9, source: "request", from: "r.json: limits.max_cost_usd" });
});

test("the library passes exactly its options: every setting option of the table, and the others once", () => {
  const settingOptions = SETTING_KEYS.flatMap((key) => {
    const option = (SETTINGS[key] as { option?: string }).option;
    return option === undefined ? [] : [option];
  });
  for (const option of settingOptions) assert.ok((RUN_OPTION_NAMES as readonly string[]).includes(option), option);
  assert.equal(new Set(RUN_OPTION_NAMES).size, RUN_OPTION_NAMES.length);
  const api = readFileSync(join(ROOT, "api.ts"), "utf8");
  assert.doesNotMatch(api, /^\s+maxCost,$/m, "api.ts lists the options by hand again");
});

test("loom config shows every setting the table says it shows, in the table's order", async () => {
  const { io, out } = fakeIo({ cwd: tmpdir(), env: { XDG_CONFIG_HOME: join(tmpdir(), "loom-no-config") } });
  assert.equal(await main(["config", "--json", "-m", "anthropic/claude-sonnet-5-5"], io), 0, out.stderr);
  const shown = Object.keys(JSON.parse(out.stdout).settings);
  const run = SETTING_KEYS.filter((key) => entryOf(key).shown === "run");
  const provider = SETTING_KEYS.filter((key) => entryOf(key).shown === "provider");
  assert.deepEqual(shown, [...run, ...provider]);
});

test("docs/cli.md's settings table is the table's (regenerate: bun scripts/gen-settings-table.ts)", () => {
  const doc = readFileSync(join(ROOT, "docs/cli.md"), "utf8");
  assert.equal(doc, withSettingsTable(doc));
  for (const key of Object.keys(PRECEDENCE)) assert.ok(doc.includes(`| \`${key}\` |`), key);
});

/** A scratch copy of the product code, edited by `edit`, then typechecked; `after` runs its main.ts. */
function scratch(
  edits: Record<string, (source: string) => string>,
): { dir: string; tsc: { status: number | null; stdout: string } } {
  const dir = mkdtempSync(join(tmpdir(), "loom-setting-table-"));
  for (
    const path of ["main.ts", "api.ts", "package.json", "tsconfig.json", "tsconfig.product.json", "commands", "lib"]
  ) {
    cpSync(join(ROOT, path), join(dir, path), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  for (const [file, edit] of Object.entries(edits)) {
    const source = readFileSync(join(dir, file), "utf8");
    const edited = edit(source);
    assert.notEqual(edited, source, `${file}: the edit is where this test expects it`);
    writeFileSync(join(dir, file), edited);
  }
  const tsc = spawnSync(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.product.json"], {
    cwd: dir,
    encoding: "utf8",
  });
  return { dir, tsc };
}

const TABLE = "lib/settings/setting-table.ts";
const ANCHOR = "  allow_key_host: setting<readonly string[]>()({";
/** A new setting, --step-retries N, as one entry of the table (and nothing else). */
const STEP_RETRIES = `  step_retries: setting<number>()({
    flag: { name: "step-retries", value: "N", default: "2", description: "re-ask a step at most N times" },
    section: "limits",
    commands: ["run", "config"],
    parse: (text, flag) => positiveInteger(flag, text),
    env: "LOOM_STEP_RETRIES",
    expected: "a positive integer",
    schema: z.coerce.number().int().positive(),
    describe: "How many times a step is re-asked",
    project: true,
    precedence: ["flag", "environment", "project", "config", "default"],
    default: 2,
    generic: true,
    shown: "run",
  }),
`;

test("a setting added to the table alone compiles, and loom config and loom run --help show it", {
  timeout: 600_000,
}, () => {
  const { dir, tsc } = scratch({ [TABLE]: (s) => s.replace(ANCHOR, STEP_RETRIES + ANCHOR) });
  try {
    assert.equal(tsc.status, 0, tsc.stdout);
    const loom = (args: string[], env: Record<string, string> = {}) =>
      spawnSync(join(ROOT, "node_modules", ".bin", "bun"), [join(dir, "main.ts"), ...args], {
        cwd: dir,
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", XDG_CONFIG_HOME: join(dir, "xdg"), ...env },
      });
    const config = loom(["config", "--json", "--step-retries", "5"]);
    assert.equal(config.status, 0, config.stderr);
    assert.deepEqual(JSON.parse(config.stdout).settings.step_retries, {
      value: 5,
      source: "flag",
      from: "--step-retries",
    });
    const byEnv = loom(["config"], { LOOM_STEP_RETRIES: "3" });
    assert.match(byEnv.stdout, /^step_retries\s+3\s+LOOM_STEP_RETRIES$/m, byEnv.stdout);
    const bad = loom(["config", "--step-retries", "0"]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--step-retries "0": expected a positive integer/);
    assert.match(loom(["run", "--help"]).stdout, /--step-retries N/);
    assert.match(loom(["schema", "config"]).stdout, /"step_retries"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a half-added setting or option fails tsc: shown but not resolved, a library option not passed", {
  timeout: 600_000,
}, () => {
  const halfEntry = STEP_RETRIES.replace("    generic: true,\n", "");
  const { dir, tsc } = scratch({
    [TABLE]: (s) => s.replace(ANCHOR, halfEntry + ANCHOR),
    "lib/run/run-options.ts": (s) =>
      s.replace(
        "  warn?: (message: string) => void;\n};",
        "  warn?: (message: string) => void;\n  stepRetries?: number;\n};",
      ),
  });
  try {
    assert.notEqual(tsc.status, 0, "tsc must refuse a half-added setting");
    const files = new Set([...tsc.stdout.matchAll(/^([\w./-]+)\(\d+,\d+\): error TS\d+/gm)].map((m) => m[1]));
    assert.deepEqual([...files].sort(), ["lib/run/run-options.ts", "lib/settings/settings.ts"], tsc.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
