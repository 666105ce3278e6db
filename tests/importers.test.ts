// Importers of other agents' trajectories: hand-made mini-swe-agent and SWE-agent files in the workloads' formats
// (tests/fixtures/), the real samples from the workloads folder when it is there (tests/helpers/workloads.ts), and
// hand-written OpenAI-style chat logs (tests/fixtures/openai-messages) written from the format's documentation.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { test } from "node:test";
import fc from "fast-check";
import { digestOf, utf8Length } from "../lib/text/digest.ts";
import { UsageError } from "../lib/errors.ts";
import { endingOf } from "../lib/ending.ts";
import { detectFormat, type ImportFormat, importTrajectory } from "../lib/recording/importers/index.ts";
import { parseRecording, type RecordedExecution, type Recording, recordingLine } from "../lib/recording/recording.ts";
import { NULL_USAGE } from "../lib/vocabulary/turn.ts";
import { workload, WORKLOADS, workloadTests } from "./helpers/workloads.ts";

const FIXTURES = new URL("./fixtures/openai-messages/", import.meta.url);
const workloadTest = workloadTests(import.meta.url);

/** Hand-made, in the format of the workloads' mini-swe-agent 1.x files: every observation kind once. */
const MINI_FIXTURE = "v1-bash-blocks.json";
/** Hand-made SWE-agent files: 0.x with a string replay_config, 1.x function calling with a history and state prompts. */
const SWE_CLASSIC = "v0-classic.traj";
const SWE_FUNCTION_CALLING = "v1-function-calling.traj";

const REAL_MINI = [
  "django__django-11095.json", // plain run
  "pylint-dev__pylint-6528.json", // timeouts, format errors, long-output warnings
  "sympy__sympy-19040.json", // 132 steps, timeouts, many format errors
  "psf__requests-1142.json", // an 868 KB submission
  "matplotlib__matplotlib-13989.json", // a timeout and a long output
];
const REAL_SWE = WORKLOADS === null ? [] : readdirSync(workload("swe-agent")).filter((f) => f.endsWith(".traj")).sort();
const MINI_FILES = [MINI_FIXTURE, ...(WORKLOADS === null ? [] : REAL_MINI)];
const SWE_FILES = [SWE_CLASSIC, SWE_FUNCTION_CALLING, ...REAL_SWE];
/** A fixture's case and, when the workloads folder is there, the real file's. */
function cases<T>(fixture: [string, T], real: [string, T]): [string, T][] {
  return WORKLOADS === null ? [fixture] : [fixture, real];
}
/** A fixture and, when the workloads folder is there, the real file showing the same thing. */
const alsoReal = (fixture: string, real: () => string) => (WORKLOADS === null ? [fixture] : [fixture, real()]);
const realSwe = (part: string) => () => REAL_SWE.find((f) => f.includes(part))!;

const texts = new Map<string, string>();
function read(url: URL): string {
  let text = texts.get(url.href);
  if (text === undefined) {
    text = readFileSync(url, "utf8");
    texts.set(url.href, text);
  }
  return text;
}
const inFixtures = (path: string) => new URL(`./fixtures/${path}`, import.meta.url);
const mini = (file: string) =>
  read(
    file === MINI_FIXTURE ? inFixtures(`mini-swe-agent/${file}`) : pathToFileURL(workload(`mini-swe-agent/${file}`)),
  );
const swe = (file: string) =>
  read(REAL_SWE.includes(file) ? pathToFileURL(workload(`swe-agent/${file}`)) : inFixtures(`swe-agent/${file}`));
const fixture = (file: string) => read(new URL(file, FIXTURES));

function importText(text: string, format: ImportFormat, name: string): Recording {
  return importTrajectory(text, { format, name });
}

/** Header, then per step its selection, arguments and execution: the order the loop records them. */
function serialize(recording: Recording): string {
  let out = recordingLine(recording.header);
  for (const execution of recording.executions) {
    for (const answer of recording.answers.filter((a) => a.step === execution.step)) out += recordingLine(answer);
    out += recordingLine(execution);
  }
  return out;
}

function assertRoundTrips(recording: Recording, name: string): void {
  assert.deepEqual(parseRecording(serialize(recording), { name }), recording);
}

function selection(recording: Recording, step: number): Record<string, unknown> {
  const answer = recording.answers.find((a) => a.step === step && a.phase === "selection");
  assert.ok(answer, `selection answer for step ${step}`);
  return answer.value as Record<string, unknown>;
}

