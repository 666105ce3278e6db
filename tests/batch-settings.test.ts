// Batches that cannot lie: --resume refuses reports made under other settings (policy, version, recording), and a
// comparison of two aggregates pairs their runs by recording, never by position.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { main } from "../main.ts";
import { ROOT } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const FIX_BUG = resolve(ROOT, "testdata/workflows/fix-bug.jsonl");
const SUSPEND = resolve(ROOT, "testdata/workflows/escape-and-suspend.jsonl");

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-settings-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function loom(argv: string[], cwd: string) {
  const { io, out } = fakeIo({ cwd });
  const code = await main(argv, io);
  return { code, ...out };
}

test("--resume refuses a folder whose reports were made under another policy, and leaves the aggregate alone", async (t) => {
  const dir = tempDir(t);
  const folder = join(dir, "recordings");
  mkdirSync(folder);
  cpSync(FIX_BUG, join(folder, "a.jsonl"));
  cpSync(SUSPEND, join(folder, "b.jsonl"));
  const bounded = await loom([
    "replay",
    folder,
    "--quiet",
    "--context-policy",
    "bounded",
    "--context-report",
    "all.json",
  ], dir);
  assert.equal(bounded.code, 1, bounded.stderr + bounded.stdout);
  const before = readFileSync(join(dir, "all.json"), "utf8");

  const resumed = await loom(["replay", folder, "--quiet", "--resume", "--context-report", "all.json"], dir);
  assert.equal(resumed.code, 2);
  assert.match(
    resumed.stderr,
    /^loom replay: --resume: ".*all\.runs\/1-a\.json" was made under --context-policy bounded, not --context-policy legacy \(and 1 more\); replay into another --reports-dir, or without --resume to replace them\n$/,
  );
  assert.equal(readFileSync(join(dir, "all.json"), "utf8"), before, "the bounded aggregate is not relabelled");

  // Under the same policy it resumes, and every run is taken from the earlier reports.
  const same = await loom(
    ["replay", folder, "--quiet", "--resume", "--json", "--context-policy", "bounded", "--context-report", "all.json"],
    dir,
  );
  assert.equal(same.code, 1, same.stderr);
  assert.equal(JSON.parse(same.stdout).resumed, 2);
});

test("--resume refuses a report whose recording has changed since, and one made by another version", async (t) => {
  const dir = tempDir(t);
  const folder = join(dir, "recordings");
  mkdirSync(folder);
  cpSync(FIX_BUG, join(folder, "a.jsonl"));
  cpSync(FIX_BUG, join(folder, "b.jsonl"));
  const first = await loom(["replay", folder, "--quiet", "--reports-dir", "runs"], dir);
  assert.equal(first.code, 0, first.stderr);
  cpSync(SUSPEND, join(folder, "b.jsonl"));
  const changed = await loom(["replay", folder, "--quiet", "--resume", "--reports-dir", "runs"], dir);
  assert.equal(changed.code, 2);
  assert.match(
    changed.stderr,
    /"[^"]*runs\/2-b\.json" was made under recording sha256:[0-9a-f]{12}…, not recording sha256:/,
  );
  assert.equal(changed.stderr.split("\n").length, 2, "one line");

  cpSync(FIX_BUG, join(folder, "b.jsonl"));
  const report = join(dir, "runs", "1-a.json");
  writeFileSync(report, readFileSync(report, "utf8").replace(/"loom_version": "[^"]*"/, '"loom_version": "0.0.1"'));
  const older = await loom(["replay", folder, "--quiet", "--resume", "--reports-dir", "runs"], dir);
  assert.equal(older.code, 2);
  assert.match(older.stderr, /1-a\.json" was made under loom 0\.0\.1, not loom \d+\.\d+\.\d+;/);
});
