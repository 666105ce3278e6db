// A context report lands for every outcome — completed, failed (provider error, ceiling), suspended, step limit,
// archive capacity, interrupted, startup and routing failures — and each one is whole, valid against the zod schema and
// the JSON Schema file, with the right outcome, error code and final_usage versus partial_usage.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { runWithOptions } from "../api.ts";
import type { Io } from "../commands/io.ts";
import { createProvider } from "../lib/run/create-provider.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { main } from "../main.ts";
import { type FakeProviderServer, type ScriptedResponse, startOpenAIServer } from "./helpers/fake-provider-servers.ts";
import {
  archiveScript,
  assertOutcome,
  canaryEnv,
  canarySlice,
  completedScript,
  isAlive,
  killIfAlive,
  makeCanary,
  makeSandbox,
  malformedScript,
  OPENAI_USAGE_COUNTERS,
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
  unauthorizedScript,
  waitFor,
} from "./helpers/outcomes.ts";

type Setup = { canary: string; sandbox: Sandbox; server: FakeProviderServer };

/** A canary sandbox and a fake OpenAI server answering `script`; both removed when the test ends. */
async function setupFor(
  t: { after: (fn: () => unknown) => void },
  canary: string,
  script: ScriptedResponse[],
): Promise<Setup> {
  const sandbox = makeSandbox(canary);
  const server = await startOpenAIServer(script);
  t.after(async () => {
    await server.close();
    removeSandbox(sandbox);
  });
  return { canary, sandbox, server };
}

/** Runs the canary slice through the library with the real OpenAI adapter and workspace executors. */
function runSlice(
  { canary, sandbox, server }: Setup,
  { policy = "bounded", slice = {}, archiveLimits, signal }: {
    policy?: ContextPolicyName;
    slice?: Parameters<typeof canarySlice>[2];
    archiveLimits?: { maxEvents?: number; maxBytes?: number };
    signal?: AbortSignal;
  } = {},
) {
  const provider = createProvider(
    { kind: "openai", model: "gpt-4.1-mini", base_url: server.baseUrl },
    { env: { OPENAI_API_KEY: `sk-${canary}:openai-key` }, maxAttempts: 1 },
  );
  return runWithOptions(canarySlice(canary, sandbox.workspace, slice), {
    sandboxGrants: { env: ["LOOM_CANARY_NOTE"] }, // the slice passes it: granted by the caller
    contextPolicy: policy,
    contextReport: sandbox.report,
    provider,
    archiveLimits,
    signal,
  });
}

const perCall = (n: number) => ({
  input: OPENAI_USAGE_COUNTERS.input! * n,
  cache_read: OPENAI_USAGE_COUNTERS.cache_read! * n,
  cache_write: null,
  output: OPENAI_USAGE_COUNTERS.output! * n,
});

for (const policy of ["legacy", "bounded"] as const) {
  test(`completed (${policy}): the report is the run's report, with final_usage and null for the counter OpenAI never reports`, async (t) => {
    const canary = makeCanary();
    const s = await setupFor(t, canary, completedScript(canary));
    const result = await runSlice(s, { policy });
    assert.equal(result.outcome, "completed", result.error?.message);
    assert.equal(result.exit_code, 0);
    const report = readValidReport(s.sandbox.report);
    assert.deepEqual(report, result.report, "the file holds the report the run returned");
    assertOutcome(report, { outcome: "completed", code: null, usage: "final" });
    assert.equal(report.error, null);
    assert.equal(report.policy, policy);
    assert.equal(report.model_calls, 10);
    assert.equal(report.phases.selection.requests, 6);
    assert.equal(report.phases.arguments.requests, 4);
    assert.equal(report.phases.execution.requests, 5);
    assert.equal(report.retrievals.result, 1);
    assert.equal(report.retrievals.errors, 0, "the lookup found the test output");
    // Nine calls reported usage and one reported none; OpenAI has no cache-write counter.
    assert.deepEqual(report.final_usage, perCall(9));
    assert.equal(report.calls[8].usage.input, null, "a call without usage stays null, not 0");
  });
}

test("failed (HTTP 401 from the provider): exit 1, provider_auth, partial_usage of the calls before it", async (t) => {
  const canary = makeCanary();
  const s = await setupFor(t, canary, unauthorizedScript(canary));
  const result = await runSlice(s);
  assert.equal(result.exit_code, 1);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "failed", code: "provider_auth", usage: "partial" });
  assert.deepEqual(report.partial_usage, perCall(1));
  // The rejected call was sent: it counts, with its bytes and elapsed time and no usage.
  assert.equal(report.model_calls, 2);
  assert.deepEqual(report.calls[1].usage, { input: null, cache_read: null, cache_write: null, output: null });
  assert.ok(report.calls[1].request_bytes > 0);
  assert.equal(report.phases.execution.requests, 1);
});