function outputOf(execution: RecordedExecution): string {
  assert.equal(execution.report.kind, "command");
  const ref = (execution.report as { output: string }).output;
  assert.equal(digestOf(execution.results[ref]), ref);
  return execution.results[ref];
}

/** The step counts a fixture is written with, and the workloads readme's index of its mini-swe-agent set (the copy
 * scripts/fetch-workloads.sh makes has no readme: its files are checked by hash instead). */
function indexedSteps(): Map<string, number> {
  const steps = new Map([[MINI_FIXTURE, 7]]);
  if (WORKLOADS === null || !existsSync(workload("README.md"))) return steps;
  const readme = read(pathToFileURL(workload("README.md")));
  for (const match of readme.matchAll(/^\| (\S+\.json) \| (\d+) \|/gm)) steps.set(match[1], Number(match[2]));
  return steps;
}

/** What the model saw after a command, unwrapped independently of the importer (string slicing, no regex). */
function expectedObservation(message: string): { exit_code: number | null; timed_out: boolean; output: string } {
  if (message.startsWith("<returncode>")) {
    const close = message.indexOf("</returncode>\n");
    const exit_code = Number(message.slice("<returncode>".length, close));
    const rest = message.slice(close + "</returncode>\n".length);
    const output = rest.startsWith("<output>\n") && rest.endsWith("</output>") ? rest.slice(9, -9) : rest;
    return { exit_code, timed_out: false, output };
  }
  const open = message.indexOf("\n <output>\n");
  const close = message.lastIndexOf("\n</output>\nPlease try another command");
  assert.ok(message.startsWith("The last command <command>") && open > 0 && close > open, "a timeout message");
  return { exit_code: null, timed_out: true, output: message.slice(open + "\n <output>\n".length, close) };
}

/** A rough size of the legacy transcript: instructions, intent, and per step its reason, argv JSON and observation. */
function legacyTranscriptBytes(recording: Recording): number {
  let bytes = utf8Length(recording.header.slice.instructions) + utf8Length(recording.header.slice.intent);
  for (const execution of recording.executions) {
    const reason = selection(recording, execution.step).reason;
    bytes += typeof reason === "string" ? utf8Length(reason) : 0;
    const report = execution.report;
    if (report.kind === "command") {
      bytes += utf8Length(JSON.stringify(report.argv)) + utf8Length(execution.results[report.output]);
    }
    if (report.kind === "refusal") bytes += utf8Length(JSON.stringify(execution.args.argv)) + utf8Length(report.reason);
    if (report.kind === "finish") bytes += utf8Length(report.summary);
  }
  return bytes;
}

type Message = { role: string; content: string };

// ---------------------------------------------------------------- mini-swe-agent

test("mini-swe-agent: one step per assistant message, as the workloads index counts them", () => {
  const index = indexedSteps();
  for (const file of MINI_FILES) {
    const messages: Message[] = JSON.parse(mini(file)).messages;
    const recording = importText(mini(file), "mini-swe-agent", file);
    const assistants = messages.filter((m) => m.role === "assistant").length;
    assert.equal(recording.executions.length, assistants, file);
    if (index.has(file)) assert.equal(recording.executions.length, index.get(file), file);
    assert.equal(recording.answers.length, 2 * assistants, file);
    assert.deepEqual(recording.executions.map((e) => e.step), Array.from({ length: assistants }, (_, i) => i + 1));
    assert.equal(recording.header.slice.limits.max_steps, assistants);
  }
});

test("mini-swe-agent: observations keep the output byte for byte, without <returncode>/<output> framing", () => {
  for (const file of MINI_FILES) {
    const messages: Message[] = JSON.parse(mini(file)).messages;
    const recording = importText(mini(file), "mini-swe-agent", file);
    const assistantAt = messages.flatMap((m, i) => (m.role === "assistant" ? [i] : []));
    let commands = 0;
    recording.executions.forEach((execution, k) => {
      if (execution.report.kind !== "command") return;
      commands += 1;
      const expected = expectedObservation(messages[assistantAt[k] + 1].content);
      assert.equal(outputOf(execution), expected.output, `${file} step ${execution.step}`);
      assert.equal(execution.report.exit_code, expected.exit_code);
      assert.equal(execution.report.timed_out, expected.timed_out);
      assert.ok(!outputOf(execution).startsWith("<returncode>"));
    });
    assert.ok(commands >= (file === MINI_FIXTURE ? 5 : 20), `${file}: ${commands} commands`);
  }
});

