// Importers on the real-world variants of each format: mini-swe-agent 2.x (tool calls, text actions, Responses
// items, the closing "exit" message), early mini-swe-agent files, SWE-agent 0.x and 1.x (review-then-submit,
// autosubmission after a limit, RetryAgent attempts), and chat logs as agents write them (OpenHands completion logs,
// Anthropic Messages, per-line transcripts, Responses rollouts, LangChain and Gemini dumps). Fixtures in
// tests/fixtures/ are small hand-written files modelled on each format's documented shape.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import fc from "fast-check";
import { type RunResult, startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { canonicalJson, digestOf } from "../lib/text/digest.ts";
import { UsageError } from "../lib/errors.ts";
import { endingOf } from "../lib/ending.ts";
import { detectFormat, type ImportFormat, importTrajectory } from "../lib/recording/importers/index.ts";
import { parseRecording, type RecordedExecution, type Recording, recordingLine } from "../lib/recording/recording.ts";
import { RecordedExecutor, ScriptedProvider } from "../lib/recording/replay.ts";
import { NULL_USAGE } from "../lib/vocabulary/turn.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, FIXTURES), "utf8");
const load = (path: string, format: ImportFormat) =>
  importTrajectory(read(path), { format, name: path.split("/").at(-1)! });

function selection(recording: Recording, step: number): Record<string, unknown> {
  const answer = recording.answers.find((a) => a.step === step && a.phase === "selection");
  assert.ok(answer, `selection answer for step ${step}`);
  return answer.value as Record<string, unknown>;
}

function usageAt(recording: Recording, step: number) {
  return recording.answers.find((a) => a.step === step && a.phase === "selection")!.usage;
}

function outputOf(execution: RecordedExecution): string {
  assert.equal(execution.report.kind, "command");
  const ref = (execution.report as { output: string }).output;
  assert.equal(digestOf(execution.results[ref]), ref);
  return execution.results[ref];
}

function argvOf(execution: RecordedExecution): string[] {
  return execution.args.argv as string[];
}

function serialize(recording: Recording): string {
  let out = recordingLine(recording.header);
  const byStep = new Map<number, string>();
  for (const answer of recording.answers) {
    byStep.set(answer.step, (byStep.get(answer.step) ?? "") + recordingLine(answer));
  }
  for (const execution of recording.executions) out += (byStep.get(execution.step) ?? "") + recordingLine(execution);
  return out;
}

function replay(recording: Recording, policy: ContextPolicyName): Promise<RunResult> {
  return startRun({ request: { ...recording.header.slice, workspace: "." } }, libraryPlan({ contextPolicy: policy }), {
    provider: new ScriptedProvider(recording.answers),
    executor: (store) => new RecordedExecutor(recording.executions, { store }),
  });
}

/** Round-trips through the JSONL form, then replays under both policies: same reports, every answer used. */
async function assertReplays(
  recording: Recording,
  name: string,
  outcome: "completed" | "step_limit" = "completed",
): Promise<void> {
  assert.deepEqual(parseRecording(serialize(recording), { name }), recording, `${name} round-trips`);
  const reports: string[] = [];
  for (const policy of ["legacy", "bounded"] as const) {
    const result = await replay(recording, policy);
    assert.equal(result.outcome, outcome, `${name} ${policy}: ${result.error?.message ?? ""}`);
    if (outcome === "completed") assert.equal(result.error, null);
    else assert.equal(result.error?.code, "step_limit");
    assert.equal(
      result.report.model_calls,
      recording.answers.length,
      `${name} ${policy}: every recorded answer is used`,
    );
    assert.equal(result.reports.length, recording.executions.length);
    reports.push(canonicalJson(result.reports));
  }
  assert.equal(reports[0], reports[1], `${name}: both policies see the same execution reports`);
}

function assertUsageError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, String(error));
    assert.equal(endingOf({ threw: error }).exitCode, 2);
    assert.ok(!error.message.includes("\n"), error.message);
    assert.match(error.message, pattern);
    return true;
  });
}

// ---------------------------------------------------------------- mini-swe-agent 2.x and early 1.x

