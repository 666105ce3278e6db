// Loom's edges toward providers and the terminal: no cross-origin redirect gets the key and the prompt, a base URL's
// credentials are removed by parsing it, and the model's text reaches a terminal with its control characters escaped.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import fc from "fast-check";
import { postJson } from "../lib/providers/http/post-json.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import { redactUrlUserinfo } from "../lib/text/safe-text.ts";
import { renderResultText, type ResultSummary } from "../commands/reporter.ts";

async function serve(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; server: Server; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      hits.push(`${req.method} ${req.url} ${req.headers["x-api-key"] ?? ""} ${body}`);
      handle(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, hits };
}

const call = (url: string) =>
  postJson(url, {
    provider: "Test API",
    headers: { "x-api-key": "sk-secret-key" },
    body: { prompt: "the secret prompt" },
    keyEnv: "TEST_KEY",
    secret: "sk-secret-key",
    timeoutMs: 5_000,
    deadlineMs: 10_000,
  });

test("a 307 to another origin is refused: the other server never sees the key or the prompt", async (t) => {
  const elsewhere = await serve((_req, res) => res.end('{"stolen":true}'));
  t.after(() => elsewhere.server.close());
  const api = await serve((_req, res) => {
    res.writeHead(307, { location: `${elsewhere.url}/v1/messages` });
    res.end();
  });
  t.after(() => api.server.close());
  await assert.rejects(call(`${api.url}/v1/messages`), (error: Error & { code?: string }) => {
    assert.equal(error.code, "provider_redirect_refused");
    assert.match(error.message, /redirected to another origin \(http:\/\/127\.0\.0\.1:\d+\)/);
    return true;
  });
  assert.deepEqual(elsewhere.hits, []);
});

test("a 307 within the origin is followed with the same POST", async (t) => {
  const api = await serve((req, res) => {
    if (req.url === "/old") {
      res.writeHead(307, { location: "/new" });
      res.end();
    } else res.end('{"ok":true}');
  });
  t.after(() => api.server.close());
  assert.deepEqual(await call(`${api.url}/old`), { ok: true });
  assert.equal(api.hits.length, 2);
  assert.match(api.hits[1], /^POST \/new sk-secret-key .*the secret prompt/);
});

test("a base URL with a user name or password is refused without echoing them, whatever they hold", () => {
  fc.assert(fc.property(
    fc.stringMatching(/^[a-z]{3,8}$/),
    fc.string({ minLength: 6, maxLength: 20 }).filter((p) => /^[\x21-\x7e ]+$/.test(p) && !/[/?#\\]/.test(p)),
    (user, password) => {
      const base_url = `https://${user}:${password}@api.example.com/v1`;
      try {
        new URL(base_url);
      } catch {
        return; // not a URL at all: the configuration check refuses it before
      }
      assert.throws(
        () => createProvider({ kind: "openai", model: "m", base_url }, { env: { OPENAI_API_KEY: "k" } }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, "invalid_base_url");
          assert.ok(!error.message.includes(password), error.message);
          return true;
        },
      );
    },
  ));
});

test("redactUrlUserinfo hides a password holding @ whole", () => {
  assert.equal(redactUrlUserinfo("GET https://user:p@ss@host/v1 failed"), "GET https://***@host/v1 failed");
});

test("the model's finish summary and printed text reach the terminal with control characters escaped", () => {
  const summary = {
    outcome: "completed",
    status: "success",
    steps: 2,
    revision: "r1",
    summary: "fixed\r\u001b[32mall tests passed\u001b[0m",
    printed: ["hello\n  test: passed (exit 0)\u0007"],
    last_test: null,
    error: null,
    model_calls: 2,
    request_bytes: { total: 10, max: 5 },
    usage: { input: 10, cache_read: null, cache_write: null, output: 2 },
    duration_ms: 1200,
    report_path: null,
  } as unknown as ResultSummary;
  const text = renderResultText(summary, { label: "loom run" });
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(text.replace(/\n/g, ""), /[\u0000-\u001f\u007f]/);
  assert.match(text, /printed: hello\\n {2}test: passed \(exit 0\)\\u0007/);
  assert.equal(text.split("\n").filter((line) => line.includes("test: passed")).length, 1, "no forged line");
});
