// The canary: a slice whose intent, instructions, workspace files, test output, command output, printed text, lookup
// answers, model text and environment (credentials and plain variables) all carry one unique string. For every
// outcome, the report — measurements only — and the binary's stderr must not contain it, while the model did see it.
// One exception on stderr only: a server's error text or a classifier's answer may be shown to the user running the
// command (they are the diagnostic), but the report keeps none of it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { runWithOptions } from "../api.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import type { ContextReport } from "../lib/report/context-report.ts";
import type { SliceRequest } from "../lib/slice.ts";
import { type FakeProviderServer, type ScriptedResponse, startOpenAIServer } from "./helpers/fake-provider-servers.ts";
import {
  archiveScript,
  assertNoCanary,
  assertOutcome,
  canaryEnv,
  canarySlice,
  isAlive,
  killIfAlive,
  makeCanary,
  makeSandbox,
  malformedScript,
  oversizedInstructions,
  readPids,
  readValidReport,
  removeSandbox,
  type Sandbox,
  say,
  slowTestScript,
  startLoom,
  stepLimitScript,
  stopLoom,
  suspendedScript,
  testOutputRef,
  unauthorizedScript,
  waitFor,
} from "./helpers/outcomes.ts";

type Context = { canary: string; sandbox: Sandbox; server: FakeProviderServer };

async function context(
  t: { after: (fn: () => unknown) => void },
  script: (canary: string) => ScriptedResponse[],
): Promise<Context> {
  const canary = makeCanary();
  const sandbox = makeSandbox(canary);
  const server = await startOpenAIServer(script(canary));
  t.after(async () => {
    await server.close();
    removeSandbox(sandbox);
  });
  return { canary, sandbox, server };
}

/**
 * Everything a run can carry, each with the canary: the selection reason, a file read, a refused read of a path
 * named with it, the allowed command (its output and the inherited variable), a refused command, printed text, a lookup
 * of the test output, a malformed lookup reference, an invalid answer that is asked again, and the finish summary.
 */
function everythingScript(canary: string): ScriptedResponse[] {
  return [
    say({ action: "run_tests", reason: `${canary}:reason` }),
    say({ action: "read_file" }),
    say({ path: "src/notes.txt" }),
    say({ action: "read_file" }),
    say({ path: `missing-${canary}.txt` }),
    say({ action: "run_command" }),
    say({ argv: ["node", "tool.mjs"] }),
    say({ action: "run_command" }),
    say({ argv: ["node", "-e", `console.log(${JSON.stringify(canary)})`] }),
    say({ action: "print" }),
    say({ text: `${canary}:printed` }),
    say({ $result: testOutputRef(canary) }),
    say({ $result: `${canary}:bad-reference` }),
    say({ action: `${canary}:invalid-action` }),
    say({ action: "finish" }),
    say({ status: "success", summary: `${canary}:summary` }),
  ];
}

/** The request file for the binary: the canary slice over ./ws. */
function writeRequest(c: Context, overrides: Partial<SliceRequest> = {}): string {
  const path = join(c.sandbox.dir, "request.json");
  writeFileSync(path, JSON.stringify(canarySlice(c.canary, "ws", overrides)));
  return "request.json";
}

type Exit = { code: number | null; stdout: string; stderr: string };

async function runBinary(c: Context, args: string[]): Promise<Exit> {
  const loom = startLoom(args, { cwd: c.sandbox.dir, env: canaryEnv(c.canary, { openaiBaseUrl: c.server.baseUrl }) });
  try {
    return await loom.done;
  } finally {
    stopLoom(loom);
  }
}

/**
 * No report file, nor any other file beside it, nor a stderr line holds the canary — except where a report names what
 * a step worked on (step_log[].target: the path or command the model named, as stream-json's step-executed does; the
 * issue-36 step table), and the model's finish summary and printed text: Loom's own outputs, which stdout carries
 * whole and the report's pages show (issue 43). Those hold exactly the model's finish and print, nothing else.
 */
function assertNoLeak(c: Context, { stderr }: { stderr: string | null }): void {
  const dir = join(c.sandbox.dir, "out");
  for (const name of readdirSync(dir)) {
    let text = readFileSync(join(dir, name), "utf8");
    if (name.endsWith(".json")) {
      const value = JSON.parse(text);
      for (const step of value.step_log ?? []) step.target = null;
      withoutOwnOutputs(value, c.canary);
      text = JSON.stringify(value, null, 2);
    }
    assertNoCanary(text, c.canary, `out/${name}`);
  }
  if (stderr !== null) assertNoCanary(stderr, c.canary, "stderr");
}

