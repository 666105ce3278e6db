// Neither the archive nor the result store survives the run: they live in memory, and a run leaves nothing on disk
// but its workspace edits and its report (no temporary file beside it), after success or failure.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runWithOptions } from "../api.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { answer, give, pick, sliceRequest } from "./helpers/loop-builders.ts";

const project = fileURLToPath(new URL("../testdata/example-project", import.meta.url));

function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

for (const policy of ["legacy", "bounded"] as const) {
  test(`${policy}: a run leaves no file behind but its own edits and the report, also when it fails`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "loom-local-"));
    try {
      const ws = join(dir, "ws");
      cpSync(project, ws, { recursive: true });
      const request = sliceRequest({ workspace: ws, test: { command: ["node", "test.mjs"], timeout_ms: 30_000 } });
      const wsBefore = listing(ws);
      const completed = await runWithOptions(request, {
        contextPolicy: policy,
        contextReport: join(dir, "ok.json"),
        provider: new ScriptedProvider([
          pick("read_file"),
          give({ path: "src/slug.mjs" }),
          pick("run_tests"),
          answer("selection", { $list_history: 0 }),
          pick("finish"),
          give({ status: "failure", summary: "only looked" }),
        ]),
      });
      assert.equal(completed.outcome, "completed");
      // a failing run: the provider runs out of answers in the middle of a step
      const failed = await runWithOptions(request, {
        contextPolicy: policy,
        contextReport: join(dir, "failed.json"),
        provider: new ScriptedProvider([pick("run_tests")]),
      });
      assert.equal(failed.outcome, "failed");
      assert.deepEqual(listing(ws), wsBefore);
      assert.deepEqual(listing(dir).filter((f) => !f.startsWith("ws")), ["failed.json", "ok.json"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