test("mini-swe-agent: exit codes are parsed, a timeout has a null exit code and timed_out", () => {
  const recording = importText(mini(MINI_FIXTURE), "mini-swe-agent", MINI_FIXTURE);
  const reports = recording.executions.map((e) => e.report).filter((r) => r.kind === "command");
  assert.deepEqual(reports.map((r) => [r.exit_code, r.timed_out]), [
    [0, false],
    [0, false],
    [null, true],
    [1, false],
    [0, false],
  ]);
  assert.equal(outputOf(recording.executions[3]), "collecting ...");
});

workloadTest("mini-swe-agent: a real run's exit codes and timeouts", () => {
  const recording = importText(mini("pylint-dev__pylint-6528.json"), "mini-swe-agent", "pylint-dev__pylint-6528.json");
  const reports = recording.executions.map((e) => e.report).filter((r) => r.kind === "command");
  const codes = new Set(reports.map((r) => r.exit_code));
  assert.ok(codes.has(0) && [...codes].some((c) => c !== null && c > 0), `exit codes seen: ${[...codes]}`);
  const timeouts = reports.filter((r) => r.timed_out);
  assert.equal(timeouts.length, 4);
  assert.ok(timeouts.every((r) => r.exit_code === null));
});

test("mini-swe-agent: long outputs keep the agent's warning, head and tail as the model saw them", () => {
  for (
    const [file, count] of cases([MINI_FIXTURE, 1], ["pylint-dev__pylint-6528.json", 7])
  ) {
    const recording = importText(mini(file), "mini-swe-agent", file);
    const long = recording.executions.filter((e) => e.report.kind === "command" && outputOf(e).startsWith("<warning>"));
    assert.equal(long.length, count, file);
    for (const execution of long) {
      assert.match(outputOf(execution), /<output_head>[\s\S]*<elided_chars>[\s\S]*<output_tail>/);
    }
  }
});

test("mini-swe-agent: the reason is the THOUGHT and the command the bash block, each once", () => {
  for (
    const [file, command] of [
      [MINI_FIXTURE, "ls src"],
      ...(WORKLOADS === null
        ? []
        : [["django__django-11095.json", 'find django/contrib/admin -name "*.py" | grep options']]),
    ] as const
  ) {
    const messages: Message[] = JSON.parse(mini(file)).messages;
    const recording = importText(mini(file), "mini-swe-agent", file);
    const first = messages.find((m) => m.role === "assistant")!.content;
    assert.equal(selection(recording, 1).action, "run_command");
    assert.equal(
      selection(recording, 1).reason,
      first.slice(0, first.indexOf("```bash")).trim(),
    );
    assert.deepEqual(recording.executions[0].args, { argv: ["bash", "-c", command] });
    const args = recording.answers.find((a) => a.step === 1 && a.phase === "arguments");
    assert.deepEqual(args?.value, recording.executions[0].args);
  }
});

test("mini-swe-agent: a format-error turn is a refused step carrying the agent's reply", () => {
  for (const file of alsoReal(MINI_FIXTURE, () => "sympy__sympy-19040.json")) {
    const messages: Message[] = JSON.parse(mini(file)).messages;
    const recording = importText(mini(file), "mini-swe-agent", file);
    const refused = recording.executions.filter((e) => e.report.kind === "refusal");
    const errors = messages.filter((m) =>
      m.role === "user" && m.content.startsWith("Please always provide EXACTLY ONE action")
    );
    assert.equal(refused.length, errors.length);
    assert.ok(refused.length >= (file === MINI_FIXTURE ? 1 : 10), file);
    for (const [i, execution] of refused.entries()) {
      assert.equal(execution.action, "run_command");
      assert.deepEqual(execution.report, {
        kind: "refusal",
        step: execution.step,
        code: "format_error",
        reason: errors[i].content,
      });
      const argv = execution.args.argv as string[];
      assert.deepEqual(argv.slice(0, 2), ["bash", "-c"]);
      // The proposed commands sit in argv, not repeated in the reason.
      assert.ok(!String(selection(recording, execution.step).reason ?? "").includes("```bash"));
    }
  }
});