/** Drops a report's finish summary and printed text after checking they are only what the model finished and printed. */
function withoutOwnOutputs(report: { finish?: { summary: string } | null; printed?: string[] }, canary: string): void {
  if (report.finish) {
    assert.equal(report.finish.summary, `${canary}:summary`);
    report.finish.summary = "";
  }
  for (const text of report.printed ?? []) assert.equal(text, `${canary}:printed`);
  delete report.printed;
}

// The slice passes LOOM_CANARY_NOTE to its processes: granted on the command line (a file alone may not).
const reportArgs = ["--context-report", "out/report.json", "--sandbox-env", "LOOM_CANARY_NOTE"];

function report(c: Context): ContextReport {
  return readValidReport(c.sandbox.report);
}

for (const policy of ["legacy", "bounded"] as const) {
  test(`canary, completed (${policy}): the model saw the canary from every source; the report and stderr never do`, async (t) => {
    const c = await context(t, everythingScript);
    const exit = await runBinary(c, ["run", writeRequest(c), "--context-policy", policy, ...reportArgs]);
    assert.equal(exit.code, 0, exit.stderr);
    const r = report(c);
    assertOutcome(r, { outcome: "completed", code: null, usage: "final" });
    // The read of a missing file and the command not allowed were refused; so was the step whose lookup failed and whose
    // next answer was out of the schema too (a failed lookup is an invalid answer: one re-ask per stage).
    assert.equal(r.refusals, 3);
    assert.deepEqual({ result: r.retrievals.result, errors: r.retrievals.errors }, { result: 2, errors: 1 });
    assertNoLeak(c, exit);

    // Not vacuous: what the model was sent carried the canary from each source…
    const sent = c.server.requests.map((request) => request.rawBody).join("\n");
    for (
      const tag of ["intent", "instructions", "reason", "file", "test-output", "command-output", "env-note", "printed"]
    ) {
      assert.ok(sent.includes(`${c.canary}:${tag}`), `the model was sent the canary from ${tag}`);
    }
    // …but never a credential or a credential-shaped variable (they are scrubbed from test and command processes).
    for (const tag of ["env-secret", "openai-key", "anthropic-key"]) {
      assert.ok(!sent.includes(`${c.canary}:${tag}`), `${tag} reached the model`);
    }
    assert.ok(exit.stdout.includes(`${c.canary}:printed`), "printed text is data: it goes to stdout");
  });
}

test("canary, failed (the provider rejects the key and echoes it): no canary in the report or on stderr", async (t) => {
  const c = await context(t, unauthorizedScript);
  const exit = await runBinary(c, ["run", writeRequest(c), ...reportArgs]);
  assert.equal(exit.code, 1, exit.stderr);
  assertOutcome(report(c), { outcome: "failed", code: "provider_auth", usage: "partial" });
  assertNoLeak(c, exit);
});

for (const json of [true, false]) {
  test(`canary, failed (a malformed ${json ? "JSON" : "non-JSON"} answer carrying the canary): no canary in the report or on stderr`, async (t) => {
    const c = await context(t, (canary) => malformedScript(canary, { json }));
    const exit = await runBinary(c, ["run", writeRequest(c), ...reportArgs]);
    assert.equal(exit.code, 1, exit.stderr);
    assertOutcome(report(c), { outcome: "failed", code: "provider_malformed_response", usage: "partial" });
    assertNoLeak(c, exit);
  });
}

// A server's error text is shown on stderr (a user needs "model not found" to fix a run), but it is the server's text,
// not Loom's: it may quote the request, so the report — which people share to compare policies — keeps none of it.
test("canary, failed (HTTP 400 whose error text quotes the request): the report keeps no server text", async (t) => {
  const c = await context(t, (canary) => [
    say({ action: "run_tests" }),
    {
      status: 400,
      body: {
        error: {
          message: `Invalid 'messages[1].content': '${canary}:intent' is too long`,
          type: "invalid_request_error",
        },
      },
    },
  ]);
  const exit = await runBinary(c, ["run", writeRequest(c), ...reportArgs]);
  assert.equal(exit.code, 1, exit.stderr);
  assertOutcome(report(c), { outcome: "failed", code: "provider_bad_request", usage: "partial" });
  assertNoLeak(c, { stderr: null });
});

