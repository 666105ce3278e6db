// Builders for the outcome and canary tests: a temp workspace whose files, test output and command output carry a
// canary string, the model answers (OpenAI wire format) that drive a slice to each outcome, report checks (zod and
// the JSON Schema file), and a small wrapper around the real dist/loom binary.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { ContextReport } from "../../lib/report/context-report.ts";
import type { SliceRequest } from "../../lib/slice.ts";
import { addUsage, NULL_USAGE, type Usage } from "../../lib/vocabulary/turn.ts";
import { hostPid, SANDBOX_ENV } from "./binary.ts";
import { openAIAnswer, type ScriptedResponse } from "./fake-provider-servers.ts";
import { type JsonSchemaNode, validateJsonSchema } from "./validate-json-schema.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const LOOM_BINARY = join(ROOT, "dist", "loom");
const REPORT_SCHEMA = join(ROOT, "schemas", "context-report.schema.json");

// ---- the canary ----

/** A string that occurs nowhere else; every source appends its own tag (":intent", ":test-output", …). */
export function makeCanary(): string {
  return `loom-canary-${randomUUID()}`;
}

/** Each place the canary occurs, with some context, so a leak says which source it came from. */
export function canaryExcerpts(text: string, canary: string): string[] {
  const found: string[] = [];
  for (let at = text.indexOf(canary); at !== -1; at = text.indexOf(canary, at + 1)) {
    found.push(JSON.stringify(text.slice(Math.max(0, at - 40), at + canary.length + 24)));
  }
  return found;
}

export function assertNoCanary(text: string, canary: string, what: string): void {
  const found = canaryExcerpts(text, canary);
  assert.equal(found.length, 0, `${what} contains the canary:\n  ${found.join("\n  ")}`);
}

// ---- the workspace ----

export const TEST_OUTPUT = (canary: string) => `test output: ${canary}:test-output\n`;
export const FILE_TEXT = (canary: string) => `Notes for the maintainer. ${canary}:file\n`;

/** The result-store reference of the test command's output (the store keys by sha256 of the bytes). */
export function testOutputRef(canary: string): string {
  return `sha256:${createHash("sha256").update(TEST_OUTPUT(canary)).digest("hex")}`;
}

export type Sandbox = { dir: string; workspace: string; report: string; pidFile: string };

/**
 * A temp dir holding `ws/`, a workspace where every text carries the canary: a source file, a failing test command
 * (`node test.mjs`) that prints it, an allowed command (`node tool.mjs`) that prints it and the LOOM_CANARY_NOTE
 * variable it inherits, and a slow test (`node slow-test.mjs`) that starts a grandchild, writes both pids to
 * `pids.json` (atomically) and then runs until it is killed.
 */
export function makeSandbox(canary: string): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), "loom-outcomes-"));
  const workspace = join(dir, "ws");
  mkdirSync(join(workspace, "src"), { recursive: true });
  const quoted = JSON.stringify(canary);
  writeFileSync(join(workspace, "src", "notes.txt"), FILE_TEXT(canary));
  writeFileSync(join(workspace, "README.md"), `# Project\n\n${canary}:readme\n`);
  writeFileSync(
    join(workspace, "test.mjs"),
    `process.stdout.write("test output: " + ${quoted} + ":test-output\\n");\nprocess.exitCode = 1;\n`,
  );
  writeFileSync(
    join(workspace, "tool.mjs"),
    `console.log("command output: " + ${quoted} + ":command-output");\nconsole.log("note: " + (process.env.LOOM_CANARY_NOTE ?? "unset"));\n`,
  );
  writeFileSync(
    join(workspace, "slow-test.mjs"),
    [
      `import { spawn } from "node:child_process";`,
      `import { renameSync, writeFileSync } from "node:fs";`,
      `const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "inherit" });`,
      `writeFileSync("pids.json.tmp", JSON.stringify({ test: process.pid, child: child.pid }));`,
      `renameSync("pids.json.tmp", "pids.json");`,
      `console.log("slow test running: " + ${quoted} + ":slow-test-output");`,
      `setInterval(() => {}, 1000);`,
    ].join("\n") + "\n",
  );
  return { dir, workspace, report: join(dir, "out", "report.json"), pidFile: join(workspace, "pids.json") };
}

export function removeSandbox(sandbox: Sandbox): void {
  rmSync(sandbox.dir, { recursive: true, force: true });
}

/** A slice whose intent and instructions carry the canary, over the sandbox workspace. */
export function canarySlice(canary: string, workspace: string, overrides: Partial<SliceRequest> = {}): SliceRequest {
  return {
    intent: `Tidy the notes in src/notes.txt. ${canary}:intent`,
    instructions: `Work in small steps and check with the tests. ${canary}:instructions`,
    workspace,
    actions: ["read_file", "run_tests", "run_command", "print", "finish"],
    test: { command: ["node", "test.mjs"], timeout_ms: 60_000 },
    model: "openai/gpt-4.1-mini",
    limits: { max_steps: 20 },
    commands: [["node", "tool.mjs"]],
    sandbox: { env: ["LOOM_CANARY_NOTE"] },
    ...overrides,
  };
}