test("mini-swe-agent: the submission becomes finish with the patch as summary", () => {
  for (const file of MINI_FILES) {
    const json = JSON.parse(mini(file));
    const recording = importText(mini(file), "mini-swe-agent", file);
    const last = recording.executions.at(-1)!;
    assert.equal(last.action, "finish", file);
    assert.deepEqual(last.report, { kind: "finish", status: "success", summary: json.info.submission });
    assert.deepEqual(last.args, { status: "success", summary: json.info.submission });
    assert.deepEqual(last.results, {});
    assert.equal(selection(recording, last.step).action, "finish");
    assert.equal(recording.executions.filter((e) => e.action === "finish").length, 1);
  }
});

test("mini-swe-agent: a run that ended on a limit gets a failed finish after its last step", () => {
  for (const file of alsoReal(MINI_FIXTURE, () => "django__django-11095.json")) {
    const json = JSON.parse(mini(file));
    json.messages = json.messages.slice(0, 10); // cut before the submission
    json.info.exit_status = "LimitsExceeded";
    json.info.submission = "";
    const recording = importText(JSON.stringify(json), "mini-swe-agent", "limit.json");
    assert.equal(recording.executions.length, 5);
    assert.deepEqual(recording.executions.at(-1)!.report, {
      kind: "finish",
      status: "failure",
      summary: "LimitsExceeded",
    });
    delete json.info.exit_status;
    const unfinished = importText(JSON.stringify(json), "mini-swe-agent", "cut.json");
    assert.equal(unfinished.executions.length, 4);
    assert.ok(unfinished.executions.every((e) => e.action === "run_command"));
    assertRoundTrips(unfinished, "cut.json");
  }
});

test("mini-swe-agent: header carries task, system prompt, model, actions, commands and limits", () => {
  for (
    const [file, steps] of cases([MINI_FIXTURE, 7], ["django__django-11095.json", 35])
  ) {
    const json = JSON.parse(mini(file));
    const { header } = importText(mini(file), "mini-swe-agent", file);
    assert.equal(header.slice.intent, json.messages[1].content);
    assert.equal(header.slice.instructions, json.messages[0].content);
    assert.equal(header.slice.workspace, undefined);
    assert.deepEqual(header.slice.actions, ["run_command", "finish"]);
    assert.deepEqual(header.slice.commands, [["bash", "-c"]]);
    assert.deepEqual(header.slice.test, { command: ["true"], timeout_ms: 60000 });
    assert.equal(header.slice.model, "google/gemini-3-pro-preview");
    assert.deepEqual(header.slice.limits, { max_steps: steps, command_timeout_ms: 60000 });
    assert.deepEqual(header.source, { format: "mini-swe-agent", name: file });
  }
});

test("mini-swe-agent: usage from the response is on the selection answer, null where absent, never 0", () => {
  for (const file of alsoReal(MINI_FIXTURE, () => "django__django-11095.json")) {
    const json = JSON.parse(mini(file));
    const recording = importText(mini(file), "mini-swe-agent", file);
    const raw = json.messages[2].extra.response.usage;
    const cached = raw.prompt_tokens_details?.cached_tokens ?? null;
    assert.equal(recording.answers[0].phase, "selection");
    assert.deepEqual(recording.answers[0].usage, {
      input: raw.prompt_tokens, // as live OpenAI-style providers count it: cached tokens included
      cache_read: cached,
      cache_write: null,
      output: raw.completion_tokens,
    });
    for (const answer of recording.answers.filter((a) => a.phase === "arguments")) {
      assert.deepEqual(answer.usage, NULL_USAGE);
    }
    delete json.messages[2].extra;
    const bare = importText(JSON.stringify(json), "mini-swe-agent", file);
    assert.deepEqual(bare.answers[0].usage, NULL_USAGE);
  }
});

test("mini-swe-agent: the legacy transcript stays within 25% of the original message history", () => {
  for (const file of MINI_FILES) {
    const messages: Message[] = JSON.parse(mini(file)).messages;
    const history = messages.reduce((sum, m) => sum + utf8Length(m.content), 0);
    const ratio = legacyTranscriptBytes(importText(mini(file), "mini-swe-agent", file)) / history;
    assert.ok(ratio > 0.75 && ratio < 1.25, `${file}: legacy/original = ${ratio.toFixed(3)}`);
  }
});