test("mini-swe-agent 2.x tool calls: parallel calls are consecutive steps answered by role tool messages", () => {
  const recording = load("mini-swe-agent/v2-toolcall.traj.json", "mini-swe-agent");
  assert.deepEqual(recording.executions.map((e) => e.report.kind), [
    "command",
    "command",
    "command",
    "refusal",
    "finish",
  ]);
  assert.deepEqual(argvOf(recording.executions[0]), ["bash", "-c", "ls"]);
  assert.deepEqual(argvOf(recording.executions[1]), ["bash", "-c", "grep -n 'def add' calc.py"]);
  // The JSON observation template is unwrapped to the output the command printed.
  assert.equal(outputOf(recording.executions[0]), "calc.py\ntest_calc.py\n");
  assert.equal(outputOf(recording.executions[1]), "1:def add(a, b): return a - b\n");
  assert.equal(recording.executions[0].report.kind === "command" && recording.executions[0].report.exit_code, 0);
  assert.deepEqual(selection(recording, 1), {
    action: "run_command",
    reason: "Let me look at the repository and the failing function.",
  });
  assert.deepEqual(selection(recording, 2), { action: "run_command" });
  assert.deepEqual(usageAt(recording, 1), { input: 120, cache_read: 1400, cache_write: null, output: 90 });
  assert.deepEqual(usageAt(recording, 2), NULL_USAGE);
});

test("mini-swe-agent 2.x: a timeout has a null exit code, a dropped unparsable answer is a refused step", () => {
  const recording = load("mini-swe-agent/v2-toolcall.traj.json", "mini-swe-agent");
  const timeout = recording.executions[2].report;
  assert.equal(timeout.kind === "command" && timeout.timed_out, true);
  assert.equal(timeout.kind === "command" && timeout.exit_code, null);
  assert.equal(outputOf(recording.executions[2]), "..");
  // 2.x keeps only the agent's reply to an answer without tool calls; the model's turn still counts.
  assert.deepEqual(recording.executions[3].report, {
    kind: "refusal",
    step: 4,
    code: "format_error",
    reason:
      "Tool call error:\n\n<error>\nNo tool calls found in the response. Every response MUST include at least one tool call.\n</error>",
  });
});

test("mini-swe-agent 2.x: the submit call ends in finish with the exit message's submission", () => {
  const json = JSON.parse(read("mini-swe-agent/v2-toolcall.traj.json"));
  const recording = load("mini-swe-agent/v2-toolcall.traj.json", "mini-swe-agent");
  assert.deepEqual(recording.executions[4].report, {
    kind: "finish",
    status: "success",
    summary: json.info.submission,
  });
  assert.deepEqual(selection(recording, 5), { action: "finish", reason: "The fix is in. Submitting." });
  assert.equal(recording.header.slice.model, "anthropic/claude-sonnet-4-5-20250929");
  assert.deepEqual(recording.header.slice.limits, { max_steps: 5, command_timeout_ms: 60000 });
  // A person's command in interactive mode (a user message with an output) does not answer the submit call.
  const human = {
    role: "user",
    content: "<returncode>0</returncode>\n<output>\nok\n</output>",
    extra: { raw_output: "ok\n", returncode: 0 },
  };
  const interactive = { ...json, messages: [...json.messages.slice(0, -1), human, json.messages.at(-1)] };
  const withHuman = importTrajectory(JSON.stringify(interactive), { format: "mini-swe-agent", name: "i.json" });
  assert.deepEqual(withHuman.executions, recording.executions);
  // Without info, the closing exit message alone says how the run ended.
  delete json.info;
  const bare = importTrajectory(JSON.stringify(json), { format: "mini-swe-agent", name: "bare.json" });
  assert.deepEqual(bare.executions.at(-1)!.report, {
    kind: "finish",
    status: "success",
    summary: json.messages.at(-1).extra.submission,
  });
});

test("mini-swe-agent 2.x text actions: extra.actions is the command, the thought keeps everything else", () => {
  const recording = load("mini-swe-agent/v2-textbased.traj.json", "mini-swe-agent");
  assert.deepEqual(argvOf(recording.executions[0]), ["bash", "-c", "grep -n teh README.md"]);
  assert.equal(outputOf(recording.executions[0]), "3:Read teh docs.\n");
  const reason = String(selection(recording, 1).reason);
  assert.ok(
    reason.includes("```bash\ngrep teh README.md\n```"),
    "an example block in the thought stays in the thought",
  );
  assert.ok(!reason.includes("mswea_bash_command"), "the executed block is not repeated in the thought");
});

