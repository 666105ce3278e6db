// Honest replays (issue 36): a replay's money is the recorded run's — labelled "recorded", never "so far" — and its
// times are not a live run's, so a comparison of a replay with a live run gives no time ratio.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { summarizeReports } from "../lib/report/summary.ts";
import { renderSummaryText } from "../lib/report/summary-text.ts";
import { renderResultText } from "../commands/reporter.ts";
import { ROOT } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";

test("a replay prints no money as it goes; its report and text say the cost is the recorded run's", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-honest-replay-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { io, out } = fakeIo({ cwd: dir });
  const code = await main(["replay", join(ROOT, "testdata/workflows/fix-bug.jsonl"), "--context-report", "r.json"], io);
  assert.equal(code, 0, out.stderr);
  assert.doesNotMatch(out.stderr, /so far/);
  const replay = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
  assert.ok(typeof replay.recording === "string");
  // As if the same run had been live: no recording digest.
  const { recording: _, ...live } = replay;
  const doc = summarizeReports([
    { file: "live.json", kind: "run", report: live },
    { file: "replay.json", kind: "run", report: replay },
  ]);
  const ratios = doc.comparisons[0]!.ratios as Record<string, Record<string, number | null>>;
  assert.equal(ratios.elapsed_ms!.total, null, "a replay's time is not compared with a live run's");
  assert.equal(ratios.elapsed_ms!.execution, null);
  assert.equal(ratios.request_bytes!.total, 1, "bytes are compared as before");
  const text = renderSummaryText(summarizeReports([{ file: "replay.json", kind: "run", report: replay }]));
  assert.match(text, /^recorded cost /m);
  assert.doesNotMatch(text, /^cost /m);
  // The end-of-run text of a replay with a cost labels it too.
  const line = renderResultText(
    {
      type: "result",
      format_version: 1,
      outcome: "completed",
      exit_code: 0,
      slice: null,
      status: "success",
      summary: null,
      steps: 1,
      revision: "r0",
      last_test: null,
      tests_current: false,
      verified: false,
      printed: [],
      error: null,
      model_calls: 1,
      request_bytes: { total: 10, max: 10 },
      usage: { input: 1, cache_read: 0, cache_write: 0, output: 1 },
      duration_ms: 1,
      cost: {
        currency: "USD",
        input: 0.01,
        cache_read: 0,
        cache_write: 0,
        output: 0.0052,
        total: 0.0152,
        prices: { source: "built-in", date: "2026-12-01" },
      },
      report_path: null,
    } as Parameters<typeof renderResultText>[0],
    { label: "replay r.jsonl", recorded: true },
  );
  assert.match(
    line,
    /^ {2}recorded cost: \$0\.0152 \(prices of 2026-12-01; the recorded run's calls, not spent now\)$/m,
  );
});
