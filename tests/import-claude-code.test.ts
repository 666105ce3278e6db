// Claude Code session files as recordings: a hand-written session shaped like Claude Code 2.1's files
// (tests/fixtures/claude-code/, every line kind once), its subagent file, and two real sessions published under the MIT
// licence (tests/fixtures/claude-code-spotter/, source and commit in its README).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import fc from "fast-check";
import { UsageError } from "../lib/errors.ts";
import { detectRecordingFormat } from "../lib/recording/format.ts";
import { importSession, importTrajectory } from "../lib/recording/importers/index.ts";
import { parseRecording, type Recording, recordingLine } from "../lib/recording/recording.ts";
import { canonicalJson } from "../lib/text/digest.ts";
import { replayRecording } from "../bench/workloads.ts";

const SESSION_ID = "4f1c0000-0000-4000-8000-000000000001";
const FIXTURES = new URL("./fixtures/", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, FIXTURES), "utf8");
const SESSION = read(`claude-code/${SESSION_ID}.jsonl`);
const SUBAGENT = read(`claude-code/${SESSION_ID}/subagents/agent-a1b2c3d.jsonl`);
const REAL = ["claude-code-spotter/short.jsonl", "claude-code-spotter/tool_heavy.jsonl"];

const load = (text: string, name = "session.jsonl") => importSession(text, { format: "claude-code", name });

/** Replays under both policies to the end (`finished`: to its finish, else to the step limit, where a session stops
 * without a final answer). */
async function assertReplays(recording: Recording, name: string): Promise<void> {
  const finished = recording.executions.at(-1)?.action === "finish";
  const serialized = [recording.header, ...recording.answers, ...recording.executions].map(recordingLine).join("");
  assert.deepEqual(parseRecording(serialized, { name }), recording, `${name} round-trips`);
  const reports: string[] = [];
  for (const policy of ["legacy", "bounded"] as const) {
    const result = await replayRecording(recording, policy);
    assert.equal(
      result.error?.code ?? null,
      finished ? null : "step_limit",
      `${name} ${policy}: ${result.error?.message}`,
    );
    assert.equal(result.report.model_calls, recording.answers.length, `${name} ${policy}: every answer used`);
    reports.push(canonicalJson(result.reports));
  }
  assert.equal(reports[0], reports[1], `${name}: both policies see the same execution reports`);
}

function usageError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, String(error));
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes("\n"), "one line");
    return true;
  });
}

test("claude-code: tools become Loom's actions, with paths relative to the session's cwd", () => {
  const { recording } = load(SESSION);
  assert.deepEqual(recording.executions.map((e) => e.action), [
    "read_file",
    "search",
    "list_files",
    "edit_file",
    "run_tests",
    "edit_file",
    "write_file",
    "run_command",
    "run_command",
    "run_tests",
    "finish",
  ]);
  const args = recording.executions.map((e) => e.args);
  assert.deepEqual(args[0], { path: "src/dates.py" });
  assert.deepEqual(args[1], { query: "parse\\(", path: "src" });
  assert.deepEqual(args[2], { path: "." });
  assert.deepEqual(args[3], {
    path: "src/dates.py",
    old_text: "    return s",
    new_text: "    return iso_week(s) or s",
  });
  // MultiEdit: one edit with its replacements in order.
  assert.deepEqual(args[5], { path: "src/dates.py", old_text: "W\nweek", new_text: "[Ww]\niso week" });
  assert.deepEqual(args[6], { path: "tests/test_weeks.py", content: "def test_week():\n    assert True\n" });
  // Task (a subagent) has no Loom action: an opaque command named after the tool, its output kept.
  assert.equal((args[7] as { argv: string[] }).argv[0], "Task");
  const task = recording.executions[7];
  assert.ok(task?.report.kind === "command");
  assert.equal(task.results[task.report.output], "Two callers: cli.py and api.py.\nagentId: a1b2c3d (for resuming)");
  assert.deepEqual(args[8], { argv: ["bash", "-c", "git status --short"] });
  // The text the model saw is the observation, byte for byte.
  const first = recording.executions[0];
  assert.ok(first?.report.kind === "read");
  assert.equal(first.results[first.report.result], "     1→def parse(s):\n     2→    return s\n");
  // Edits and the command that may write count as workspace changes; test runs run on the revision they saw.
  const revisions = recording.executions.map((e) =>
    e.report.kind === "edit"
      ? `${e.report.revision_before}>${e.report.revision_after}`
      : e.report.kind === "test"
      ? `test@${e.report.revision}`
      : null
  ).filter((r) => r !== null);
  assert.deepEqual(revisions, ["r0>r1", "test@r1", "r1>r2", "r2>r3", "test@r4"]);
  assert.deepEqual(recording.header.slice.test.command, [
    "bash",
    "-c",
    "cd /home/dev/app && python -m pytest -q tests/test_dates.py",
  ]);
});