test("mini-swe-agent 2.x text actions: a format error keeps the model's answer, an exception its message", () => {
  const recording = load("mini-swe-agent/v2-textbased.traj.json", "mini-swe-agent");
  const refused = recording.executions[1];
  assert.deepEqual(argvOf(refused), ["bash", "-c", "sed -i 's/teh/the/' README.md\ngrep -c teh README.md"]);
  assert.equal(
    refused.report.kind === "refusal" && refused.report.reason,
    "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.",
  );
  assert.deepEqual(selection(recording, 2), { action: "run_command", reason: "THOUGHT: Fix it and check." });
  const failed = recording.executions[2].report;
  assert.equal(failed.kind === "command" && failed.exit_code, -1);
  assert.equal(failed.kind === "command" && failed.timed_out, false);
  assert.equal(
    outputOf(recording.executions[2]),
    "An error occurred while executing the command: [Errno 2] No such file or directory\n",
  );
  assert.deepEqual(recording.executions[3].report, { kind: "finish", status: "failure", summary: "LimitsExceeded" });
});

test("mini-swe-agent 2.x Responses API: response objects are turns, function_call_output answers by call_id", () => {
  const recording = load("mini-swe-agent/v2-responses.traj.json", "mini-swe-agent");
  assert.deepEqual(recording.executions.map((e) => e.action), ["run_command", "run_command", "finish"]);
  assert.deepEqual(argvOf(recording.executions[1]), ["bash", "-c", "echo hi > x"]);
  assert.deepEqual(selection(recording, 1), { action: "run_command", reason: "Let me see x." });
  assert.deepEqual(usageAt(recording, 1), { input: 288, cache_read: 512, cache_write: null, output: 120 });
  assert.deepEqual(usageAt(recording, 2), { input: 950, cache_read: null, cache_write: null, output: 30 });
  assert.equal(recording.header.slice.intent, "Please solve this issue: x is empty.");
  assert.deepEqual(recording.executions[2].report, {
    kind: "finish",
    status: "success",
    summary: "diff --git a/x b/x\n",
  });
});

test("mini-swe-agent early files: no version marker, a Python action_regex with (?s) and a named group", () => {
  const text = read("mini-swe-agent/v1-early-xml.json");
  assert.equal(detectFormat(JSON.parse(text)), "mini-swe-agent");
  const recording = load("mini-swe-agent/v1-early-xml.json", "mini-swe-agent");
  assert.deepEqual(argvOf(recording.executions[0]), ["bash", "-c", "date -u +%F"]);
  assert.equal(outputOf(recording.executions[0]), "2025-01-01\n");
  assert.deepEqual(selection(recording, 1), { action: "run_command", reason: "I will print it." });
  assert.equal(recording.executions[1].report.kind, "refusal");
  assert.deepEqual(argvOf(recording.executions[1]), ["bash", "-c", "true\nfalse"]);
  assert.deepEqual(recording.executions[2].report, { kind: "finish", status: "success", summary: "done\n" });
});

test("detectFormat recognises every variant fixture", () => {
  const expected: [string, ImportFormat][] = [
    ["mini-swe-agent/v2-toolcall.traj.json", "mini-swe-agent"],
    ["mini-swe-agent/v2-textbased.traj.json", "mini-swe-agent"],
    ["mini-swe-agent/v2-responses.traj.json", "mini-swe-agent"],
    ["swe-agent/v0-classic.traj", "swe-agent"],
    ["swe-agent/v1-review-submit.traj", "swe-agent"],
    ["swe-agent/v1-retry-attempts.traj", "swe-agent"],
    ["openai-messages/openhands-completion.json", "openai-messages"],
    ["openai-messages/anthropic.json", "openai-messages"],
    ["openai-messages/langchain.json", "openai-messages"],
    ["openai-messages/gemini.json", "openai-messages"],
  ];
  for (const [path, format] of expected) assert.equal(detectFormat(JSON.parse(read(path))), format, path);
});

// ---------------------------------------------------------------- SWE-agent 0.x and 1.x

test("swe-agent 0.x: string state, model_name in replay_config, demonstrations left out of the task", () => {
  const recording = load("swe-agent/v0-classic.traj", "swe-agent");
  assert.equal(recording.header.slice.model, "gpt4");
  assert.ok(recording.header.slice.intent.startsWith("ISSUE:\ngreet()"));
  assert.deepEqual(recording.executions.map((e) => e.action), ["run_command", "run_command", "finish"]);
  assert.deepEqual(argvOf(recording.executions[1]), ["bash", "-c", 'edit 2:2\n    return "hello world"\nend_of_edit']);
  assert.equal(selection(recording, 1).reason, "DISCUSSION\nFirst I will find the file.\n\n");
});

