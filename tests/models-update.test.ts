// loom models update: a newer, schema-checked table installed atomically in the config folder from a file or a URL on
// this machine, used over the built-in one by every command and named by loom models and loom config; an older one, a
// broken one or one whose checksum does not match is refused and the table in use stays. The fetch sends no key.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import type { ModelTable } from "../lib/models/models.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { latestModelsUrl } from "../commands/models-table.ts";

const KEYS = { ANTHROPIC_API_KEY: "sk-ant-secret-update", OPENAI_API_KEY: "sk-secret-update" };

/** The built-in table dated `updated`, with GPT-5.6 Luna's input price set to `luna` (above the built-in 0.2). */
function table(updated: string, luna = 0.25): ModelTable {
  const entry = BUILT_IN_MODELS.models["openai/gpt-5.6-luna"];
  assert.ok(entry?.prices);
  return {
    ...BUILT_IN_MODELS,
    updated,
    models: {
      ...BUILT_IN_MODELS.models,
      "openai/gpt-5.6-luna": { ...entry, prices: { ...entry.prices, input: luna } },
    },
  };
}

async function withHome(
  run: (home: string, loom: (...argv: string[]) => Promise<Out>) => Promise<void>,
  env: Record<string, string> = {},
) {
  const home = mkdtempSync(join(tmpdir(), "loom-models-update-"));
  const loom = async (...argv: string[]) => {
    const { io, out } = fakeIo({ cwd: home, env: { XDG_CONFIG_HOME: join(home, "config"), ...KEYS, ...env } });
    io.now = () => Date.parse(TODAY); // the tables below are dated before it
    const code = await main(argv, io);
    return { code, stdout: out.stdout, stderr: out.stderr };
  };
  try {
    await run(home, loom);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
type Out = { code: number; stdout: string; stderr: string };
const TODAY = "2026-12-25";

const installed = (home: string) => join(home, "config", "loom", "models.json");
const lunaInput = (out: Out) => (JSON.parse(out.stdout) as ModelTable).models["openai/gpt-5.6-luna"]?.prices?.input;

test("loom models update --from FILE installs a newer table every command then uses; loom models and loom config name it", async () => {
  await withHome(async (home, loom) => {
    const file = join(home, "models.json");
    writeFileSync(file, JSON.stringify(table("2026-12-20")));
    const done = await loom("models", "update", "--from", file);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /^installed the model table of 2026-12-20 \(\d+ models\) from .* in .*models\.json\n$/);
    assert.equal((JSON.parse(readFileSync(installed(home), "utf8")) as ModelTable).updated, "2026-12-20");
    // No temporary file is left beside it (the write is a rename).
    assert.deepEqual(readdirSync(join(home, "config", "loom")), ["models.json"]);
    assert.equal(lunaInput(await loom("models", "--json")), 0.25);
    const text = await loom("models");
    assert.match(text.stdout.split("\n")[0] ?? "", /^model table: .*models\.json, updated 2026-12-20 \(/);
    const config = await loom("config");
    assert.match(config.stdout, /^model table: .*models\.json, updated 2026-12-20/m);
    // A --models FILE still adds to the installed table.
    const extra = join(home, "extra.json");
    const entry = BUILT_IN_MODELS.models["openai/gpt-6-luna"];
    writeFileSync(extra, JSON.stringify({ format: 1, currency: "USD", models: { "openai/gpt-9": entry } }));
    const merged = JSON.parse((await loom("models", "--json", "--models", extra)).stdout) as ModelTable;
    assert.ok(merged.models["openai/gpt-9"]);
    assert.equal(merged.models["openai/gpt-5.6-luna"]?.prices?.input, 0.25);
  });
});

test("loom models update refuses a table that is not newer, fails the schema or whose checksum does not match; the table in use stays", async () => {
  await withHome(async (home, loom) => {
    const file = join(home, "models.json");
    // Not newer than the built-in table.
    writeFileSync(file, JSON.stringify(table(BUILT_IN_MODELS.updated ?? "2026-12-03")));
    const stale = await loom("models", "update", "--from", file);
    assert.equal(stale.code, 2);
    assert.match(stale.stderr, /not newer than the one in use \(built-in, 2026-12-06\); not installed\n$/);
    // An entry with a field the schema lacks (a base URL would route a key elsewhere): refused, naming the field.
    const bad = table("2026-12-20") as unknown as { models: Record<string, Record<string, unknown>> };
    bad.models["openai/gpt-5.6-luna"] = { ...bad.models["openai/gpt-5.6-luna"], base_url: "https://evil.example" };
    writeFileSync(file, JSON.stringify(bad));
    const invalid = await loom("models", "update", "--from", file);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /Invalid models file .*base_url/);
    // No updated date.
    const { updated: _, ...undated } = table("2026-12-20");
    writeFileSync(file, JSON.stringify(undated));
    assert.match((await loom("models", "update", "--from", file)).stderr, /has no "updated" date/);
    // A checksum file beside it that does not match.
    writeFileSync(file, JSON.stringify(table("2026-12-20")));
    writeFileSync(`${file}.sha256`, `${"0".repeat(64)}  models.json\n`);
    const mismatch = await loom("models", "update", "--from", file);
    assert.equal(mismatch.code, 2);
    assert.match(mismatch.stderr, /its checksum file says 0{64}; not installed/);
    assert.equal(existsSync(installed(home)), false, "nothing was installed");
    // The right checksum: installed and said so. Then an older table than the installed one is refused.
    const text = readFileSync(file, "utf8");
    writeFileSync(`${file}.sha256`, `${createHash("sha256").update(text).digest("hex")}  models.json\n`);
    const ok = await loom("models", "update", "--from", file);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /checksum verified/);
    rmSync(`${file}.sha256`);
    writeFileSync(file, JSON.stringify(table("2026-12-10", 9)));
    const older = await loom("models", "update", "--from", file);
    assert.match(older.stderr, /not newer than the one in use \(.*models\.json, 2026-12-20\)/);
    assert.equal(lunaInput(await loom("models", "--json")), 0.25, "the installed table stays");
    // An installed table older than the built-in one (a newer binary since): the built-in one is used, and said so.
    writeFileSync(installed(home), JSON.stringify(table("2026-11-01", 9)));
    const shown = await loom("models");
    assert.match(
      shown.stdout.split("\n")[0] ?? "",
      /^model table: built-in, .*models\.json \(updated 2026-11-01\) is older/,
    );
    assert.equal(
      lunaInput(await loom("models", "--json")),
      BUILT_IN_MODELS.models["openai/gpt-5.6-luna"]?.prices?.input,
    );
  });
});