test("claude-code: the task, the reasons, the model and the final answer", () => {
  const { recording } = load(SESSION);
  // Slash-command echoes are not the task; the first real prompt is.
  assert.equal(recording.header.slice.intent, "Make the date parser accept ISO weeks, and keep the tests green.");
  assert.equal(recording.header.slice.model, "claude-opus-4-6");
  assert.deepEqual(recording.answers[0]?.value, { action: "read_file", reason: "I'll read the parser first." });
  assert.deepEqual(recording.executions.at(-1)?.report, {
    kind: "finish",
    status: "success",
    summary: "ISO weeks parse now; the tests pass.",
  });
  assert.equal(recording.header.source?.format, "claude-code");
});

test("claude-code: one answer written over several lines is one call, its usage the largest the lines report", () => {
  const { recording, facts } = load(SESSION);
  // msg_01's three lines report output 9, 9 and 120 as the answer streamed.
  assert.deepEqual(facts.usages[0], { input: 3, cache_read: 11442, cache_write: 15005, output: 120 });
  assert.deepEqual(recording.answers[0]?.usage, facts.usages[0]);
  // Nine model calls: the side chain's and the <synthetic> message are not this session's.
  assert.equal(facts.usages.length, 9);
  assert.equal(facts.skipped_sidechain_lines, 1);
  assert.deepEqual(facts.call_steps, [1, 2, 4, 5, 6, 8, 9, 10, 11]);
});

test("claude-code: compaction points, later prompts and subagent files are kept as facts", () => {
  const { facts } = load(SESSION);
  const boundary = SESSION.split("\n").findIndex((l) => l.includes('"compact_boundary"')) + 1;
  assert.deepEqual(facts.compactions, [boundary]);
  assert.equal(facts.later_prompts, 1);
  assert.equal(facts.subagent, false);
  const sub = load(SUBAGENT, "agent-a1b2c3d.jsonl");
  assert.equal(sub.facts.subagent, true);
  assert.equal(sub.facts.model, "claude-haiku-4-5-20251001");
  assert.equal(sub.recording.header.slice.intent, "Find callers of parse");
  assert.deepEqual(sub.recording.executions.map((e) => e.action), ["search", "finish"]);
});

test("claude-code: versions without compact_boundary lines count the summaries that continue a session", () => {
  const old = SESSION.split("\n").filter((l) => !l.includes('"compact_boundary"')).join("\n");
  const summary = old.split("\n").findIndex((l) => l.includes('"isCompactSummary"')) + 1;
  assert.deepEqual(load(old).facts.compactions, [summary]);
});