test("swe-agent 1.x: a submit answered by a review is a command, the last submit is the finish", () => {
  const json = JSON.parse(read("swe-agent/v1-review-submit.traj"));
  const recording = load("swe-agent/v1-review-submit.traj", "swe-agent");
  assert.deepEqual(recording.executions.map((e) => e.action), ["run_command", "run_command", "run_command", "finish"]);
  assert.deepEqual(argvOf(recording.executions[2]), ["bash", "-c", "submit"]);
  assert.ok(outputOf(recording.executions[2]).startsWith("Thank you for your work on this issue."));
  assert.deepEqual(recording.executions[3].report, {
    kind: "finish",
    status: "success",
    summary: json.info.submission,
  });
  // 1.x keeps history contents as text parts and the config as a JSON string.
  assert.equal(recording.header.slice.intent, "<uploaded_files>\n/testbed\n</uploaded_files>\nFix the typo in app.py.");
  assert.equal(
    recording.header.slice.instructions,
    "You are a helpful assistant that can interact with a computer to solve tasks.",
  );
  assert.equal(recording.header.slice.model, "claude-sonnet-4-20250514");
});

test("swe-agent 1.x: the step added when a limit stopped the run is the finish; earlier empty actions are refusals", () => {
  const json = JSON.parse(read("swe-agent/v1-autosubmit.traj"));
  const recording = load("swe-agent/v1-autosubmit.traj", "swe-agent");
  assert.equal(recording.executions.length, json.trajectory.length);
  assert.deepEqual(recording.executions[1].report, { kind: "refusal", step: 2, code: "format_error", reason: "" });
  assert.deepEqual(selection(recording, 2), { action: "run_command", reason: "I think we should edit src/a.py" });
  assert.deepEqual(recording.executions[3].report, {
    kind: "finish",
    status: "failure",
    summary: json.info.submission,
  });
  assert.deepEqual(selection(recording, 4), { action: "finish", reason: "Exit due to cost limit" });
});

test("swe-agent RetryAgent: the chosen attempt at the top level, else the last of attempts", () => {
  const json = JSON.parse(read("swe-agent/v1-retry-attempts.traj"));
  const last = load("swe-agent/v1-retry-attempts.traj", "swe-agent");
  assert.deepEqual(argvOf(last.executions[0]), ["bash", "-c", "sed -i 's/1/2/' a.py"]);
  const end = last.executions.at(-1)!.report;
  assert.equal(end.kind === "finish" && end.status, "success");
  assert.equal(last.header.slice.model, "gpt-4o");
  const chosen = { ...json, ...json.attempts[0], info: { ...json.attempts[0].info, best_attempt_idx: 0 } };
  const first = importTrajectory(JSON.stringify(chosen), { format: "swe-agent", name: "chosen.traj" });
  assert.deepEqual(argvOf(first.executions[0]), ["bash", "-c", "cat a.py"]);
  assert.deepEqual(first.executions.at(-1)!.report, { kind: "finish", status: "failure", summary: "Exited" });
  const picked = { attempts: json.attempts, info: { best_attempt_idx: 0 } };
  assert.deepEqual(
    importTrajectory(JSON.stringify(picked), { format: "swe-agent", name: "chosen.traj" }).executions,
    first.executions,
  );
});

test("swe-agent: a missing action or observation, a null submission and an object submission are read", () => {
  const json = {
    trajectory: [{ action: "ls", observation: null, thought: null }, { observation: "no action parsed" }, {
      action: "exit",
    }],
    history: [{ role: "user", content: "Do it." }],
    info: { exit_status: "exit_command", submission: null },
  };
  const recording = importTrajectory(JSON.stringify(json), { format: "swe-agent", name: "loose.traj" });
  assert.equal(outputOf(recording.executions[0]), "");
  assert.deepEqual(recording.executions[1].report, {
    kind: "refusal",
    step: 2,
    code: "format_error",
    reason: "no action parsed",
  });
  assert.deepEqual(recording.executions[2].report, { kind: "finish", status: "failure", summary: "exit_command" });
  const object = { ...json, info: { exit_status: "submitted", submission: { patch: "diff" } } };
  const finish =
    importTrajectory(JSON.stringify(object), { format: "swe-agent", name: "o.traj" }).executions.at(-1)!.report;
  assert.deepEqual(finish, { kind: "finish", status: "success", summary: '{"patch":"diff"}' });
});

// ---------------------------------------------------------------- chat logs as agents write them