for (const json of [true, false]) {
  test(`failed (a 200 body that is ${json ? "JSON of the wrong shape" : "not JSON"}): exit 1, provider_malformed_response, partial_usage`, async (t) => {
    const canary = makeCanary();
    const s = await setupFor(t, canary, malformedScript(canary, { json }));
    const result = await runSlice(s);
    assert.equal(result.exit_code, 1);
    const report = readValidReport(s.sandbox.report);
    assertOutcome(report, { outcome: "failed", code: "provider_malformed_response", usage: "partial" });
    assert.deepEqual(report.partial_usage, perCall(1));
    assert.equal(s.server.requests.length, 2, "a malformed answer is not retried");
  });
}

test("failed (context_ceiling_exceeded under bounded): no request sent, every usage counter null — never 0", async (t) => {
  const canary = makeCanary();
  const s = await setupFor(t, canary, []);
  const result = await runSlice(s, { slice: { instructions: oversizedInstructions(canary) } });
  assert.equal(result.exit_code, 1);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "failed", code: "context_ceiling_exceeded", usage: "partial" });
  assert.deepEqual(report.partial_usage, { input: null, cache_read: null, cache_write: null, output: null });
  assert.equal(report.model_calls, 0);
  assert.equal(s.server.requests.length, 0);
});

test("suspended (a ninth lookup in the selection phase): exit 4, lookup_limit, final_usage, eight retrievals", async (t) => {
  const canary = makeCanary();
  const s = await setupFor(t, canary, suspendedScript(canary));
  const result = await runSlice(s);
  assert.equal(result.exit_code, 4);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "suspended", code: "lookup_limit", usage: "final" });
  assert.deepEqual(report.final_usage, perCall(10));
  assert.equal(report.retrievals.result, 8);
  assert.equal(report.retrievals.errors, 0);
});

test("step_limit: exit 6, final_usage, and no request after the last step", async (t) => {
  const canary = makeCanary();
  const s = await setupFor(t, canary, stepLimitScript(canary));
  const result = await runSlice(s, { slice: { limits: { max_steps: 2 } } });
  assert.equal(result.exit_code, 6);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "step_limit", code: "step_limit", usage: "final" });
  assert.deepEqual(report.final_usage, perCall(3));
  assert.equal(s.server.requests.length, 3);
});

test("archive_capacity_exceeded (RunOptions.archiveLimits): exit 5, partial_usage, no request after the full archive", async (t) => {
  const canary = makeCanary();
  const s = await setupFor(t, canary, archiveScript(canary));
  const result = await runSlice(s, { archiveLimits: { maxEvents: 3 } });
  assert.equal(result.exit_code, 5);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "archive_capacity_exceeded", code: "archive_capacity_exceeded", usage: "partial" });
  assert.deepEqual(report.partial_usage, perCall(5));
  assert.deepEqual(report.archive.events, 3);
  assert.equal(s.server.requests.length, 5, "no model request once the archive is full");
  assert.equal(result.printed.length, 1, "printed output stays visible in the result");
  assert.equal(result.last_test?.revision, "r0", "the test observation stays visible in the result");
});

test("interrupted (abort while the test command runs): exit 130, partial_usage, the test process group is gone", async (t) => {
  const canary = makeCanary();
  const s = await setupFor(t, canary, slowTestScript());
  t.after(() => {
    if (!existsSync(s.sandbox.pidFile)) return;
    const pids = readPids(s.sandbox.pidFile);
    killIfAlive(pids.test);
    killIfAlive(pids.child);
  });
  const controller = new AbortController();
  const running = runSlice(s, {
    slice: { test: { command: ["node", "slow-test.mjs"], timeout_ms: 600_000 } },
    signal: controller.signal,
  });
  await waitFor(() => existsSync(s.sandbox.pidFile), "the slow test command writes its pids");
  const pids = readPids(s.sandbox.pidFile);
  assert.ok(isAlive(pids.test) && isAlive(pids.child), "the test command and its child run");
  controller.abort();
  const result = await running;
  assert.equal(result.outcome, "interrupted");
  assert.equal(result.exit_code, 130);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "interrupted", code: "interrupted", usage: "partial" });
  assert.deepEqual(report.partial_usage, perCall(1));
  await waitFor(() => !isAlive(pids.test) && !isAlive(pids.child), "the interrupted test command and its child exit");
});

test("startup_failed from the library (missing workspace): a result, not a throw, and the report lands", async (t) => {
  const canary = makeCanary();
  const s = await setupFor(t, canary, []);
  const result = await runSlice(s, { slice: { workspace: join(s.sandbox.dir, "missing") } });
  assert.equal(result.outcome, "startup_failed");
  assert.equal(result.exit_code, 3);
  assert.equal(result.error?.code, "workspace_missing");
  assert.deepEqual(readValidReport(s.sandbox.report), result.report);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "startup_failed", code: "workspace_missing", usage: "partial" });
  assert.equal(report.model_calls, 0);
});

// ---- the catalog CLI (through main) ----