test("mini-swe-agent: every imported recording round-trips through recordingLine and parseRecording", () => {
  for (const file of MINI_FILES) assertRoundTrips(importText(mini(file), "mini-swe-agent", file), file);
});

// ---------------------------------------------------------------- SWE-agent

test("swe-agent: one step per trajectory entry, observations byte for byte, exit codes null", () => {
  for (const file of SWE_FILES) {
    const json = JSON.parse(swe(file));
    if (!json.trajectory) continue;
    const recording = importText(swe(file), "swe-agent", file);
    assert.equal(recording.executions.length, json.trajectory.length, file);
    json.trajectory.forEach((entry: { action: string; observation: string; thought: string }, k: number) => {
      const execution = recording.executions[k];
      if (entry.action.trim() === "submit") return;
      assert.deepEqual(execution.args, { argv: ["bash", "-c", entry.action] });
      assert.equal(outputOf(execution), entry.observation, `${file} step ${k + 1}`);
      assert.equal(execution.report.kind === "command" && execution.report.exit_code, null);
      assert.equal(selection(recording, k + 1).reason, entry.thought.trim() === "" ? undefined : entry.thought);
    });
  }
});

test("swe-agent: submit becomes finish with the submitted patch", () => {
  for (const file of SWE_FILES) {
    const json = JSON.parse(swe(file));
    const recording = importText(swe(file), "swe-agent", file);
    const last = recording.executions.at(-1)!;
    assert.equal(last.action, "finish", file);
    // A history-only file has no info: the submit observation (the patch) is the summary.
    const summary = json.info
      ? json.info.submission
      : json.history.at(-1).content.replace(/\n\(Open file:[\s\S]*$/, "");
    assert.ok(summary.includes("diff --git"), file);
    assert.deepEqual(last.report, { kind: "finish", status: "success", summary });
    assertRoundTrips(recording, file);
  }
});

test("swe-agent: a history-only file yields the same steps as its trajectory", () => {
  for (const file of alsoReal(SWE_FUNCTION_CALLING, realSwe("1c2844"))) {
    const json = JSON.parse(swe(file));
    const fromTrajectory = importText(swe(file), "swe-agent", file);
    delete json.trajectory;
    const fromHistory = importText(JSON.stringify(json), "swe-agent", file);
    assert.equal(fromHistory.executions.length, fromTrajectory.executions.length);
    // The history appends SWE-agent's state prompt to each observation; the importer strips it.
    assert.deepEqual(fromHistory.executions, fromTrajectory.executions);
  }
});

test("swe-agent: the task is the first real user turn (demonstrations skipped), the system prompt the instructions", () => {
  for (
    const file of alsoReal(
      SWE_FUNCTION_CALLING,
      () => REAL_SWE.find((f) => f.startsWith("gpt4__swe-agent__test-repo"))!,
    )
  ) {
    const json = JSON.parse(swe(file));
    delete json.replay_config; // without one the model is unknown
    const { header } = importText(JSON.stringify(json), "swe-agent", file);
    const task = json.history.find((m: { role: string; is_demo?: boolean }) => m.role === "user" && !m.is_demo);
    assert.equal(header.slice.intent, task.content);
    assert.ok(!header.slice.intent.includes("--- DEMONSTRATION ---"));
    assert.equal(header.slice.instructions, json.history[0].content);
    assert.equal(header.slice.model, "unknown");
    assert.deepEqual(header.slice.actions, ["run_command", "finish"]);
    assert.deepEqual(header.slice.commands, [["bash", "-c"]]);
    assert.deepEqual(header.source, { format: "swe-agent", name: file });
  }
});

test("swe-agent: the model name comes from replay_config when the file has one", () => {
  assert.equal(importText(swe(SWE_CLASSIC), "swe-agent", SWE_CLASSIC).header.slice.model, "gpt4");
  for (const file of alsoReal(SWE_FUNCTION_CALLING, realSwe("function_calling__install"))) {
    assert.equal(importText(swe(file), "swe-agent", file).header.slice.model, "gpt-4o");
  }
});

test("swe-agent: a run that ended on a cost limit finishes with status failure", () => {
  for (const file of alsoReal(SWE_FUNCTION_CALLING, realSwe("function_calling__install"))) {
    const json = JSON.parse(swe(file));
    json.info.exit_status = "submitted (exit_cost)";
    const last = importText(JSON.stringify(json), "swe-agent", file).executions.at(-1)!.report;
    assert.equal(last.kind === "finish" && last.status, "failure");
  }
});

// ---------------------------------------------------------------- openai-messages

test("openai-messages: parallel tool calls become consecutive steps, each with its own result", () => {
  const recording = importText(fixture("parallel-tools.json"), "openai-messages", "parallel-tools.json");
  assert.deepEqual(recording.executions.map((e) => e.action), [
    "run_command",
    "run_command",
    "run_command",
    "print",
    "finish",
  ]);
  assert.deepEqual(recording.executions[0].args, { argv: ["bash", "-c", "ls /repo"] });
  assert.equal(outputOf(recording.executions[0]), "app.py\ntest_app.py\n");
  assert.deepEqual(recording.executions[1].args, {
    argv: ["str_replace_editor", '{"command": "view", "path": "/repo/app.py"}'],
  });
  assert.equal(outputOf(recording.executions[1]), '1\tdef greet():\n2\t    return "hello wrold"\n');
  assert.ok(recording.executions.slice(0, 3).every((e) => e.report.kind === "command" && e.report.exit_code === null));
});

test("openai-messages: a non-shell tool runs as [name, arguments JSON] under the prefix [name]", () => {
  const { header } = importText(fixture("parallel-tools.json"), "openai-messages", "parallel-tools.json");
  assert.deepEqual(header.slice.commands, [["bash", "-c"], ["str_replace_editor"]]);
  assert.deepEqual(header.slice.actions, ["run_command", "print", "finish"]);
  assert.equal(header.slice.model, "gpt-4o-2024-08-06");
  assert.equal(
    header.slice.instructions,
    "You are a coding agent. Use the tools to inspect and change the repository in /repo.",
  );
  assert.equal(header.slice.intent, 'The greeting in app.py misspells "world". Fix it and make sure the tests pass.');
  assert.equal(header.slice.limits.max_steps, 5);
});

test("openai-messages: the assistant text is the reason of its first call; usage goes there too", () => {
  const recording = importText(fixture("parallel-tools.json"), "openai-messages", "parallel-tools.json");
  assert.deepEqual(selection(recording, 1), { action: "run_command" });
  assert.deepEqual(recording.answers[0].usage, { input: 176, cache_read: 1024, cache_write: null, output: 48 });
  assert.deepEqual(recording.answers[2].usage, NULL_USAGE); // the parallel second call
  assert.deepEqual(selection(recording, 3), {
    action: "run_command",
    reason: "The typo is on line 2. I will fix it and run the tests.",
  });
  assert.deepEqual(recording.answers[4].usage, { input: 1350, cache_read: null, cache_write: null, output: 61 });
});

test("openai-messages: a tool result given as text parts is their texts joined by newlines", () => {
  const recording = importText(fixture("parallel-tools.json"), "openai-messages", "parallel-tools.json");
  assert.equal(outputOf(recording.executions[2]), ".\n1 passed in 0.02s");
});

test("openai-messages: assistant text without tool calls is print mid-run, finish at the end", () => {
  const tools = importText(fixture("parallel-tools.json"), "openai-messages", "parallel-tools.json");
  const print = tools.executions[3];
  const text = "The fix is in and the test passes.";
  assert.deepEqual(print.args, { text });
  assert.deepEqual(print.report, { kind: "print", text: digestOf(text) });
  assert.deepEqual(print.results, { [digestOf(text)]: text });
  assert.deepEqual(tools.executions[4].report, {
    kind: "finish",
    status: "success",
    summary: "Fixed the typo in app.py; 1 test passes.",
  });
  assert.deepEqual(selection(tools, 5), { action: "finish", reason: "Wrapping up." });

  const final = importText(fixture("final-message.json"), "openai-messages", "final-message.json");
  assert.deepEqual(final.executions.map((e) => e.action), ["run_command", "finish"]);
  assert.deepEqual(final.executions[1].report, {
    kind: "finish",
    status: "success",
    summary: "Yes: `git status --short` printed nothing, so the working tree is clean.",
  });
});

test("openai-messages: a shell tool whose command is an argv runs as that argv", () => {
  const recording = importText(fixture("final-message.json"), "openai-messages", "final-message.json");
  assert.deepEqual(recording.executions[0].args, { argv: ["git", "status", "--short"] });
  assert.equal(outputOf(recording.executions[0]), "");
  assert.deepEqual(recording.header.slice.commands, [["git"]]);
  assert.equal(recording.header.slice.instructions, "Work in the current directory. Prefer small, safe commands.");
  assert.equal(recording.header.slice.intent, "Is the working tree clean?");
  assert.equal(recording.header.slice.model, "unknown");
});

test("openai-messages: the deprecated function_call form and a final refusal (finish with failure)", () => {
  const recording = importText(fixture("function-call.json"), "openai-messages", "function-call.json");
  assert.deepEqual(recording.executions[0].args, { argv: ["get_weather", '{"city": "Paris"}'] });
  assert.equal(outputOf(recording.executions[0]), '{"rain_probability": 0.8}');
  assert.deepEqual(recording.executions[1].report, {
    kind: "finish",
    status: "failure",
    summary: "I cannot give advice about umbrellas.",
  });
});

test("openai-messages: a JSON Lines log (one message per line) imports like the same array", () => {
  const lines = fixture("chat.jsonl");
  const recording = importText(lines, "openai-messages", "chat.jsonl");
  const asArray = `[${lines.trim().split("\n").join(",")}]`;
  assert.deepEqual(importText(asArray, "openai-messages", "chat.jsonl"), recording);
  assert.deepEqual(recording.executions[0].args, { argv: ["bash", "-c", "uname -s"] });
  assert.equal(outputOf(recording.executions[0]), "Linux\n");
});

test("openai-messages: every fixture round-trips through recordingLine and parseRecording", () => {
  for (const file of ["parallel-tools.json", "final-message.json", "function-call.json", "chat.jsonl"]) {
    assertRoundTrips(importText(fixture(file), "openai-messages", file), file);
  }
});

const MALFORMED: [string, RegExp][] = [
  [
    "unknown-tool-call-id.json",
    /^unknown-tool-call-id\.json: messages\[2\]: tool result for unknown tool_call_id "call_b"$/,
  ],
  [
    "missing-tool-result.json",
    /^missing-tool-result\.json: messages\[1\]\.tool_calls\[0\]: no tool result for tool call "call_a"$/,
  ],
  [
    "no-user-message.json",
    /^no-user-message\.json: expected an OpenAI-style chat log .*: no user message \(the task\)$/,
  ],
  ["bad-role.json", /^bad-role\.json: expected an OpenAI-style chat log .*: messages\[1\]\.role: /],
  [
    "missing-function-name.json",
    /^missing-function-name\.json: expected an OpenAI-style chat log .*messages\[1\]\.tool_calls\[0\]\.function\.name/,
  ],
  [
    "call-after-finish.json",
    /^call-after-finish\.json: messages\[1\]\.tool_calls\[1\]: tool call after the run finished/,
  ],
  ["truncated.json", /^truncated\.json: not valid JSON: line \d+, column \d+: .+$/],
];

for (const [file, expected] of MALFORMED) {
  test(`openai-messages: malformed ${file} fails with one clear usage line`, () => {
    const text = read(new URL(`malformed/${file}`, FIXTURES));
    assert.throws(
      () => importText(text, "openai-messages", file),
      (error: unknown) => {
        assert.ok(error instanceof UsageError);
        assert.equal(endingOf({ threw: error }).exitCode, 2);
        assert.ok(!error.message.includes("\n"), error.message);
        assert.match(error.message, expected);
        return true;
      },
    );
  });
}

test("openai-messages: any log of shell calls imports with every result stored under its digest", () => {
  const call = fc.record({ command: fc.string({ minLength: 1 }), output: fc.string(), thought: fc.string() });
  fc.assert(
    fc.property(
      fc.string({ minLength: 1 }).filter((s) => s.trim() !== ""),
      fc.array(fc.array(call, { minLength: 1, maxLength: 3 }), { maxLength: 6 }),
      (task, turns) => {
        const messages: unknown[] = [{ role: "system", content: "rules" }, { role: "user", content: task }];
        turns.forEach((calls, t) => {
          messages.push({
            role: "assistant",
            content: calls[0].thought,
            tool_calls: calls.map((c, j) => ({
              id: `c${t}_${j}`,
              type: "function",
              function: { name: "bash", arguments: JSON.stringify({ command: c.command }) },
            })),
          });
          calls.forEach((c, j) => messages.push({ role: "tool", tool_call_id: `c${t}_${j}`, content: c.output }));
        });
        messages.push({ role: "assistant", content: "done" });
        const recording = importText(JSON.stringify({ messages }), "openai-messages", "prop.json");
        const flat = turns.flat();
        assert.equal(recording.executions.length, flat.length + 1);
        flat.forEach((c, k) => {
          assert.deepEqual(recording.executions[k].args, { argv: ["bash", "-c", c.command] });
          assert.equal(outputOf(recording.executions[k]), c.output);
        });
        assert.equal(recording.header.slice.intent, task);
        assertRoundTrips(recording, "prop.json");
      },
    ),
    { numRuns: 60 },
  );
});

// ---------------------------------------------------------------- formats and errors

test("detectFormat recognises each sample's format", () => {
  assert.equal(detectFormat(JSON.parse(mini(MINI_FILES[0]))), "mini-swe-agent");
  for (const file of SWE_FILES) assert.equal(detectFormat(JSON.parse(swe(file))), "swe-agent", file);
  assert.equal(detectFormat(JSON.parse(fixture("parallel-tools.json"))), "openai-messages");
  assert.equal(detectFormat(JSON.parse(fixture("final-message.json"))), "openai-messages");
  assert.equal(detectFormat({ rows: [] }), null);
  assert.equal(detectFormat("text"), null);
});

test("a file in the wrong format fails with one line naming the format expected and what was found", () => {
  const file = SWE_FUNCTION_CALLING;
  assert.throws(
    () => importText(swe(file), "mini-swe-agent", file),
    (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.equal(
        error.message,
        `${file}: expected a mini-swe-agent trajectory (messages[] with role/content), found an object with keys ` +
          "environment, trajectory, history, info, replay_config (it looks like swe-agent)",
      );
      return true;
    },
  );
  assert.throws(
    () => importText(mini(MINI_FILES[0]), "swe-agent", "a.json"),
    /^UsageError: a\.json: expected a SWE-agent trajectory .*found an object with keys info, messages, trajectory_format, instance_id \(it looks like mini-swe-agent\)$/,
  );
  assert.throws(
    () => importText(mini(MINI_FILES[0]), "openai-messages", "a.json"),
    /expected an OpenAI-style chat log .*\(it looks like mini-swe-agent\)$/,
  );
  assert.throws(
    () => importText("[1, 2]", "openai-messages", "n.json"),
    /^UsageError: n\.json: expected an OpenAI-style chat log .*, found an array of 2 numbers$/,
  );
});

test("malformed JSON fails with the file name and the parser's message on one line", () => {
  for (const format of ["mini-swe-agent", "swe-agent", "openai-messages"] as const) {
    assert.throws(
      () => importText('{"messages": [', format, "broken.json"),
      (error: unknown) =>
        error instanceof UsageError && /^broken\.json: not valid JSON: line \d+, column \d+: .+$/.test(error.message) &&
        !error.message.includes("\n"),
    );
  }
});

test("a plain messages[] log without tool calls imports as mini-swe-agent", () => {
  for (
    const [file, steps] of cases([MINI_FIXTURE, 7], ["django__django-11095.json", 35])
  ) {
    const json = JSON.parse(mini(file));
    const plain = JSON.stringify({ messages: json.messages.map(({ role, content }: Message) => ({ role, content })) });
    const recording = importText(plain, "mini-swe-agent", "plain.json");
    assert.equal(recording.executions.length, steps);
    assert.equal(recording.header.slice.model, "unknown");
    // Without info, the submission is taken from the agent's last message.
    assert.equal(recording.executions.at(-1)!.report.kind, "finish");
  }
});

test("lib/importers stays pure: no process, runtime globals, clock, network or filesystem", () => {
  const dir = fileURLToPath(new URL("../lib/recording/importers/", import.meta.url));
  const files = readdirSync(dir).filter((f) => f.endsWith(".ts"));
  assert.ok(files.length >= 5);
  for (const file of files) {
    const source = readFileSync(`${dir}/${file}`, "utf8");
    for (
      const forbidden of [
        /\bprocess\./,
        /\bBun\./,
        /\bDeno\./,
        /\bfetch\(/,
        /Date\.now/,
        /from "node:fs"/,
        /from "node:child_process"/,
      ]
    ) {
      assert.doesNotMatch(source, forbidden, `${file} uses ${forbidden}`);
    }
  }
});