test("openai-messages: an OpenHands completion log appends its response as the last turn", () => {
  const recording = load("openai-messages/openhands-completion.json", "openai-messages");
  assert.deepEqual(recording.executions.map((e) => e.action), ["run_command", "run_command", "finish"]);
  assert.deepEqual(argvOf(recording.executions[0]), [
    "str_replace_editor",
    '{"command": "view", "path": "/workspace/repo/slug.py"}',
  ]);
  assert.ok(outputOf(recording.executions[1]).startsWith("a-b\n[The command completed with exit code 0.]"));
  assert.deepEqual(recording.executions[2].report, {
    kind: "finish",
    status: "success",
    summary: "slugify replaces spaces with dashes.",
  });
  assert.deepEqual(selection(recording, 3), { action: "finish", reason: "The function now works." });
  // litellm's usage for an Anthropic model: OpenAI names, Anthropic's cache counters beside them.
  assert.deepEqual(usageAt(recording, 3), { input: 80, cache_read: 5800, cache_write: 120, output: 55 });
  assert.equal(recording.header.slice.model, "claude-sonnet-4-20250514");
  assert.ok(recording.header.slice.instructions.startsWith("You are OpenHands agent"));
});

test("openai-messages: a completion log of a model without native tool calls is read from fncall_messages", () => {
  const json = JSON.parse(read("openai-messages/openhands-completion.json"));
  const converted = {
    messages: [{ role: "system", content: "Use <function=...> tags." }, { role: "user", content: "text-only view" }],
    fncall_messages: json.messages,
    response: { choices: [{ message: { role: "assistant", content: "<function=finish>...</function>" } }] },
    fncall_response: json.response,
  };
  const recording = importTrajectory(JSON.stringify(converted), { format: "openai-messages", name: "fncall.json" });
  assert.deepEqual(recording, {
    ...load("openai-messages/openhands-completion.json", "openai-messages"),
    header: { ...recording.header },
  });
  assert.equal(recording.executions.at(-1)!.action, "finish");
});

test("openai-messages: an Anthropic Messages log maps exactly as the same log in OpenAI form", () => {
  const anthropic = load("openai-messages/anthropic.json", "openai-messages");
  const openai = load("openai-messages/anthropic-as-openai.json", "openai-messages");
  assert.deepEqual({ ...anthropic, header: { ...anthropic.header, source: undefined } }, {
    ...openai,
    header: { ...openai.header, source: undefined },
  });
  assert.equal(anthropic.header.slice.instructions, "You are a coding agent working in /repo.");
  // Thinking blocks carry no decision; the text beside the tool calls is the reason.
  assert.deepEqual(selection(anthropic, 2), {
    action: "run_command",
    reason: "I'll look at the parser and the test data together.",
  });
  assert.equal(outputOf(anthropic.executions[1]), "1\tdef parse_date(s):\n2\t    y, m, d = map(int, s.split('-'))");
  assert.deepEqual(usageAt(anthropic, 1), { input: 12, cache_read: 0, cache_write: 2100, output: 70 });
});

test("openai-messages: a per-line transcript joins split answers and skips side chains, meta and summary lines", () => {
  const recording = load("openai-messages/claude-transcript.jsonl", "openai-messages");
  assert.equal(recording.header.slice.intent, "Make test_clock.py pass without sleeping.");
  assert.deepEqual(recording.executions.map((e) => e.action), ["run_command", "run_command", "finish"]);
  // The text line and the tool_use line of message msg_A are one decision.
  assert.deepEqual(selection(recording, 1), { action: "run_command", reason: "I'll run the test to see the failure." });
  assert.deepEqual(argvOf(recording.executions[0]), ["bash", "-c", "pytest -q test_clock.py"]);
  assert.deepEqual(usageAt(recording, 1), { input: 4, cache_read: 0, cache_write: 9000, output: 61 });
  assert.equal(argvOf(recording.executions[1])[0], "Edit");
  assert.equal(recording.header.slice.model, "claude-sonnet-4-5-20250929");
});

