// --trace FILE through the compiled binary: one JSON line per model call, the TurnRequest exactly as measured (its
// bytes are the report's, call by call) and, for live runs, the provider request bodies as sent, never the key.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ROOT, runLoom } from "./helpers/binary.ts";
import { anthropicAnswer, startAnthropicServer } from "./helpers/fake-provider-servers.ts";

const FIX_BUG = resolve(ROOT, "testdata/workflows/fix-bug.jsonl");
const KEY = "sk-ant-trace-test-key-0123456789";

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-trace-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const readLines = (path: string) =>
  readFileSync(path, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
const utf8 = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

for (const policy of ["legacy", "bounded"]) {
  test(`the trace of a ${policy} replay reproduces the report's request bytes call by call`, async (t) => {
    const dir = tempDir(t);
    const r = await runLoom([
      "replay",
      FIX_BUG,
      "--context-policy",
      policy,
      "--trace",
      "trace.jsonl",
      "--context-report",
      "report.json",
      "--quiet",
    ], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const trace = readLines(join(dir, "trace.jsonl"));
    const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8"));
    assert.equal(trace.length, report.calls.length);
    trace.forEach((line, i) => {
      assert.equal(line.trace_version, 1);
      assert.equal(line.call, i + 1);
      assert.equal(line.phase, report.calls[i].phase);
      assert.equal(line.request_bytes, report.calls[i].request_bytes, `call ${i + 1}`);
      assert.equal(
        utf8(line.turn_request),
        report.calls[i].request_bytes,
        `call ${i + 1}: the TurnRequest as measured`,
      );
      assert.deepEqual(line.provider_requests, [], "a replay sends nothing");
    });
    // The report stays payload-free: the intent is in the trace, not in the report.
    const intent = trace[0].turn_request.sections.find((s: { section: string }) => s.section === "intent");
    assert.ok(intent, "the trace carries the intent section");
    // (the model's finish summary is Loom's own output, which the report keeps: issue 43)
    const { finish: _finish, printed: _printed, ...measurements } = JSON.parse(
      readFileSync(join(dir, "report.json"), "utf8"),
    );
    assert.ok(!JSON.stringify(measurements).includes("slugify"), "no payload in the report");
  });
}

async function finishingServer(t: { after: (fn: () => unknown) => void }) {
  const server = await startAnthropicServer((_r, i) =>
    anthropicAnswer(i % 2 === 0 ? { action: "finish" } : { status: "success", summary: "Nothing to do." })
  );
  t.after(() => server.close());
  return server;
}

test("a live run's trace holds each call's provider request body as sent, and never the key", async (t) => {
  const dir = tempDir(t);
  cpSync(resolve(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
  const server = await finishingServer(t);
  const example = JSON.parse(readFileSync(resolve(ROOT, "testdata/example-request.json"), "utf8"));
  writeFileSync(join(dir, "request.json"), JSON.stringify({ ...example, workspace: "ws" }));
  const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseUrl };
  const r = await runLoom(
    ["run", "request.json", "--trace", "trace.jsonl", "--context-report", "report.json", "--quiet", "--json"],
    { cwd: dir, env },
  );
  assert.equal(r.code, 0, r.stderr);
  const text = readFileSync(join(dir, "trace.jsonl"), "utf8");
  assert.ok(!text.includes(KEY), "the key never reaches the trace");
  const trace = readLines(join(dir, "trace.jsonl"));
  const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8"));
  assert.equal(trace.length, 2);
  assert.equal(server.requests.length, 2);
  trace.forEach((line, i) => {
    assert.deepEqual(line.provider_requests, [server.requests[i].body], `call ${i + 1}: the body as the server got it`);
    assert.equal(line.request_bytes, report.calls[i].request_bytes);
    assert.deepEqual(line.usage, report.calls[i].usage);
  });
  assert.equal(trace[0].phase, "selection");
  assert.equal(trace[1].phase, "arguments");
});

test("a catalog run traces its calls too, and an unwritable --trace is a usage error before any request", async (t) => {
  const dir = tempDir(t);
  cpSync(resolve(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
  const server = await finishingServer(t);
  const { intent: _, workspace: __, model: ___, $schema: ____, ...rest } = JSON.parse(
    readFileSync(resolve(ROOT, "testdata/example-request.json"), "utf8"),
  );
  writeFileSync(
    join(dir, "catalog.json"),
    JSON.stringify({
      models: { claude: { kind: "anthropic", model: "claude-test" } },
      defaults: { workspace: "ws" },
      slices: { fix: { description: "Fix", intent: "{{request}}", ...rest, model: "claude" } },
    }),
  );
  const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseUrl };
  const r = await runLoom([
    "run",
    "--catalog",
    "catalog.json",
    "--slice",
    "fix",
    "Fix it",
    "--trace",
    "t.jsonl",
    "--quiet",
  ], {
    cwd: dir,
    env,
  });
  assert.equal(r.code, 0, r.stderr);
  const trace = readLines(join(dir, "t.jsonl"));
  assert.deepEqual(trace.map((l) => l.call), [1, 2]);
  assert.equal(trace[0].provider_requests[0].model, "claude-test");

  const bad = await runLoom(["run", "--catalog", "catalog.json", "--slice", "fix", "Fix it", "--trace", "ws"], {
    cwd: dir,
    env,
  });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^loom run: --trace "ws": is a directory, not a file\n$/);
  assert.equal(server.requests.length, 2, "no request after the usage error");
});