test("canary, failed (context_ceiling_exceeded: instructions made of the canary): no canary in the report or on stderr", async (t) => {
  const c = await context(t, () => []);
  const exit = await runBinary(c, [
    "run",
    writeRequest(c, { instructions: oversizedInstructions(c.canary) }),
    "--context-policy",
    "bounded",
    ...reportArgs,
  ]);
  assert.equal(exit.code, 1, exit.stderr);
  assertOutcome(report(c), { outcome: "failed", code: "context_ceiling_exceeded", usage: "partial" });
  assertNoLeak(c, exit);
});

test("canary, suspended (eight lookups answered with the canary, then a ninth): no canary in the report or on stderr", async (t) => {
  const c = await context(t, suspendedScript);
  const exit = await runBinary(c, ["run", writeRequest(c), "--context-policy", "bounded", ...reportArgs]);
  assert.equal(exit.code, 4, exit.stderr);
  const r = report(c);
  assertOutcome(r, { outcome: "suspended", code: "lookup_limit", usage: "final" });
  assert.equal(r.retrievals.result, 8);
  assert.ok(
    c.server.requests.at(-1)!.rawBody.includes(`${c.canary}:test-output`),
    "the lookup answers carried the canary",
  );
  assertNoLeak(c, exit);
});

test("canary, step_limit: no canary in the report or on stderr", async (t) => {
  const c = await context(t, stepLimitScript);
  const exit = await runBinary(c, ["run", writeRequest(c, { limits: { max_steps: 2 } }), ...reportArgs]);
  assert.equal(exit.code, 6, exit.stderr);
  assertOutcome(report(c), { outcome: "step_limit", code: "step_limit", usage: "final" });
  assertNoLeak(c, exit);
});

test("canary, archive_capacity_exceeded (library, archiveLimits): no canary in the report", async (t) => {
  const c = await context(t, archiveScript);
  const provider = createProvider(
    { kind: "openai", model: "gpt-4.1-mini", base_url: c.server.baseUrl },
    { env: { OPENAI_API_KEY: `sk-${c.canary}:openai-key` }, maxAttempts: 1 },
  );
  const result = await runWithOptions(canarySlice(c.canary, c.sandbox.workspace), {
    sandboxGrants: { env: ["LOOM_CANARY_NOTE"] },
    contextPolicy: "bounded",
    contextReport: c.sandbox.report,
    provider,
    archiveLimits: { maxEvents: 3 },
  });
  assert.equal(result.exit_code, 5);
  assertOutcome(report(c), {
    outcome: "archive_capacity_exceeded",
    code: "archive_capacity_exceeded",
    usage: "partial",
  });
  const returned = structuredClone(result.report);
  withoutOwnOutputs(returned, c.canary);
  assertNoCanary(JSON.stringify(returned), c.canary, "the returned report");
  assertNoLeak(c, { stderr: null });
});

test("canary, interrupted (SIGINT to dist/loom while the test command prints the canary): no canary in the report or on stderr", async (t) => {
  const c = await context(t, () => slowTestScript());
  const request = writeRequest(c, { test: { command: ["node", "slow-test.mjs"], timeout_ms: 600_000 } });
  const loom = startLoom(["run", request, ...reportArgs], {
    cwd: c.sandbox.dir,
    env: canaryEnv(c.canary, { openaiBaseUrl: c.server.baseUrl }),
  });
  t.after(() => {
    stopLoom(loom);
    if (!existsSync(c.sandbox.pidFile)) return;
    const pids = readPids(c.sandbox.pidFile);
    killIfAlive(pids.test);
    killIfAlive(pids.child);
  });
  await waitFor(
    () => existsSync(c.sandbox.pidFile) || loom.child.exitCode !== null,
    "the slow test command writes its pids",
  );
  if (!existsSync(c.sandbox.pidFile)) {
    assert.fail(`loom ended before the test command ran: ${(await loom.done).stderr}`);
  }
  const pids = readPids(c.sandbox.pidFile);
  process.kill(loom.pid, "SIGINT");
  const exit = await loom.done;
  assert.equal(exit.code, 130, exit.stderr);
  assertOutcome(report(c), { outcome: "interrupted", code: "interrupted", usage: "partial" });
  assertNoLeak(c, exit);
  await waitFor(() => !isAlive(pids.test) && !isAlive(pids.child), "the test command and its child exit with loom");
});