test("openai-messages: a Responses rollout (JSON Lines with a BOM and CRLF) maps items to turns", () => {
  const text = read("openai-messages/responses-rollout.jsonl");
  assert.ok(text.startsWith("\ufeff") && text.includes("\r\n"));
  const recording = load("openai-messages/responses-rollout.jsonl", "openai-messages");
  assert.equal(recording.header.slice.instructions, "You are a coding agent. Use the shell tool.");
  assert.equal(recording.header.slice.intent, "How many Python files are in src?");
  assert.deepEqual(argvOf(recording.executions[0]), ["bash", "-lc", "ls src/*.py | wc -l"]);
  assert.deepEqual(recording.header.slice.commands, [["bash"]]);
  assert.equal(outputOf(recording.executions[0]), "7\n");
  assert.equal(recording.executions[0].report.kind === "command" && recording.executions[0].report.exit_code, 0);
  assert.deepEqual(recording.executions[1].report, {
    kind: "finish",
    status: "success",
    summary: "There are 7 Python files in src.",
  });
});

test("openai-messages: LangChain and Gemini message dumps", () => {
  const lc = load("openai-messages/langchain.json", "openai-messages");
  assert.equal(lc.header.slice.instructions, "You are a helpful assistant with a terminal tool.");
  assert.deepEqual(argvOf(lc.executions[0]), ["terminal", '{"commands":["python3 --version"]}']);
  assert.equal(outputOf(lc.executions[0]), "Python 3.12.3");
  assert.deepEqual(usageAt(lc, 1), { input: 44, cache_read: 256, cache_write: null, output: 25 });
  assert.equal(lc.header.slice.model, "gpt-4o-mini-2024-07-18");
  const gemini = load("openai-messages/gemini.json", "openai-messages");
  assert.deepEqual(argvOf(gemini.executions[0]), ["bash", "-c", "du -sh /var/log"]);
  assert.equal(outputOf(gemini.executions[0]), "12M\t/var/log");
  assert.deepEqual(selection(gemini, 1), { action: "run_command", reason: "I'll use du." });
  assert.deepEqual(usageAt(gemini, 1), { input: 500, cache_read: 0, cache_write: null, output: 30 });
});

test("openai-messages: arguments kept as objects, ids reused per answer, a top-level usage list", () => {
  const recording = load("openai-messages/reused-ids.json", "openai-messages");
  assert.deepEqual(recording.executions.map((e) => argvOf(e)?.[2] ?? e.action), [
    "date",
    "date +%s",
    "uptime",
    "finish",
  ]);
  assert.equal(outputOf(recording.executions[0]), "Mon Jan  1 00:00:00 UTC 2025");
  assert.equal(outputOf(recording.executions[1]), "1735689600");
  assert.deepEqual(usageAt(recording, 3), { input: 200, cache_read: null, cache_write: null, output: 12 });
  assert.deepEqual(usageAt(recording, 4), { input: 250, cache_read: null, cache_write: null, output: 3 });
  // A list that does not match the assistant turns one to one is not guessed at.
  const json = JSON.parse(read("openai-messages/reused-ids.json"));
  json.usage.pop();
  const unmatched = importTrajectory(JSON.stringify(json), { format: "openai-messages", name: "u.json" });
  assert.ok(unmatched.answers.every((a) => canonicalJson(a.usage) === canonicalJson(NULL_USAGE)));
});

test("openai-messages: a result logged after a later turn still answers its call", () => {
  const messages = [
    { role: "user", content: "Start a build and tell me when it is done." },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "b1", type: "function", function: { name: "bash", arguments: '{"command":"make"}' } }],
    },
    { role: "assistant", content: "The build is running." },
    { role: "tool", tool_call_id: "b1", content: "built\n" },
    { role: "assistant", content: "The build finished." },
  ];
  const recording = importTrajectory(JSON.stringify(messages), { format: "openai-messages", name: "late.json" });
  assert.deepEqual(recording.executions.map((e) => e.action), ["run_command", "print", "finish"]);
  assert.equal(outputOf(recording.executions[0]), "built\n");
});

test("openai-messages: custom tool calls, a blank opener, an object tool content, a log saved under history", () => {
  const patch = "*** Begin Patch\n*** Update File: a.txt\n-old\n+new\n*** End Patch";
  const history = [
    { role: "user", content: "" },
    { role: "user", content: "Replace old with new in a.txt." },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "p1", type: "custom", custom: { name: "apply_patch", input: patch } }],
    },
    { role: "tool", tool_call_id: "p1", content: { status: "applied", files: ["a.txt"] } },
    { role: "assistant", content: "Patched." },
  ];
  const json = { history };
  assert.equal(detectFormat(json), "openai-messages");
  const recording = importTrajectory(JSON.stringify(json), { format: "openai-messages", name: "h.json" });
  assert.equal(recording.header.slice.intent, "Replace old with new in a.txt.");
  // A free-form tool's input is its argument text, verbatim.
  assert.deepEqual(argvOf(recording.executions[0]), ["apply_patch", patch]);
  assert.equal(outputOf(recording.executions[0]), '{"status":"applied","files":["a.txt"]}');
});