test("loom models update --from URL reads a table from this machine with its checksum and sends no credentials", async () => {
  const text = JSON.stringify(table("2026-12-20", 0.28));
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    if (req.url === "/release/models.json") return res.writeHead(200).end(text);
    if (req.url === "/release/models.json.sha256") {
      return res.writeHead(200).end(`${createHash("sha256").update(text).digest("hex")}  models.json\n`);
    }
    res.writeHead(404).end("not found");
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await withHome(async (_home, loom) => {
      const done = await loom("models", "update", "--from", `${base}/release/models.json`);
      assert.equal(done.code, 0, done.stderr);
      assert.match(done.stdout, /checksum verified/);
      assert.equal(lunaInput(await loom("models", "--json")), 0.28);
      const missing = await loom("models", "update", "--from", `${base}/nothing/models.json`);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /HTTP 404/);
      // Plain HTTP to another machine is refused before any request.
      const remote = await loom("models", "update", "--from", "http://example.com/models.json");
      assert.match(remote.stderr, /only https:\/\/ URLs \(or http:\/\/ to this machine\)/);
    });
    // With no --from: the latest release's file (LOOM_MODELS_URL points it at this machine here).
    await withHome(async (_home, loom) => {
      const done = await loom("models", "update");
      assert.equal(done.code, 0, done.stderr);
      assert.match(done.stdout, new RegExp(`from ${base}/release/models\\.json in `));
    }, { LOOM_MODELS_URL: `${base}/release/models.json` });
    assert.deepEqual(seen.map((s) => s.url), [
      "/release/models.json",
      "/release/models.json.sha256",
      "/nothing/models.json",
      "/release/models.json",
      "/release/models.json.sha256",
    ]);
    for (const { headers } of seen) {
      assert.equal(headers.authorization, undefined);
      assert.equal(headers["x-api-key"], undefined);
      assert.equal(headers.cookie, undefined);
      assert.ok(!JSON.stringify(headers).includes("secret-update"), "no key in any header");
    }
  } finally {
    await new Promise((done) => server.close(done));
  }
});

test("with no --from, loom models update reads the latest GitHub release's models.json (install.sh's LOOM_REPO)", () => {
  assert.equal(latestModelsUrl({}), "https://github.com/loom-dev/loom/releases/latest/download/models.json");
  assert.equal(
    latestModelsUrl({ LOOM_REPO: "me/loom" }),
    "https://github.com/me/loom/releases/latest/download/models.json",
  );
});