test("claude-code: --from auto detects sessions and subagent files; --from openai-messages still reads them", () => {
  assert.equal(detectRecordingFormat(SESSION, "s.jsonl"), "claude-code");
  assert.equal(detectRecordingFormat(SUBAGENT, "a.jsonl"), "claude-code");
  for (const path of REAL) assert.equal(detectRecordingFormat(read(path), path), "claude-code", path);
  const chat = importTrajectory(SESSION, { format: "openai-messages", name: "s.jsonl" });
  assert.ok(chat.executions.every((e) => ["run_command", "print", "finish"].includes(e.action)));
});

test("claude-code: a line that is not the format is refused with its line number", () => {
  const lines = SESSION.split("\n");
  const stranger = [...lines.slice(0, 2), JSON.stringify({ role: "user", content: "hi" }), ...lines.slice(2)].join(
    "\n",
  );
  usageError(
    () => load(stranger, "x.jsonl"),
    /^x\.jsonl:3: expected a Claude Code session \(.*\) with a sessionId or uuid, found an object with keys role, content$/,
  );
  usageError(
    () => load(`${lines[0]}\n[1, 2]\n`, "x.jsonl"),
    /^x\.jsonl:2: expected a JSON object per line, found an array/,
  );
  usageError(() => load(`${lines[0]}\n{"type": \n`, "x.jsonl"), /^x\.jsonl:2:\d+: not valid JSON: /);
  usageError(() => load(`${lines[0]}\n`, "x.jsonl"), /^x\.jsonl: expected a Claude Code session .*: no user prompt/);
});

test("claude-code: the hand-written session, its subagent and the real sessions replay under both policies", async () => {
  await assertReplays(load(SESSION).recording, "session");
  await assertReplays(load(SUBAGENT).recording, "subagent");
  for (const path of REAL) await assertReplays(load(read(path), path).recording, path);
});

test("claude-code: the real sessions map their Bash, Glob and Read calls and keep their usage", () => {
  const heavy = load(read(REAL[1] ?? ""), "tool_heavy.jsonl");
  const actions = heavy.recording.executions.map((e) => e.action);
  assert.ok(actions.includes("read_file") && actions.includes("list_files"), actions.join());
  assert.ok(heavy.facts.usages.every((u) => u.input !== null && u.output !== null));
  assert.equal(heavy.facts.model, "claude-opus-4-6");
});

test("claude-code: the order in which a split answer's lines report usage does not change the call's usage", () => {
  const counter = fc.integer({ min: 0, max: 100_000 });
  fc.assert(
    fc.property(
      fc.array(fc.record({ input: counter, read: counter, write: counter, output: counter }), {
        minLength: 1,
        maxLength: 5,
      }),
      (parts) => {
        const lines = (order: typeof parts) =>
          [
            JSON.stringify({ type: "user", sessionId: "s", uuid: "u0", message: { role: "user", content: "task" } }),
            ...order.map((p, i) =>
              JSON.stringify({
                type: "assistant",
                sessionId: "s",
                uuid: `a${i}`,
                message: {
                  id: "msg",
                  role: "assistant",
                  model: "claude-opus-4-6",
                  content: [{ type: "text", text: `part ${i}` }],
                  usage: {
                    input_tokens: p.input,
                    cache_read_input_tokens: p.read,
                    cache_creation_input_tokens: p.write,
                    output_tokens: p.output,
                  },
                },
              })
            ),
          ].join("\n");
        const forward = load(lines(parts)).facts.usages;
        const backward = load(lines([...parts].reverse())).facts.usages;
        assert.equal(forward.length, 1);
        assert.deepEqual(forward, backward);
        assert.equal(forward[0]?.output, Math.max(...parts.map((p) => p.output)));
      },
    ),
    { numRuns: 50 },
  );
});

test("--from auto: JSON Lines of neither format are refused naming the first line that is neither", () => {
  usageError(
    () => detectRecordingFormat(`${SESSION.split("\n")[0]}\n\n{"hello": 1}\n`, "x.jsonl"),
    /^x\.jsonl: not a recognised trajectory \(.*; line 3 is an object with keys hello, neither a Claude Code nor a Codex session line\)$/,
  );
});