test("mini-swe-agent 2.x: a file stripped of info and version marker is still recognised by its exit message", () => {
  const json = JSON.parse(read("mini-swe-agent/v2-toolcall.traj.json"));
  const stripped = { messages: json.messages };
  assert.equal(detectFormat(stripped), "mini-swe-agent");
  const recording = importTrajectory(JSON.stringify(stripped), { format: "mini-swe-agent", name: "s.json" });
  assert.deepEqual(recording.executions, load("mini-swe-agent/v2-toolcall.traj.json", "mini-swe-agent").executions);
  assert.equal(recording.header.slice.model, "claude-sonnet-4-5-20250929");
});

const MALFORMED: [string, RegExp][] = [
  [
    "unknown-tool-use-id.json",
    /^unknown-tool-use-id\.json: messages\[2\]: tool result for unknown tool_call_id "toolu_9"$/,
  ],
  [
    "item-without-role.json",
    /^item-without-role\.json: expected an OpenAI-style chat log .*: messages\[1\]: expected a message with a role, found an object with keys content$/,
  ],
];

for (const [file, expected] of MALFORMED) {
  test(`openai-messages: malformed ${file} fails with one clear usage line`, () => {
    assertUsageError(() => load(`openai-messages/malformed/${file}`, "openai-messages"), expected);
  });
}

test("a chat log given as another format still fails with one line naming what it looks like", () => {
  assertUsageError(
    () => load("openai-messages/anthropic.json", "swe-agent"),
    /^anthropic\.json: expected a SWE-agent trajectory .*found an object with keys model, system, messages \(it looks like openai-messages\)$/,
  );
  assertUsageError(
    () => load("openai-messages/claude-transcript.jsonl", "mini-swe-agent"),
    /^claude-transcript\.jsonl: not valid JSON: line \d+, column \d+: .+$/,
  );
  assertUsageError(() => load("swe-agent/v1-retry-attempts.traj", "openai-messages"), /\(it looks like swe-agent\)$/);
  assertUsageError(
    () =>
      importTrajectory(
        '{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [{"id": 1}]}]}',
        { format: "openai-messages", name: "t.json" },
      ),
    /messages\[1\]\.tool_calls\[0\]\.name: expected a non-empty string$/,
  );
});

// ---------------------------------------------------------------- invariants

const toAnthropic = (calls: { command: string; output: string }[][], task: string) => {
  const messages: unknown[] = [{ role: "user", content: task }];
  calls.forEach((turn, t) => {
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `turn ${t}` },
        ...turn.map((c, j) => ({ type: "tool_use", id: `u${t}_${j}`, name: "bash", input: { command: c.command } })),
      ],
    });
    messages.push({
      role: "user",
      content: turn.map((c, j) => ({ type: "tool_result", tool_use_id: `u${t}_${j}`, content: c.output })),
    });
  });
  messages.push({ role: "assistant", content: [{ type: "text", text: "done" }] });
  return { system: "rules", messages };
};

const toOpenAi = (calls: { command: string; output: string }[][], task: string) => {
  const messages: unknown[] = [{ role: "system", content: "rules" }, { role: "user", content: task }];
  calls.forEach((turn, t) => {
    messages.push({
      role: "assistant",
      content: `turn ${t}`,
      tool_calls: turn.map((c, j) => ({
        id: `u${t}_${j}`,
        type: "function",
        function: { name: "bash", arguments: JSON.stringify({ command: c.command }) },
      })),
    });
    turn.forEach((c, j) => messages.push({ role: "tool", tool_call_id: `u${t}_${j}`, content: c.output }));
  });
  messages.push({ role: "assistant", content: "done" });
  return { messages };
};

test("any Anthropic-shaped log imports exactly as its OpenAI-shaped twin", () => {
  const call = fc.record({ command: fc.string({ minLength: 1 }), output: fc.string() });
  fc.assert(
    fc.property(
      fc.string({ minLength: 1 }).filter((s) => s.trim() !== ""),
      fc.array(fc.array(call, { minLength: 1, maxLength: 3 }), { maxLength: 5 }),
      (task, turns) => {
        const a = importTrajectory(JSON.stringify(toAnthropic(turns, task)), {
          format: "openai-messages",
          name: "log",
        });
        const o = importTrajectory(JSON.stringify(toOpenAi(turns, task)), { format: "openai-messages", name: "log" });
        assert.deepEqual(a, o);
        assert.equal(a.executions.length, turns.flat().length + 1);
      },
    ),
    { numRuns: 60 },
  );
});