/** Instructions over the 64 KiB bounded ceiling on their own: mandatory content that cannot fit. */
export const oversizedInstructions = (canary: string) =>
  `${canary}:instructions `.repeat(Math.ceil(70_000 / (canary.length + 15)));

// ---- model answers (OpenAI Chat Completions wire format) ----

/** Usage as OpenAI reports it: input, cached input and output tokens; it has no cache-write counter. */
export const OPENAI_USAGE = {
  prompt_tokens: 1000,
  completion_tokens: 20,
  total_tokens: 1020,
  prompt_tokens_details: { cached_tokens: 600 },
};
/** What OPENAI_USAGE becomes: input leaves out the cached tokens; cache_write stays null (the API never reports it). */
export const OPENAI_USAGE_COUNTERS: Usage = { input: 400, cache_read: 600, cache_write: null, output: 20 };

export const say = (
  value: unknown,
  { usage = OPENAI_USAGE as Record<string, unknown> | null } = {},
): ScriptedResponse => openAIAnswer(value, { usage });

/** Model answers that read, test, run a command, print and look a result up — all carrying the canary — then finish. */
export function completedScript(canary: string): ScriptedResponse[] {
  return [
    say({ action: "run_tests", reason: `${canary}:reason` }),
    say({ action: "read_file" }),
    say({ path: "src/notes.txt" }),
    say({ action: "run_command" }),
    say({ argv: ["node", "tool.mjs"] }),
    say({ action: "print" }),
    say({ text: `${canary}:printed` }),
    say({ $result: testOutputRef(canary) }),
    // This call reported no usage at all: the report's counters must not turn that into zeros.
    say({ action: "finish" }, { usage: null }),
    say({ status: "success", summary: `${canary}:summary` }),
  ];
}

/** One test run, then eight lookups of its (canary-carrying) output, then a ninth: the run is suspended. */
export function suspendedScript(canary: string): ScriptedResponse[] {
  return [say({ action: "run_tests" }), ...Array.from({ length: 9 }, () => say({ $result: testOutputRef(canary) }))];
}

/** Two executed actions without finish; with max_steps 2 the run ends at the step limit. */
export function stepLimitScript(canary: string): ScriptedResponse[] {
  return [
    say({ action: "run_tests", reason: `${canary}:reason` }),
    say({ action: "run_command" }),
    say({ argv: ["node", "tool.mjs"] }),
  ];
}

/** Test, command and print: three events, one more than an archive of two events holds. */
export function archiveScript(canary: string): ScriptedResponse[] {
  return [
    say({ action: "run_tests" }),
    say({ action: "run_command" }),
    say({ argv: ["node", "tool.mjs"] }),
    say({ action: "print" }),
    say({ text: `${canary}:printed` }),
  ];
}