async function catalogRun(
  s: Setup,
  { routes, keyEnv = "OPENAI_API_KEY", args = [] }: { routes: unknown; keyEnv?: string; args?: string[] },
): Promise<{ code: number; err: string }> {
  const catalog = join(s.sandbox.dir, "catalog.json");
  writeFileSync(
    catalog,
    JSON.stringify({
      models: { gpt: { kind: "openai", model: "gpt-4.1-mini", base_url: s.server.baseUrl, api_key_env: keyEnv } },
      slices: Object.fromEntries(["notes", "summary"].map((name) => [name, {
        description: `The ${name} slice`,
        intent: `{{request}} (${name})`,
        instructions: `Work on the ${name}.`,
        actions: ["read_file", "run_tests", "finish"],
        test: { command: ["node", "test.mjs"], timeout_ms: 60_000 },
        model: "gpt",
        limits: { max_steps: 5 },
        workspace: "ws",
      }])),
      routes,
    }),
  );
  const err: string[] = [];
  const io: Io = {
    stdout: () => {},
    stderr: (text) => void err.push(text),
    readStdin: () => Promise.resolve(""),
    env: canaryEnv(s.canary, { openaiBaseUrl: s.server.baseUrl }),
    cwd: s.sandbox.dir,
    isTTY: false,
    signal: new AbortController().signal,
  };
  const code = await main([
    "run",
    "Tidy the notes",
    "--catalog",
    catalog,
    "--context-report",
    s.sandbox.report,
    "--quiet",
    ...args,
  ], io);
  return { code, err: err.join("") };
}

test("startup_failed from the catalog CLI (missing credential): exit 3, report with no calls", async (t) => {
  const s = await setupFor(t, makeCanary(), []);
  const run = await catalogRun(s, { routes: { default: "notes" }, keyEnv: "LOOM_TEST_UNSET_OPENAI_API_KEY" });
  assert.equal(run.code, 3, run.err);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "startup_failed", code: "missing_credential", usage: "partial" });
  assert.equal(report.slice, "notes");
  assert.equal(s.server.requests.length, 0);
});

test("routing_failed from the catalog CLI (no route): exit 3, report with no calls", async (t) => {
  const s = await setupFor(t, makeCanary(), []);
  const run = await catalogRun(s, { routes: { rules: [{ pattern: "^never$", slice: "notes" }] } });
  assert.equal(run.code, 3, run.err);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "routing_failed", code: "no_route", usage: "partial" });
  assert.equal(report.slice, null);
});

test("routing_failed after a classification call: the call is measured and its usage is partial_usage", async (t) => {
  const s = await setupFor(t, makeCanary(), [say({ slice: "no-such-slice" })]);
  const run = await catalogRun(s, { routes: { classification: { model: "gpt" } } });
  assert.equal(run.code, 3, run.err);
  const report = readValidReport(s.sandbox.report);
  assertOutcome(report, { outcome: "routing_failed", code: "classification_unknown_slice", usage: "partial" });
  assert.equal(report.phases.classification.requests, 1);
  assert.deepEqual(report.partial_usage, perCall(1));
});

// ---- the real binary, interrupted by a signal ----

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  test(`${signal} to dist/loom during a slow test command: exit 130, the report lands, no process left behind`, async (t) => {
    const canary = makeCanary();
    const s = await setupFor(t, canary, slowTestScript());
    const request = join(s.sandbox.dir, "request.json");
    writeFileSync(
      request,
      JSON.stringify(canarySlice(canary, "ws", { test: { command: ["node", "slow-test.mjs"], timeout_ms: 600_000 } })),
    );
    const loom = startLoom(
      [
        "run",
        "request.json",
        "--context-policy",
        "bounded",
        "--context-report",
        s.sandbox.report,
        "--sandbox-env",
        "LOOM_CANARY_NOTE",
      ],
      {
        cwd: s.sandbox.dir,
        env: canaryEnv(canary, { openaiBaseUrl: s.server.baseUrl }),
      },
    );
    t.after(() => {
      stopLoom(loom);
      if (!existsSync(s.sandbox.pidFile)) return;
      const pids = readPids(s.sandbox.pidFile);
      killIfAlive(pids.test);
      killIfAlive(pids.child);
    });
    await waitFor(
      () => existsSync(s.sandbox.pidFile) || loom.child.exitCode !== null,
      "the slow test command writes its pids",
    );
    if (!existsSync(s.sandbox.pidFile)) {
      assert.fail(`loom ended before the test command ran: ${(await loom.done).stderr}`);
    }
    const pids = readPids(s.sandbox.pidFile);
    assert.ok(isAlive(pids.test) && isAlive(pids.child), "the test command and its child run");
    process.kill(loom.pid, signal);
    const exit = await loom.done;
    assert.equal(exit.code, 130, exit.stderr);
    const report = readValidReport(s.sandbox.report);
    assertOutcome(report, { outcome: "interrupted", code: "interrupted", usage: "partial" });
    assert.deepEqual(report.partial_usage, perCall(1));
    await waitFor(() => !isAlive(pids.test) && !isAlive(pids.child), "the test command and its child exit with loom");
    assert.match(exit.stderr.trimEnd().split("\n").at(-1)!, /^loom run: Interrupted/);
  });
}
