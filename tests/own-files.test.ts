// Loom's own files never change the revision (issue 36): a report, recording or trace written inside the workspace —
// the natural thing from the project folder — is excluded from the workspace scan by its exact path, so the run that
// tested its final revision is verified. A file of the agent's with a similar name still counts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { anthropicAnswer, startAnthropicServer } from "./helpers/fake-provider-servers.ts";

async function project(t: { after: (fn: () => unknown) => void }, answers: unknown[]) {
  const dir = mkdtempSync(join(tmpdir(), "loom-own-files-"));
  writeFileSync(join(dir, "test.mjs"), "process.exit(0);\n");
  const server = await startAnthropicServer((_r, i) => anthropicAnswer(answers[Math.min(i, answers.length - 1)]));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = { ANTHROPIC_API_KEY: "sk-ant-own-files-0123456789", ANTHROPIC_BASE_URL: server.baseUrl };
  return {
    dir,
    loom: async (args: string[]) => {
      const { io, out } = fakeIo({ cwd: dir, env });
      const code = await main(args, io);
      return { code, json: JSON.parse(out.stdout), stderr: out.stderr };
    },
  };
}

const RUN = [
  "run",
  "Make the tests pass",
  "--model",
  "anthropic/claude-test",
  "--test-command",
  "node test.mjs",
  "--max-steps",
  "5",
  "--output-format",
  "json",
  "--quiet",
];

test("--record, --trace and --context-report inside the workspace (from the project folder) leave the run verified", async (t) => {
  const p = await project(t, [
    { action: "run_tests", reason: "check" },
    { action: "finish" },
    { status: "success", summary: "The tests pass." },
  ]);
  const r = await p.loom([
    ...RUN,
    "--record",
    "run.jsonl",
    "--trace",
    "trace.jsonl",
    "--context-report",
    "report.json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.revision, "r0", "appending the recording and the trace is not the agent's change");
  assert.equal(r.json.verified, true);
});

test("a file the agent writes beside Loom's own files still makes a revision", async (t) => {
  const p = await project(t, [
    { action: "write_file", reason: "note" },
    { path: "run.jsonl.bak", content: "mine\n" },
    { action: "run_tests", reason: "check" },
    { action: "finish" },
    { status: "success", summary: "done" },
  ]);
  const r = await p.loom([...RUN, "--record", "run.jsonl"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.revision, "r1");
  assert.equal(r.json.verified, true, "the test ran on r1, after the write");
});
