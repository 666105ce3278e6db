// The one-line run and the output formats, through the compiled binary against a provider-shaped local server:
// `loom run "TEXT" --model PROVIDER/MODEL`, --output-format stream-json validated line by line against
// `loom schema events`, the json result's usage, duration and format version, a result object for every outcome
// (usage errors included), one exit code per kind of failure, and a report when stdin reading is interrupted.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { lines, LOOM_BINARY, ROOT, runLoom, waitFor } from "./helpers/binary.ts";
import { anthropicAnswer, FULL_ANTHROPIC_USAGE, startAnthropicServer } from "./helpers/fake-provider-servers.ts";
import { validateJsonSchema } from "./helpers/validate-json-schema.ts";
import { foldReport } from "../lib/report/fold.ts";

if (!existsSync("/proc/self/status")) {
  console.log("run-prompt.test.ts: skipping the signal tests: they need /proc to know when the binary handles signals");
}

const KEY = "sk-ant-prompt-test-0123456789";

async function sandbox(t: { after: (fn: () => unknown) => void }, answers: unknown[]) {
  const dir = mkdtempSync(join(tmpdir(), "loom-prompt-"));
  cpSync(resolve(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
  const server = await startAnthropicServer((_r, i) => anthropicAnswer(answers[Math.min(i, answers.length - 1)]));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseUrl };
  return { dir, server, loom: (args: string[], stdin?: string) => runLoom(args, { cwd: dir, env, stdin }) };
}

/** Runs the tests, then finishes: a selection, a selection and the finish arguments. */
const TEST_THEN_FINISH = [
  { action: "run_tests", reason: "see what fails" },
  { action: "finish" },
  { status: "failure", summary: "The tests fail; nothing changed." },
];

const schemaOf = async (name: string) => JSON.parse((await runLoom(["schema", name], { cwd: ROOT })).stdout);

test('loom run "TEXT" --model … --output-format stream-json: every line validates against loom schema events', async (t) => {
  const s = await sandbox(t, TEST_THEN_FINISH);
  const r = await s.loom([
    "run",
    "Fix the failing slug tests",
    "--model",
    "anthropic/claude-test",
    "--workspace",
    "ws",
    "--max-steps",
    "5",
    "--test-command",
    "node test.mjs",
    "--context-report",
    "report.json",
    "--output-format",
    "stream-json",
    "--quiet",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const schema = await schemaOf("events");
  const events = lines(r.stdout).map((line) => JSON.parse(line));
  for (const [i, event] of events.entries()) assert.deepEqual(validateJsonSchema(schema, event), [], `line ${i + 1}`);
  assert.deepEqual(events.map((e) => e.type), [
    "run-started",
    "call-started",
    "model-called",
    "step-executed",
    "call-started",
    "model-called",
    "call-started",
    "model-called",
    "step-executed",
    "run-ended",
    "result",
  ]);
  const [started, inFlight, firstCall, tests] = events;
  assert.deepEqual(
    [inFlight.step, inFlight.phase, inFlight.request_bytes, inFlight.checkpoint],
    [firstCall.step, firstCall.phase, firstCall.request_bytes, firstCall.checkpoint],
    "call-started announces the call model-called measures",
  );
  assert.equal(started.model, "anthropic/claude-test");
  assert.equal(started.max_steps, 5);
  assert.equal(started.policy, "legacy");
  assert.equal(started.workspace, join(s.dir, "ws"));
  assert.equal(firstCall.phase, "selection");
  assert.equal(firstCall.usage.input, FULL_ANTHROPIC_USAGE.input_tokens);
  assert.deepEqual([tests.action, tests.report, tests.exit_code, tests.timed_out], ["run_tests", "test", 1, false]);
  assert.deepEqual([tests.target, tests.status, tests.revision], [null, "failed", "r0"]);
  assert.deepEqual(events.at(-3).status, "failed", "the model finished with failure");
  const result = events.at(-1);
  const report = JSON.parse(readFileSync(join(s.dir, "report.json"), "utf8"));
  assert.equal(result.outcome, "completed");
  assert.equal(result.exit_code, 0);
  assert.equal(result.status, "failure");
  assert.equal(result.format_version, 1);
  assert.deepEqual(result.usage, report.usage);
  assert.equal(result.duration_ms, report.total_elapsed_ms);
  // A real run over HTTP (usage counters, an executed test): its report file is the fold of what it streamed.
  assert.equal(
    `${JSON.stringify(foldReport(events.slice(0, -1), { version: started.loom_version }), null, 2)}\n`,
    readFileSync(join(s.dir, "report.json"), "utf8"),
  );
  assert.equal(result.report_path, join(s.dir, "report.json"));
  // The request the server got is the prompt's: the intent verbatim, run_tests with the split test command.
  const sent = s.server.requests[0].rawBody;
  assert.ok(sent.includes("Fix the failing slug tests"));
  assert.match(sent, /node\\?",\\?"test\.mjs/, "run_tests shows its command");
  assert.ok(!sent.includes("run_command"), "run_command is not offered without --allow-command");
  assert.deepEqual(
    events.filter((e) => e.type === "model-called").map((e) => e.request_bytes),
    report.calls.map((
      c: { request_bytes: number },
    ) => c.request_bytes),
  );
});

test("--json prints one result with usage, duration and a format version; text names the run", async (t) => {
  const s = await sandbox(t, TEST_THEN_FINISH);
  const args = ["run", "-", "--model", "anthropic/claude-test", "--workspace", "ws", "--test-command", "node test.mjs"];
  const json = await s.loom([...args, "--json", "--quiet"], "Fix the slug tests\n");
  assert.equal(json.code, 0, json.stderr);
  assert.equal(lines(json.stdout).length, 1);
  const result = JSON.parse(json.stdout);
  assert.equal(result.type, "result");
  assert.equal(result.format_version, 1);
  assert.ok(result.duration_ms >= 0);
  assert.equal(result.usage.output, FULL_ANTHROPIC_USAGE.output_tokens * 3);
  assert.deepEqual(validateJsonSchema(await schemaOf("events"), result), []);
  const again = await sandbox(t, TEST_THEN_FINISH); // a fresh script: the model answers from the start
  const text = await again.loom([...args, "--quiet"], "Fix the slug tests\n");
  assert.match(
    text.stdout,
    /^run: completed \(failure\) after 2 steps, revision r0, NOT verified: last test failed on r0 \(exit code 1\)\n {2}summary: The tests fail; nothing changed\.\n {2}last test: failed \(exit 1\) on the current revision\n/,
  );
});

test("json and stream-json print a result object for every outcome, usage errors included, with its exit code", async (t) => {
  const s = await sandbox(t, [{ action: "list_files" }, { path: "." }]);
  const schema = await schemaOf("events");
  const cases: { args: string[]; code: number; outcome: string; env?: Record<string, string> }[] = [
    { args: ["run", "x", "--model", "anthropic/m", "--max-steps", "zero"], code: 2, outcome: "usage_error" },
    { args: ["run", "x", "--model", "anthropic/m", "--bogus"], code: 2, outcome: "usage_error" },
    { args: ["run", "x", "--model", "nowhere/m", "--workspace", "ws"], code: 3, outcome: "startup_failed" },
    { args: ["run", "x", "--model", "anthropic/m", "--workspace", "missing"], code: 3, outcome: "startup_failed" },
    // A model that lists files forever meets the step limit.
    {
      args: ["run", "x", "--model", "anthropic/m", "--workspace", "ws", "--max-steps", "2"],
      code: 6,
      outcome: "step_limit",
    },
    { args: ["replay", "missing.jsonl"], code: 2, outcome: "usage_error" },
  ];
  for (const c of cases) {
    for (const format of ["json", "stream-json"]) {
      if (c.args[0] === "replay" && format === "stream-json") continue;
      const r = await s.loom([...c.args, "--output-format", format, "--quiet"]);
      assert.equal(r.code, c.code, `${c.args.join(" ")} (${format}): ${r.stderr}`);
      const last = JSON.parse(lines(r.stdout).at(-1)!);
      assert.deepEqual(validateJsonSchema(schema, last), []);
      assert.equal(last.type, "result");
      assert.equal(last.outcome, c.outcome, c.args.join(" "));
      assert.equal(last.exit_code, c.code);
      if (c.code !== 0) assert.equal(lines(r.stderr).length, 1, r.stderr);
    }
  }
  const replayJson = await runLoom(["replay", "missing.jsonl", "--json"], { cwd: s.dir });
  assert.equal(JSON.parse(replayJson.stdout).outcome, "usage_error");
});

test("a prompt's flags are checked before anything runs, in words", async (t) => {
  const s = await sandbox(t, [{ action: "finish" }]);
  const cases: [string[], RegExp][] = [
    [
      ["run", "fix it"],
      /^loom run: "fix it" is not a request file; to run it as a prompt, give --model PROVIDER\/MODEL \(or set LOOM_MODEL; see loom config\)$/,
    ],
    [
      ["run", "x", "--max-steps", "3"],
      /^loom run: --max-steps is for a prompt: give --model too \(or set LOOM_MODEL\)$/,
    ],
    [["run", "x", "--model", "anthropic/m", "--actions", "read_file,fly"], /unknown action "fly" \(expected some of /],
    [["run", "x", "--model", "anthropic/m", "--actions", "run_command"], /--actions run_command needs --allow-command/],
    [["run", "x", "--model", "anthropic/m", "--test-command", "npm 'test"], /Unterminated ' quote/],
    [["run", "x", "--json", "--output-format", "stream-json"], /--json is --output-format json/],
    [["run", "x", "--output-format", "yaml"], /--output-format "yaml": expected one of text, json, stream-json/],
  ];
  for (const [args, expected] of cases) {
    const r = await s.loom(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr.trim(), expected);
  }
  assert.equal(s.server.requests.length, 0);
});

test("interrupted while reading the request from stdin: exit 130 and the report still lands", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-prompt-stdin-"));
  const child = spawn(LOOM_BINARY, ["run", "-", "--model", "anthropic/m", "--context-report", "r.json", "--json"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ANTHROPIC_API_KEY: KEY },
    stdio: ["pipe", "pipe", "pipe"],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  child.stdin!.on("error", () => {});
  let stdout = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  const done = new Promise<number | null>((resolveExit) => child.on("close", (code) => resolveExit(code)));
  // Wait until the binary handles SIGINT (it reads stdin by then), then interrupt.
  const handles = () => /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
  if (!existsSync("/proc/self/status")) return t.skip("needs /proc to know when the binary handles signals");
  await waitFor(() => {
    const caught = handles();
    return caught !== null && (BigInt(`0x${caught[1]}`) & 2n) !== 0n;
  }, { what: "loom to handle SIGINT" });
  process.kill(child.pid!, "SIGINT");
  assert.equal(await done, 130);
  const report = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
  assert.equal(report.outcome, "interrupted");
  assert.equal(JSON.parse(stdout).outcome, "interrupted");
});