// ---- the catalog CLI: startup and routing failures ----

/** A catalog whose intent template, instructions and slice descriptions carry the canary. */
function writeCatalog(c: Context, { routes, keyEnv = "OPENAI_API_KEY" }: { routes: unknown; keyEnv?: string }): string {
  const slice = (name: string) => ({
    description: `The ${name} slice. ${c.canary}:description`,
    intent: `{{request}} ${c.canary}:intent-template`,
    instructions: `Work on the ${name}. ${c.canary}:instructions`,
    actions: ["read_file", "run_tests", "finish"],
    test: { command: ["node", "test.mjs"], timeout_ms: 60_000 },
    model: "gpt",
    limits: { max_steps: 5 },
    workspace: "ws",
  });
  writeFileSync(
    join(c.sandbox.dir, "catalog.json"),
    JSON.stringify({
      models: { gpt: { kind: "openai", model: "gpt-4.1-mini", base_url: c.server.baseUrl, api_key_env: keyEnv } },
      slices: { notes: slice("notes"), summary: slice("summary") },
      routes,
    }),
  );
  return "catalog.json";
}

const requestText = (c: Context) => `Tidy the notes, please. ${c.canary}:request`;

test("canary, startup_failed (catalog CLI, missing credential): no canary in the report or on stderr", async (t) => {
  const c = await context(t, () => []);
  const catalog = writeCatalog(c, { routes: { default: "notes" }, keyEnv: "LOOM_CANARY_UNSET_OPENAI_API_KEY" });
  const exit = await runBinary(c, ["run", requestText(c), "--catalog", catalog, ...reportArgs]);
  assert.equal(exit.code, 3, exit.stderr);
  assertOutcome(report(c), { outcome: "startup_failed", code: "missing_credential", usage: "partial" });
  assertNoLeak(c, exit);
});

test("canary, routing_failed (catalog CLI, no route): no canary in the report or on stderr", async (t) => {
  const c = await context(t, () => []);
  const catalog = writeCatalog(c, { routes: { rules: [{ pattern: "^never$", slice: "notes" }] } });
  const exit = await runBinary(c, ["run", requestText(c), "--catalog", catalog, ...reportArgs]);
  assert.equal(exit.code, 3, exit.stderr);
  assertOutcome(report(c), { outcome: "routing_failed", code: "no_route", usage: "partial" });
  assertNoLeak(c, exit);
});

// The classifier's answer and the server's error text are foreign text: stderr may show them to the user running the
// command, the report must not keep them (see the HTTP 400 case above).
test("canary, routing_failed (catalog CLI, the classifier echoes the request): the report keeps none of its answer", async (t) => {
  const c = await context(t, (canary) => [say({ slice: `Tidy the notes, please. ${canary}:request` })]);
  const catalog = writeCatalog(c, { routes: { classification: { model: "gpt" } } });
  const exit = await runBinary(c, ["run", requestText(c), "--catalog", catalog, ...reportArgs]);
  assert.equal(exit.code, 3, exit.stderr);
  assert.ok(c.server.requests[0].rawBody.includes(`${c.canary}:request`), "the classifier was sent the request");
  assertOutcome(report(c), { outcome: "routing_failed", code: "classification_unknown_slice", usage: "partial" });
  assertNoLeak(c, { stderr: null });
});

test("canary, routing_failed (catalog CLI, the classification call fails with server text quoting the request): the report keeps none of it", async (t) => {
  const c = await context(t, (canary) => [
    { status: 422, body: { error: { message: `Cannot route '${canary}:request'`, type: "invalid_request_error" } } },
  ]);
  const catalog = writeCatalog(c, { routes: { classification: { model: "gpt" } } });
  const exit = await runBinary(c, ["run", requestText(c), "--catalog", catalog, ...reportArgs]);
  assert.equal(exit.code, 3, exit.stderr);
  assertOutcome(report(c), { outcome: "routing_failed", code: "classification_failed", usage: "partial" });
  assertNoLeak(c, { stderr: null });
});
