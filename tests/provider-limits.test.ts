// A model API that stalls, dribbles, or sends too much cannot hold a run: an idle timeout per attempt, a deadline per
// call that retries respect, and a response-size cap that fails before the body is read whole.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvider } from "../lib/run/create-provider.ts";
import {
  DEFAULT_DEADLINE_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
} from "../lib/providers/http/post-json.ts";
import { ProviderError } from "../lib/errors.ts";
import { describeNetworkError } from "../lib/providers/http/describe-network-error.ts";
import { rejection, sampleTurnRequest } from "./helpers/fake-provider-servers.ts";
import { runLoom } from "./helpers/binary.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function withServer(handler: Handler, run: (origin: string) => Promise<void>): Promise<void> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => req.on("data", () => {}).on("end", () => handler(req, res)));
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  try {
    await run(`http://127.0.0.1:${port}`);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const openai = (baseUrl: string, limits: Record<string, number>) =>
  createProvider({ kind: "openai", model: "gpt-4.1-mini", base_url: `${baseUrl}/v1`, ...limits }, {
    env: { OPENAI_API_KEY: "sk-test" },
    random: () => 0,
  });

test("the default limits stall a call for well under a minute in all", () => {
  assert.ok(DEFAULT_IDLE_TIMEOUT_MS < DEFAULT_DEADLINE_MS);
  assert.ok(DEFAULT_DEADLINE_MS <= 60_000);
  assert.ok(DEFAULT_MAX_RESPONSE_BYTES <= 16 * 1024 * 1024);
});

test("a server that accepts and never answers: retried on idle timeouts, given up at the call's deadline", async () => {
  let requests = 0;
  await withServer(() => void requests++, async (origin) => {
    const started = performance.now();
    const error = await rejection(
      openai(origin, { idle_timeout_ms: 300, deadline_ms: 1_500 }).complete(sampleTurnRequest(), { model: "m" }),
    );
    const elapsed = performance.now() - started;
    assert.ok(error instanceof ProviderError);
    assert.match(error.code, /^provider_(timeout|deadline)$/);
    assert.ok(requests >= 2, "an idle attempt is retried while the deadline allows");
    // That the deadline ended it (the server never answers), with room for a loaded 2-core machine: not a speed measure.
    assert.ok(elapsed < 30_000, `gave up after ${Math.round(elapsed)} ms, far past its 1.5 s deadline`);
  });
});

test("a server that dribbles a byte at a time never trips the idle timeout, but the deadline still ends the call", async () => {
  await withServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    const timer = setInterval(() => res.write(" "), 50);
    res.on("close", () => clearInterval(timer));
  }, async (origin) => {
    const error = await rejection(
      openai(origin, { idle_timeout_ms: 400, deadline_ms: 1_200 }).complete(sampleTurnRequest(), { model: "m" }),
    );
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, "provider_deadline");
    assert.match(error.message, /within the call's 1\.2 s deadline/);
  });
});

test("a response over the cap fails clearly without being read whole, by its length or while streaming", async () => {
  let sent = 0;
  await withServer((req, res) => {
    if (req.url?.includes("declared")) {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(1024 ** 3) });
      res.write("{");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (sent < 1024 ** 3 && res.write(chunk)) sent += chunk.length;
    };
    res.on("drain", pump);
    pump();
  }, async (origin) => {
    for (const path of ["/streamed", "/declared"]) {
      const error = await rejection(
        openai(`${origin}${path}`, { max_response_bytes: 1024 * 1024 }).complete(sampleTurnRequest(), { model: "m" }),
      );
      assert.ok(error instanceof ProviderError, String(error));
      assert.equal(error.code, "provider_response_too_large");
      assert.equal(error.retryable, false);
      assert.match(error.message, /over the 1048576-byte cap; it was not read/);
    }
    assert.ok(sent < 256 * 1024 * 1024, `${sent} bytes were pulled from a 1 GiB response`);
  });
});

test("network errors read the same on every runtime, without the runtime's own hints", () => {
  const bun = Object.assign(new TypeError("ECONNREFUSED: Unable to connect. Is the computer able to access the url?"), {
    code: "ECONNREFUSED",
  });
  assert.equal(describeNetworkError(bun), "connection refused");
  const closed = new TypeError(
    "The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()",
  );
  assert.equal(describeNetworkError(closed), "The socket connection was closed unexpectedly.");
  const deno = new TypeError("fetch failed", { cause: new Error("error sending request: connection reset") });
  assert.equal(describeNetworkError(deno), "error sending request: connection reset");
});

test("dist/loom with a stalled provider: gives up within the catalog's deadline; a base_url password is refused unseen", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-stall-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "ws"));
  await withServer(() => {}, async (origin) => {
    const password = "PW-canary@7d1f";
    const catalog = (baseUrl: string) =>
      JSON.stringify({
        defaults: { workspace: "ws" },
        models: {
          gpt: { kind: "openai", model: "gpt-4.1-mini", base_url: baseUrl, idle_timeout_ms: 300, deadline_ms: 1_000 },
        },
        slices: {
          fix: {
            description: "Fix it",
            intent: "{{request}}",
            instructions: "Work.",
            actions: ["run_tests"],
            test: { command: ["true"], timeout_ms: 10_000 },
            model: "gpt",
            limits: { max_steps: 3 },
          },
        },
        routes: { default: "fix" },
      });
    // The stand-in is the user's own server: they allow the default key to go there (lib/settings/settings.ts).
    const host = new URL(origin).host;
    const args = [
      "run",
      "--catalog",
      "catalog.json",
      "Fix it",
      "--context-report",
      "report.json",
      "--json",
      "--allow-key-host",
      host,
    ];
    writeFileSync(join(dir, "catalog.json"), catalog(`${origin}/v1`));
    const started = performance.now();
    const run = await runLoom(args, { cwd: dir, env: { OPENAI_API_KEY: "sk-test" } });
    const elapsed = performance.now() - started;
    assert.equal(run.code, 1, run.stderr);
    // A hang guard (the server never answers), with room for a loaded 2-core machine: not a speed measure.
    assert.ok(elapsed < 60_000, `the run took ${Math.round(elapsed)} ms`);
    assert.match(
      JSON.parse(readFileSync(join(dir, "report.json"), "utf8")).error.code,
      /^provider_(timeout|deadline)$/,
    );
    // A password in the base URL (one holding "@" too) is refused at start-up and shown nowhere.
    writeFileSync(join(dir, "catalog.json"), catalog(origin.replace("http://", `http://user:${password}@`) + "/v1"));
    const refused = await runLoom(args, { cwd: dir, env: { OPENAI_API_KEY: "sk-test" } });
    assert.equal(refused.code, 3, refused.stderr);
    const report = readFileSync(join(dir, "report.json"), "utf8");
    assert.equal(JSON.parse(report).error.code, "invalid_base_url");
    for (const [what, text] of [["stdout", refused.stdout], ["stderr", refused.stderr], ["report", report]]) {
      assert.ok(!text.includes("PW-canary") && !text.includes("7d1f"), `the base_url password is in ${what}`);
    }
  });
});
