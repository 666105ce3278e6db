// Attacks on Loom through the data it is handed about models (issue 42): a model table installed by `loom models update`
// (from a file or a URL), a --models file, an eval --prices file, and a local server's /props and /v1/models. None may
// disarm --max-cost (zero or lower prices), reroute or un-retire a model, remove the table's models, pin itself with a
// date in the future, put an escape sequence on the terminal, or hold Loom with an endless body, a redirect elsewhere
// or a server that never answers. Every server here listens on loopback, is started by the test, and sends a bounded
// number of bytes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { type ModelEntry, type ModelTable, retirementWarningOf } from "../lib/models/models.ts";
import { readServerContext } from "../lib/providers/openai/read-server-context.ts";
import { readModels, updateModels } from "../commands/models-table.ts";
import { parseModelRef } from "../lib/models/provider-kinds.ts";
import fc from "fast-check";
import { ROOT, startLoom, waitFor } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";

/** Every table below is dated before this (the clock the commands are handed). */
const TODAY = "2026-12-25";
const LUNA = "openai/gpt-5.6-luna";
const luna = (): ModelEntry => {
  const entry = BUILT_IN_MODELS.models[LUNA];
  assert.ok(entry?.prices);
  return entry;
};
const ESC = "\u001b";
/** The cap on a local server's /props and /v1/models (lib/providers/openai/read-server-context.ts). */
const SERVER_INFO_MAX_BYTES = 1024 * 1024;

/** A table of only `models`, dated 2026-12-20 (an update merges over the built-in table). */
function update(models: Record<string, unknown>, updated = "2026-12-20"): string {
  return JSON.stringify({ format: 1, currency: "USD", updated, models });
}

type Out = { code: number; stdout: string; stderr: string };
type Home = {
  home: string;
  installed: string;
  loom: (...argv: string[]) => Promise<Out>;
  file: (text: string) => string;
};