/** One test run, then the model's server rejects the key — echoing it, as some servers do. */
export function unauthorizedScript(canary: string): ScriptedResponse[] {
  return [
    say({ action: "run_tests" }),
    {
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: sk-${canary}:openai-key`,
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      },
    },
  ];
}

/** One test run, then a 200 answer Loom cannot read. */
export function malformedScript(canary: string, { json }: { json: boolean }): ScriptedResponse[] {
  return [
    say({ action: "run_tests" }),
    json
      ? { body: { [`${canary}:malformed`]: true, choices: `${canary}:malformed` } }
      : { rawBody: `<html>${canary}:malformed</html>` },
  ];
}

/** One test run, then the slow test command, which runs until the run is interrupted. */
export function slowTestScript(): ScriptedResponse[] {
  return [say({ action: "run_tests" })];
}

// ---- reports ----

let reportSchema: JsonSchemaNode | null = null;

/**
 * Reads a report file and checks it is whole and valid: it parses as JSON, with the zod ContextReport, and against
 * schemas/context-report.schema.json; no temp file of the atomic write is left beside it.
 */
export function readValidReport(path: string): ContextReport {
  assert.ok(existsSync(path), `no report at ${path}`);
  const text = readFileSync(path, "utf8");
  const json = JSON.parse(text);
  reportSchema ??= JSON.parse(readFileSync(REPORT_SCHEMA, "utf8")) as JsonSchemaNode;
  assert.deepEqual(validateJsonSchema(reportSchema, json), [], "the report validates against the JSON Schema file");
  const parsed = ContextReport.safeParse(json);
  assert.ok(parsed.success, `the report parses with ContextReport: ${parsed.success ? "" : parsed.error.message}`);
  const leftovers = readdirSync(dirname(path)).filter((name) =>
    name !== basename(path) && name.includes(basename(path))
  );
  assert.deepEqual(leftovers, [], "the atomic write left no temp file");
  return parsed.data;
}

/** The sum of the per-call usage, computed here independently of the report builder: null while no call reported. */
export function usageOfCalls(report: ContextReport): Usage {
  return report.calls.reduce((sum, call) => addUsage(sum, call.usage), { ...NULL_USAGE });
}

/**
 * The outcome, error code and usage semantics: final_usage for a run that ended normally (completed, step limit,
 * suspended), partial_usage for one that ended with an error; both equal the sum over the calls, with null — never 0 —
 * for a counter no call reported.
 */
export function assertOutcome(
  report: ContextReport,
  { outcome, code, usage }: { outcome: ContextReport["outcome"]; code: string | null; usage: "final" | "partial" },
): void {
  assert.equal(report.outcome, outcome);
  assert.equal(report.error?.code ?? null, code);
  if (code !== null) assert.ok(report.error!.message.length > 0, "the error has a message");
  const sum = usageOfCalls(report);
  assert.deepEqual(report.usage, sum, "usage is the sum over the calls");
  if (usage === "final") {
    assert.deepEqual(report.final_usage, sum, "final_usage for a normal end");
    assert.equal(report.partial_usage, null, "no partial_usage for a normal end");
  } else {
    assert.deepEqual(report.partial_usage, sum, "partial_usage for an error");
    assert.equal(report.final_usage, null, "no final_usage after an error");
  }
  for (const key of ["input", "cache_read", "cache_write", "output"] as const) {
    if (report.calls.every((call) => call.usage[key] === null)) {
      assert.equal(report.usage[key], null, `${key} was never reported`);
    }
  }
  assert.equal(report.model_calls, report.calls.length);
  const phases = report.phases;
  assert.equal(
    phases.classification.requests + phases.selection.requests + phases.arguments.requests,
    report.calls.length,
  );
}

// ---- processes ----

/** Whether a process exists and has not exited (a zombie counts as gone: it runs nothing). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The state follows the parenthesised command name, which may itself contain ") ".
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    if (existsSync("/proc/self/stat")) return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls until `ready()` holds; fails with `what` when it does not within the limit (a hang, not a slow machine). */
export async function waitFor(ready: () => boolean, what: string, { limitMs = 30_000 } = {}): Promise<void> {
  const deadline = performance.now() + limitMs;
  while (!ready()) {
    if (performance.now() > deadline) assert.fail(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The host pids of the processes the slow test command named: its own and its grandchild's (see hostPid). */
export function readPids(pidFile: string): { test: number; child: number } {
  const pids: { test: number; child: number } = JSON.parse(readFileSync(pidFile, "utf8"));
  const cwd = dirname(pidFile);
  return { test: hostPid(pids.test, cwd), child: hostPid(pids.child, cwd) };
}

export function killIfAlive(pid: number): void {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch { /* already gone */ }
}

export type LoomProcess = {
  pid: number;
  /** Resolves when the binary has exited and its output is closed. */
  done: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>;
  child: ChildProcess;
};

export function assertBinary(): void {
  assert.ok(existsSync(LOOM_BINARY), `${LOOM_BINARY} is missing: build it with "bash compile.sh"`);
}

/** Starts dist/loom with exactly this environment (nothing inherited) in its own process group. */
export function startLoom(args: string[], { cwd, env }: { cwd: string; env: Record<string, string> }): LoomProcess {
  assertBinary();
  const child = spawn(LOOM_BINARY, args, {
    cwd,
    env: { ...SANDBOX_ENV, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr!.on("data", (chunk: Buffer) => err.push(chunk));
  const done = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) =>
        resolve({
          code,
          signal,
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8"),
        }));
    },
  );
  assert.ok(child.pid !== undefined, "dist/loom started");
  return { pid: child.pid!, done, child };
}

/** Kills the binary's process group if a failed test left it running. */
export function stopLoom(loom: LoomProcess): void {
  if (loom.child.exitCode !== null || loom.child.signalCode !== null) return;
  try {
    process.kill(-loom.pid, "SIGKILL");
  } catch { /* already gone */ }
}

/** The environment of a binary run: PATH and HOME, the provider endpoint, and credentials and notes with the canary. */
export function canaryEnv(canary: string, { openaiBaseUrl }: { openaiBaseUrl: string }): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    OPENAI_BASE_URL: openaiBaseUrl,
    OPENAI_API_KEY: `sk-${canary}:openai-key`,
    ANTHROPIC_API_KEY: `sk-ant-${canary}:anthropic-key`,
    LOOM_CANARY_SECRET: `${canary}:env-secret`,
    // Named by the slice (sandbox.env), so test and command processes get it (tool.mjs prints it).
    LOOM_CANARY_NOTE: `${canary}:env-note`,
  };
}