test("a JSON Lines log reads the same with CRLF line ends, a BOM and blank lines", () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ command: fc.string({ minLength: 1 }), output: fc.string() }), {
        minLength: 1,
        maxLength: 4,
      }),
      (calls) => {
        const { messages } = toOpenAi([calls], "task");
        const lf = messages.map((m) => JSON.stringify(m)).join("\n");
        const crlf = `\ufeff${messages.map((m) => JSON.stringify(m)).join("\r\n\r\n")}\r\n`;
        assert.deepEqual(
          importTrajectory(crlf, { format: "openai-messages", name: "l.jsonl" }),
          importTrajectory(lf, { format: "openai-messages", name: "l.jsonl" }),
        );
      },
    ),
    { numRuns: 30 },
  );
});

// ---------------------------------------------------------------- replay

const REPLAYED: [string, ImportFormat][] = [
  ["mini-swe-agent/v2-toolcall.traj.json", "mini-swe-agent"],
  ["mini-swe-agent/v2-textbased.traj.json", "mini-swe-agent"],
  ["mini-swe-agent/v2-responses.traj.json", "mini-swe-agent"],
  ["mini-swe-agent/v1-early-xml.json", "mini-swe-agent"],
  ["swe-agent/v0-classic.traj", "swe-agent"],
  ["swe-agent/v1-review-submit.traj", "swe-agent"],
  ["swe-agent/v1-autosubmit.traj", "swe-agent"],
  ["swe-agent/v1-retry-attempts.traj", "swe-agent"],
  ["openai-messages/openhands-completion.json", "openai-messages"],
  ["openai-messages/anthropic.json", "openai-messages"],
  ["openai-messages/claude-transcript.jsonl", "openai-messages"],
  ["openai-messages/responses-rollout.jsonl", "openai-messages"],
  ["openai-messages/langchain.json", "openai-messages"],
  ["openai-messages/gemini.json", "openai-messages"],
  ["openai-messages/reused-ids.json", "openai-messages"],
];

test("every variant replays to its finish under both policies, with the same execution reports", async () => {
  for (const [path, format] of REPLAYED) await assertReplays(load(path, format), path);
});

test("a trajectory cut off mid-run replays to the step limit, not past the recording", async () => {
  const json = JSON.parse(read("mini-swe-agent/v2-toolcall.traj.json"));
  json.messages = json.messages.slice(0, 5);
  delete json.info;
  const recording = importTrajectory(JSON.stringify(json), { format: "mini-swe-agent", name: "cut.json" });
  assert.equal(recording.executions.length, 2);
  await assertReplays(recording, "cut.json", "step_limit");
});

test("tens of megabytes import in one pass; a long imported run replays under the bounded ceiling", async () => {
  const output = "x".repeat(12_000);
  const turns = 1_500;
  const lines = [JSON.stringify({ type: "user", message: { role: "user", content: "task" } })];
  for (let i = 0; i < turns; i++) {
    lines.push(
      JSON.stringify({
        type: "assistant",
        message: {
          id: `m${i}`,
          role: "assistant",
          content: [{ type: "text", text: `step ${i}` }, {
            type: "tool_use",
            id: `u${i}`,
            name: "Bash",
            input: { command: `echo ${i}` },
          }],
        },
      }),
    );
    lines.push(
      JSON.stringify({
        type: "user",
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: `u${i}`, content: `${output}${i}` }] },
      }),
    );
  }
  const text = lines.join("\n");
  assert.ok(text.length > 18_000_000);
  const big = importTrajectory(text, { format: "openai-messages", name: "big.jsonl" });
  assert.equal(big.executions.length, turns);
  assert.equal(outputOf(big.executions[turns - 1]), `${output}${turns - 1}`);

  const run = { ...big, answers: big.answers.filter((a) => a.step <= 150), executions: big.executions.slice(0, 150) };
  run.header = { ...run.header, slice: { ...run.header.slice, limits: { max_steps: 150 } } };
  const result = await replay(run, "bounded");
  assert.equal(result.outcome, "step_limit");
  assert.ok(result.report.checkpoints > 0, "the tail was retired at least once");
  assert.ok(Math.max(...result.report.calls.map((c) => c.request_bytes)) <= 65_536);
});