async function withHome(run: (home: Home) => Promise<void>, { signal }: { signal?: AbortSignal } = {}) {
  const home = mkdtempSync(join(tmpdir(), "loom-model-table-attack-"));
  let files = 0;
  const loom = async (...argv: string[]) => {
    const { io, out } = fakeIo({ cwd: home, env: { XDG_CONFIG_HOME: join(home, "config") }, signal });
    io.now = () => Date.parse(TODAY);
    const code = await main(argv, io);
    return { code, stdout: out.stdout, stderr: out.stderr };
  };
  const file = (text: string) => {
    const path = join(home, `table-${files++}.json`);
    writeFileSync(path, text);
    return path;
  };
  try {
    await run({ home, installed: join(home, "config", "loom", "models.json"), loom, file });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const tableOf = (out: Out) => JSON.parse(out.stdout) as ModelTable;

test("an update with a zero price, or a price below the built-in table's, is not installed; --allow-lower-prices installs a lower one and lists it", async () => {
  await withHome(async ({ installed, loom, file }) => {
    const zero = file(update({ [LUNA]: { ...luna(), prices: { ...luna().prices, input: 0 } } }));
    const refused = await loom("models", "update", "--from", zero);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /models\.openai\/gpt-5\.6-luna\.prices\.input|prices\.input/);
    assert.equal(existsSync(installed), false);
    // A new model priced at zero: refused too (--max-cost would never stop a run on it).
    const free = file(update({ "openai/gpt-9": { ...luna(), prices: { ...luna().prices, output: 0 } } }));
    assert.equal((await loom("models", "update", "--from", free)).code, 2);
    assert.equal((await loom("models", "--models", free)).code, 2, "nor through --models");
    assert.equal(existsSync(installed), false);
    // Lower, above zero: the user's flag, and the line that says what was lowered.
    const lower = file(update({ [LUNA]: { ...luna(), prices: { ...luna().prices, input: 0.01 } } }));
    const silent = await loom("models", "update", "--from", lower);
    assert.equal(silent.code, 2);
    assert.match(silent.stderr, /prices\.input 0\.01 is below Loom's list price 0\.2 .*--allow-lower-prices/);
    assert.equal(existsSync(installed), false);
    const allowed = await loom("models", "update", "--from", lower, "--allow-lower-prices");
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(
      allowed.stdout,
      /lower price accepted \(--allow-lower-prices\): openai\/gpt-5\.6-luna: input 0\.2 → 0\.01/,
    );
    assert.equal(tableOf(await loom("models", "--json")).models[LUNA]?.prices?.input, 0.01);
    // Shown wherever the table in use is named.
    const shown = (await loom("models")).stdout.split("\n")[0];
    assert.match(shown ?? "", /prices below the built-in table's: openai\/gpt-5\.6-luna: input 0\.2 → 0\.01$/);
  });
});

test("loom eval --prices with a zero price is refused, and one below the table's needs --allow-lower-prices", async () => {
  await withHome(async ({ home, loom, file }) => {
    const price = (input: number) =>
      file(JSON.stringify({
        currency: "USD",
        models: { [LUNA]: { input, output: 1.6, cache_read: 0.02, source: "https://example.com", date: "2026-12-01" } },
      }));
    const args = ["eval", join(home, "no-suite"), "--model", LUNA, "--sandbox", "off", "--out", join(home, "out")];
    const zero = await loom(...args, "--prices", price(0));
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /Invalid price table .*input/);
    const lower = await loom(...args, "--prices", price(0.1));
    assert.equal(lower.code, 2);
    assert.match(lower.stderr, /input 0\.2 → 0\.1 is below the model table's price .*--allow-lower-prices/);
    // With the flag the prices pass (the run then stops at the missing suite) and the lowered rate is listed.
    // A price file that is not a regular file (a link to /dev/zero) is refused before it is read.
    const { symlinkSync } = await import("node:fs");
    symlinkSync("/dev/zero", join(home, "zero.json"));
    const endless = await loom(...args, "--prices", join(home, "zero.json"));
    assert.equal(endless.code, 2);
    assert.match(endless.stderr, /--prices .*zero\.json.*is not a regular file/);
    const allowed = await loom(...args, "--prices", price(0.1), "--allow-lower-prices");
    assert.match(
      allowed.stderr,
      /lower price accepted \(--allow-lower-prices\): openai\/gpt-5\.6-luna: input 0\.2 → 0\.1/,
    );
  });
});

test("an update cannot reroute an id, un-retire gpt-5-codex, remove the table's models, or pin itself with a future date", async () => {
  await withHome(async ({ installed, loom, file }) => {
    // Rerouting: another entry claiming the id the built-in table gives GPT-5.6 Luna.
    const reroute = file(update({ "openai/gpt-evil": { ...luna(), aliases: ["gpt-5.6-luna"] } }));
    const rerouted = await loom("models", "update", "--from", reroute);
    assert.equal(rerouted.code, 2);
    assert.match(rerouted.stderr, /aliases names "gpt-5\.6-luna", which is "openai\/gpt-5\.6-luna" .*reroute/);
    // Dropping an alias from its entry would leave the alias unknown, run unpriced: the merged entry keeps it.
    const [aliased, entry] = Object.entries(BUILT_IN_MODELS.models).find(([, e]) => e.prices && e.aliases?.length)!;
    const [alias = ""] = entry.aliases ?? [];
    const dropped = await loom("models", "--json", "--models", file(update({ [aliased]: { ...entry, aliases: [] } })));
    assert.equal(dropped.code, 0, dropped.stderr);
    assert.ok(tableOf(dropped).models[aliased]?.aliases?.includes(alias), `${aliased} keeps ${alias}`);
    // Un-retiring, from an update or a --models file; postponing is undoing too.
    const codex = BUILT_IN_MODELS.models["openai/gpt-5-codex"];
    assert.ok(codex?.retired);
    for (const retired of [null, { date: "2027-01-01", replacement: "gpt-5.4" }]) {
      const revive = file(update({ "openai/gpt-5-codex": { ...codex, retired } }));
      const revived = await loom("models", "update", "--from", revive);
      assert.equal(revived.code, 2);
      assert.match(revived.stderr, /retired .*but Loom's table retires it on 2026-07-23/);
      assert.equal((await loom("models", "--models", revive)).code, 2);
    }
    // A date in the future: refused (it would outrank every later table and binary).
    const pin = file(update({}, "9999-12-31"));
    const pinned = await loom("models", "update", "--from", pin);
    assert.equal(pinned.code, 2);
    assert.match(pinned.stderr, /updated 9999-12-31 is in the future \(today is 2026-12-25\)/);
    assert.equal(existsSync(installed), false);
    // A table with no models installs, and removes nothing: it is merged over the built-in table.
    const empty = await loom("models", "update", "--from", file(update({})));
    assert.equal(empty.code, 0, empty.stderr);
    const table = tableOf(await loom("models", "--json"));
    assert.equal(Object.keys(table.models).length, Object.keys(BUILT_IN_MODELS.models).length);
    assert.deepEqual(table.models["openai/gpt-5-codex"]?.retired, codex.retired);
    // A future-dated table already in the config folder (put there by an older Loom) is not used, and said so.
    writeFileSync(installed, update({ [LUNA]: { ...luna(), prices: { ...luna().prices, input: 9 } } }, "9999-12-31"));
    assert.equal(tableOf(await loom("models", "--json")).models[LUNA]?.prices?.input, luna().prices?.input);
    assert.match((await loom("models")).stdout, /^model table: built-in, .*\(updated 9999-12-31\) breaks a rule/);
  });
});

test("a --models file's retirement replacement reaches stderr with its escape sequence written as \\e", async () => {
  await withHome(async ({ loom, file }) => {
    const soon = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
    const models = file(update({
      "openai/gpt-x": { ...luna(), retired: { date: soon, replacement: `gpt-6${ESC}[2J${ESC}]0;owned\u0007` } },
    }, luna().date));
    const run = await loom("run", "-m", "openai/gpt-x", "--models", models, "say hi");
    assert.match(run.stderr, /shuts down on .*use gpt-6\\e\[2J\\e\]0;owned\\u0007/);
    assert.ok(!run.stderr.includes(ESC), "no raw escape on stderr");
    const warning = retirementWarningOf(
      {
        key: "openai/gpt-x",
        provider: "openai",
        id: "gpt-x",
        known: true,
        entry: { ...luna(), retired: { date: "2026-12-10", replacement: `${ESC}[31m` } },
      },
      { today: "2026-12-06" },
    );
    assert.ok(warning !== null && !warning.includes(ESC));
  });
});

test("loom report's text escapes the control characters of a report's file name", async () => {
  await withHome(async ({ home, loom }) => {
    const name = join(home, `run${ESC}[31m${ESC}]0;title\u0007.json`);
    copyFileSync(join(ROOT, "testdata", "reports", "run-with-cache.json"), name);
    const out = await loom("report", name);
    assert.equal(out.code, 0, out.stderr);
    assert.ok(!out.stdout.includes(ESC) && !out.stdout.includes("\u0007"), "no raw control character on stdout");
    assert.match(out.stdout, /run\\e\[31m\\e\]0;title\\u0007\.json/);
  });
});

test("property: whatever a --models file says, every model of the table keeps its id, a price at least Loom's and its retirement", () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-model-table-property-"));
  const keys = Object.keys(BUILT_IN_MODELS.models);
  const ids = keys.map((key) => parseModelRef(key)?.id ?? key);
  const edit = fc.record({
    key: fc.oneof(fc.constantFrom(...keys), fc.constantFrom("openai/gpt-new", "anthropic/claude-new")),
    factor: fc.double({ min: 0.01, max: 4, noNaN: true }),
    retired: fc.option(fc.constantFrom("2026-01-01", "2026-07-23", "2027-06-01"), { nil: null }),
    alias: fc.option(fc.constantFrom(...ids), { nil: null }),
  });
  try {
    fc.assert(
      fc.property(fc.array(edit, { maxLength: 5 }), (edits) => {
        const models: Record<string, ModelEntry> = {};
        for (const { key, factor, retired, alias } of edits) {
          const base = BUILT_IN_MODELS.models[key] ?? luna();
          const prices = base.prices && {
            ...base.prices,
            input: base.prices.input * factor,
            output: base.prices.output * factor,
          };
          models[key] = {
            ...base,
            prices,
            retired: retired === null ? null : { date: retired, replacement: "gpt-5.4" },
            aliases: alias === null ? [] : [alias],
          };
        }
        const file = join(dir, "models.json");
        writeFileSync(file, JSON.stringify({ format: 1, currency: "USD", models }));
        let table: ModelTable;
        try {
          table = readModels(file, { cwd: dir, env: {}, now: () => Date.parse(TODAY) });
        } catch {
          return; // refused: the table in use stays Loom's
        }
        for (const [key, entry] of Object.entries(BUILT_IN_MODELS.models)) {
          const ref = parseModelRef(key);
          assert.ok(ref);
          for (const id of [ref.id, ...(entry.aliases ?? [])]) {
            const found = Object.hasOwn(table.models, `${ref.provider}/${id}`)
              ? table.models[`${ref.provider}/${id}`]
              : Object.entries(table.models).find(([k, e]) =>
                k.startsWith(`${ref.provider}/`) && e.aliases?.includes(id)
              )
                ?.[1];
            // An id keyed by itself, or an alias of its own entry: never another model's.
            const owner = Object.entries(table.models).find(([k, e]) =>
              k === `${ref.provider}/${id}` || (k.startsWith(`${ref.provider}/`) && e.aliases?.includes(id))
            )?.[0];
            assert.ok(owner === key || owner === `${ref.provider}/${id}`, `${id} resolves to ${owner}, not ${key}`);
            assert.ok(found);
            if (entry.prices) {
              assert.ok(found.prices, `${key} keeps a price`);
              assert.ok(found.prices.input >= entry.prices.input && found.prices.output >= entry.prices.output);
            }
            if (entry.retired) {
              assert.ok(found.retired && found.retired.date <= entry.retired.date, `${key} stays retired`);
            }
          }
        }
      }),
      { numRuns: 150 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- loom models update --from URL ----

type Server = { base: string; seen: string[]; close: () => Promise<void> };

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  { host = "127.0.0.1" }: { host?: string } = {},
): Promise<Server> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? "");
    handler(req, res);
  });
  await new Promise<void>((done) => server.listen(0, host, done));
  return {
    base: `http://${host}:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

/** Writes spaces until `limit` bytes or the client goes away; returns how many were written, when done. */
function endless(res: ServerResponse, { limit = 64 * 1024 * 1024 }: { limit?: number } = {}): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let sent = 0;
  return new Promise((done) => {
    res.on("close", () => done(sent));
    res.writeHead(200, { "content-type": "application/json" });
    const pump = () => {
      while (sent < limit && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
  });
}

test("models update --from URL follows no redirect to another origin (another port, 127.0.0.2): the target is never asked", async () => {
  const other = await serve((_req, res) => void res.writeHead(200).end(update({})));
  const second = await serve((_req, res) => void res.writeHead(200).end(update({})), { host: "127.0.0.2" });
  const table = update({ [LUNA]: { ...luna(), prices: { ...luna().prices, input: 0.3 } } });
  const origin = await serve((req, res) => {
    if (req.url === "/away") return void res.writeHead(302, { location: `${other.base}/models.json` }).end();
    if (req.url === "/loopback2") return void res.writeHead(301, { location: `${second.base}/models.json` }).end();
    if (req.url === "/moved") return void res.writeHead(307, { location: "/release/models.json" }).end();
    if (req.url === "/release/models.json") return void res.writeHead(200).end(table);
    res.writeHead(404).end();
  });
  try {
    await withHome(async ({ loom }) => {
      const away = await loom("models", "update", "--from", `${origin.base}/away`);
      assert.equal(away.code, 2);
      assert.match(away.stderr, /redirects to http:\/\/127\.0\.0\.1:\d+\/models\.json, another origin: not followed/);
      const loopback2 = await loom("models", "update", "--from", `${origin.base}/loopback2`);
      assert.equal(loopback2.code, 2);
      assert.match(loopback2.stderr, /redirects to http:\/\/127\.0\.0\.2:\d+\/models\.json, another origin/);
      assert.deepEqual([other.seen, second.seen], [[], []], "no request reached another origin");
      // Within the origin a redirect is followed.
      const moved = await loom("models", "update", "--from", `${origin.base}/moved`);
      assert.equal(moved.code, 0, moved.stderr);
      assert.equal(tableOf(await loom("models", "--json")).models[LUNA]?.prices?.input, 0.3);
    });
  } finally {
    await Promise.all([origin.close(), other.close(), second.close()]);
  }
});

test("models update --from URL stops reading an endless body at its cap, in one line", async () => {
  const sent: Promise<number>[] = [];
  const server = await serve((_req, res) => void sent.push(endless(res)));
  try {
    await withHome(async ({ installed, loom }) => {
      const out = await loom("models", "update", "--from", `${server.base}/models.json`);
      assert.equal(out.code, 2);
      assert.match(out.stderr, /sent more than 4194304 bytes; reading stopped there\n$/);
      assert.equal(out.stderr.trim().split("\n").length, 1);
      assert.equal(existsSync(installed), false);
    });
    const [bytes = 0] = await Promise.all(sent);
    assert.ok(bytes < 64 * 1024 * 1024, `the server stopped being read (${bytes} bytes sent)`);
  } finally {
    await server.close();
  }
});

test("models update --from URL ends at its deadline, and on the signal (exit 130), when the server never answers", async () => {
  const server = await serve(() => {}); // holds every request
  const home = mkdtempSync(join(tmpdir(), "loom-model-table-hang-"));
  try {
    await assert.rejects(
      updateModels(
        { from: `${server.base}/models.json`, env: { XDG_CONFIG_HOME: home }, cwd: home, today: TODAY },
        { timeoutMs: 200 },
      ),
      /Cannot fetch .*no whole answer within 200 ms/,
    );
    const controller = new AbortController();
    const asked = server.seen.length;
    const pending = withHome(async ({ loom }) => {
      const out = await loom("models", "update", "--from", `${server.base}/models.json`);
      assert.equal(out.code, 130, out.stderr);
    }, { signal: controller.signal });
    await waitFor(() => server.seen.length > asked, { what: "the request to reach the server" });
    controller.abort();
    await pending;
  } finally {
    rmSync(home, { recursive: true, force: true });
    await server.close();
  }
});

test("the loom binary's models update ends on SIGTERM while the server holds the request", async () => {
  const server = await serve(() => {});
  const home = mkdtempSync(join(tmpdir(), "loom-model-table-sig-"));
  try {
    const loom = startLoom(["models", "update", "--from", `${server.base}/models.json`], {
      cwd: home,
      env: { XDG_CONFIG_HOME: join(home, "config") },
    });
    await waitFor(() => server.seen.length > 0, { what: "the request to reach the server" });
    process.kill(loom.pid, "SIGTERM"); // (not child.kill: Deno then reports the signal, not the exit code)
    const done = await loom.done;
    assert.equal(done.code, 130, done.stderr);
  } finally {
    rmSync(home, { recursive: true, force: true });
    await server.close();
  }
});

test("models update: no network is exit 3; a checksum beside the table is said to prove nothing; --checksum pins one", async () => {
  const table = update({ [LUNA]: { ...luna(), prices: { ...luna().prices, input: 0.3 } } });
  const sum = createHash("sha256").update(table).digest("hex");
  const server = await serve((req, res) => {
    if (req.url === "/models.json") return void res.writeHead(200).end(table);
    if (req.url === "/models.json.sha256") return void res.writeHead(200).end(`${sum}  models.json\n`);
    res.writeHead(404).end();
  });
  const closed = await serve(() => {});
  const gone = closed.base;
  await closed.close();
  try {
    await withHome(async ({ loom }) => {
      const offline = await loom("models", "update", "--from", `${gone}/models.json`);
      assert.equal(offline.code, 3, offline.stderr);
      assert.match(offline.stderr, /Cannot fetch .*connection refused/i);
      const wrong = await loom(
        "models",
        "update",
        "--from",
        `${server.base}/models.json`,
        "--checksum",
        "0".repeat(64),
      );
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /--checksum says 0{64}; not installed/);
      const beside = await loom("models", "update", "--from", `${server.base}/models.json`);
      assert.equal(beside.code, 0, beside.stderr);
      assert.match(beside.stdout, /checksum verified \(it came from the same place as the table: .*not a forged table/);
    });
    await withHome(async ({ loom }) => {
      const pinned = await loom("models", "update", "--from", `${server.base}/models.json`, "--checksum", sum);
      assert.equal(pinned.code, 0, pinned.stderr);
      assert.match(pinned.stdout, /SHA-256 matches --checksum/);
    });
  } finally {
    await server.close();
  }
});

// ---- a local server's /props and /v1/models ----

test("a local server's endless /props or /v1/models is read to 1 MiB at most, then one line", async () => {
  const sent: Promise<number>[] = [];
  const server = await serve((req, res) => {
    if (req.url === "/props" && req.headers["x-which"] === "props") return void sent.push(endless(res));
    if (req.url === "/v1/models" && req.headers["x-which"] === "models") return void sent.push(endless(res));
    res.writeHead(404).end();
  });
  try {
    for (const which of ["props", "models"]) {
      await assert.rejects(
        readServerContext({ baseUrl: `${server.base}/v1`, model: "m", headers: { "x-which": which } }),
        (error: Error) => {
          assert.match(error.message, new RegExp(`sent more than ${SERVER_INFO_MAX_BYTES} bytes`));
          assert.equal(error.message.split("\n").length, 1);
          return true;
        },
      );
    }
    for (const bytes of await Promise.all(sent)) assert.ok(bytes < 64 * 1024 * 1024, `${bytes} bytes sent`);
  } finally {
    await server.close();
  }
});

// A config folder the test writes: the installed table is a regular file Loom reads whole only when small.
test("an installed table that is not a regular file (a FIFO, /dev/zero) stops the command in one line", async () => {
  await withHome(async ({ home, loom }) => {
    mkdirSync(join(home, "config", "loom"), { recursive: true });
    const { symlinkSync } = await import("node:fs");
    symlinkSync("/dev/zero", join(home, "config", "loom", "models.json"));
    const out = await loom("models", "--json");
    assert.equal(out.code, 2);
    assert.match(out.stderr, /models\.json" is not a regular file/);
  });
});
