// Format detection (--from auto) and batch replay's pure rules, tested directly: which format a recording's text is
// in, how a forced format that does not fit is refused, the names of per-recording reports, and what --resume compares.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { UsageError } from "../lib/errors.ts";
import { recordingSettings, reportName, settingsMismatch } from "../lib/recording/batch.ts";
import { detectRecordingFormat, parseRecordingText, RECORDING_FORMATS } from "../lib/recording/format.ts";
import { IMPORT_FORMATS } from "../lib/recording/importers/index.ts";
import type { ContextReport } from "../lib/report/context-report.ts";
import { digestOf } from "../lib/text/digest.ts";

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../${path}`, import.meta.url)), "utf8");
const FIX_BUG = read("testdata/workflows/fix-bug.jsonl");
const MINI = read("tests/fixtures/mini-swe-agent/v2-toolcall.traj.json");
const CHAT = read("tests/fixtures/openai-messages/chat.jsonl");

test("the formats a recording may be read as: Loom's own, then every importer's", () => {
  assert.deepEqual(RECORDING_FORMATS, ["loom", ...IMPORT_FORMATS]);
});

test("--from auto: a Loom header line, a JSON trajectory and a JSON Lines chat log are each recognised", () => {
  assert.equal(detectRecordingFormat(FIX_BUG, "fix-bug.jsonl"), "loom");
  assert.equal(detectRecordingFormat(MINI, "run.traj.json"), "mini-swe-agent");
  assert.equal(detectRecordingFormat(CHAT, "chat.jsonl"), "openai-messages");
});

test("--from auto refuses, in one line naming the file and the place, what is no recording", () => {
  const refusal = (text: string) => {
    try {
      detectRecordingFormat(text, "x.json");
    } catch (error) {
      assert.ok(error instanceof UsageError, String(error));
      return error.message;
    }
    assert.fail("expected a usage error");
  };
  assert.match(refusal(""), /^x\.json: empty file/);
  assert.match(refusal("{ not json"), /^x\.json: not valid JSON/);
  assert.match(refusal('{"a": 1}\n{"b": \n'), /^x\.json:2:\d+: not valid JSON/);
  assert.match(refusal('{"hello": "world"}'), /^x\.json: not a recognised trajectory \(expected loom, mini-swe-agent/);
});

test("--from loom on another agent's trajectory names what the file is and the flag that reads it", () => {
  assert.throws(
    () => parseRecordingText(MINI, { name: "run.traj.json", from: "loom" }),
    /run\.traj\.json: expected a Loom recording .*found a mini-swe-agent trajectory \(use --from mini-swe-agent/,
  );
  const recording = parseRecordingText(MINI, { name: "run.traj.json", from: "auto" });
  assert.ok(recording.answers.length > 0 && recording.executions.length > 0);
  assert.equal(
    parseRecordingText(FIX_BUG, { name: "fix-bug.jsonl", from: "auto" }).header.slice.intent,
    JSON.parse(FIX_BUG.split("\n")[0]).slice.intent,
  );
});

test("per-recording report names keep the batch order and stay apart for recordings of the same name", () => {
  assert.equal(reportName("fix-bug.jsonl", { index: 0, count: 9 }), "1-fix-bug.json");
  assert.equal(reportName("fix-bug.jsonl", { index: 0, count: 12 }), "01-fix-bug.json");
  assert.equal(reportName("run.traj.json", { index: 11, count: 12 }), "12-run.traj.json");
});

test("--resume compares policy, version, recording, protocol and previews, and names the first that differs", () => {
  const settings = recordingSettings(FIX_BUG, {});
  assert.deepEqual(settings, { recording: digestOf(FIX_BUG), protocol: "two-call", previews: "balanced" });
  assert.deepEqual(recordingSettings(null, { stepProtocol: "single-call" }), {
    recording: "unreadable",
    protocol: "single-call",
    previews: "balanced",
  });
  const report = {
    policy: "bounded",
    loom_version: "1.0.0",
    recording: settings.recording,
    step_protocol: "two-call",
    previews: "balanced",
  } as ContextReport;
  const batch = { policy: "bounded" as const, version: "1.0.0", ...settings };
  assert.equal(settingsMismatch(report, batch), null);
  assert.equal(settingsMismatch(report, { ...batch, version: "1.1.0" }), "made under loom 1.0.0, not loom 1.1.0");
  assert.equal(
    settingsMismatch(report, { ...batch, previews: "wide" }),
    "made under --previews balanced, not --previews wide",
  );
  assert.equal(
    settingsMismatch({ ...report, policy: "legacy" } as ContextReport, {
      ...batch,
      policy: "legacy",
      previews: "wide",
    }),
    null,
    "previews shape bounded requests only",
  );
});
