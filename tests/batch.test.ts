// Batches through the compiled binary: progress with elapsed time, ETA and the current file; an interrupted batch
// counted honestly and resumed; per-run rows in --json; --jobs defaulting to the CPU count; long summaries clipped in
// text; shards merged with loom report --merge into an aggregate that validates against its schema.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { lines, LOOM_BINARY, ROOT, runLoom, startLoom, waitFor } from "./helpers/binary.ts";
import { validateJsonSchema } from "./helpers/validate-json-schema.ts";

const FIX_BUG = resolve(ROOT, "testdata/workflows/fix-bug.jsonl");
const SUSPEND = resolve(ROOT, "testdata/workflows/escape-and-suspend.jsonl");

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-batch-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A folder of `count` copies of the bundled workflow. */
function folderOf(dir: string, count: number, name = "recordings"): string {
  const folder = join(dir, name);
  mkdirSync(folder);
  for (let i = 0; i < count; i++) cpSync(FIX_BUG, join(folder, `run-${String(i).padStart(2, "0")}.jsonl`));
  return folder;
}

test("a batch's --json lists one row per recording, and --jobs defaults to the CPU count", async (t) => {
  const dir = tempDir(t);
  const folder = folderOf(dir, 2);
  cpSync(SUSPEND, join(folder, "suspend.jsonl"));
  writeFileSync(join(folder, "zz-broken.jsonl"), "{not json\n");
  const r = await runLoom(["replay", folder, "--json", "--quiet", "--context-report", "all.json"], { cwd: dir });
  assert.equal(r.code, 1, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.jobs, availableParallelism());
  assert.deepEqual(out.runs.map((row: { outcome: string }) => row.outcome), [
    "completed",
    "completed",
    "suspended",
    "unreadable",
  ]);
  const [first, , suspended, broken] = out.runs;
  assert.equal(first.file, join(folder, "run-00.jsonl"));
  assert.equal(first.status, "success");
  assert.match(first.summary, /^Fixed slugify/);
  assert.equal(first.model_calls, 15);
  assert.ok(first.request_bytes > 0);
  assert.ok(existsSync(first.report), "the row names its per-run report");
  assert.equal(suspended.exit_code, 4);
  assert.equal(broken.report, null);
  assert.match(broken.error.message, /zz-broken\.jsonl: not valid JSON: line 1, column 2/);
});

test("progress in a log: plain lines with done/total and elapsed time, first and last; none with --quiet", async (t) => {
  const dir = tempDir(t);
  const folder = folderOf(dir, 3);
  const r = await runLoom(["replay", folder, "--jobs", "2"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const progress = lines(r.stderr);
  assert.ok(progress.length >= 2 && progress.length <= 4, r.stderr);
  for (const line of progress) {
    assert.match(line, /^replay \d\/3 done, 0 not completed, \d running, \d+s elapsed(, ETA \d+s)?$/);
  }
  assert.match(progress[0], /^replay 0\/3 done/);
  assert.match(progress.at(-1)!, /^replay 3\/3 done, 0 not completed, 0 running/);
  assert.equal((await runLoom(["replay", folder, "--quiet"], { cwd: dir })).stderr, "");
});

const hasScript = spawnSync("script", ["-qc", "true", "/dev/null"]).status === 0;
if (!hasScript) {
  console.log("batch.test.ts: skipping the terminal progress test: no script(1) to give the binary a terminal");
}

test("progress on a terminal: one live line with elapsed time, ETA and the file being replayed", {
  skip: hasScript ? false : "no script(1) to give the binary a terminal",
}, (t) => {
  const dir = tempDir(t);
  const folder = folderOf(dir, 4);
  // script(1) runs the binary on a pseudo-terminal and copies what it wrote (stdout and stderr) to ours.
  const r = spawnSync("script", ["-qec", `${LOOM_BINARY} replay ${folder} --jobs 1`, "/dev/null"], {
    cwd: dir,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TERM: "dumb" },
  });
  assert.equal(r.status, 0, r.stdout);
  const updates = r.stdout.split("\r\x1b[2K").filter((part) => part.startsWith("replay "));
  assert.ok(
    updates.some((u) => /^replay 1\/4 done, 0 not completed, 1 running, \d+s elapsed, ETA \d+s, run-01\.jsonl/.test(u)),
    r.stdout,
  );
  assert.ok(updates.some((u) => /, run-00\.jsonl/.test(u)));
  assert.match(r.stdout, /replayed 4 recordings \(legacy\): 4 completed/);
});

test("an interrupted batch counts completed, interrupted and never started; --resume finishes only the rest", async (t) => {
  const dir = tempDir(t);
  const folder = folderOf(dir, 12);
  const args = ["replay", folder, "--jobs", "1", "--context-report", "all.json"];
  const running = startLoom(args, { cwd: dir });
  const runs = join(dir, "all.runs");
  // Interrupt once two recordings have their reports: one more is running, the rest never started.
  await waitFor(() => existsSync(runs) && readdirSync(runs).filter((f) => f.endsWith(".json")).length >= 2, {
    what: "two per-run reports",
  });
  process.kill(running.pid, "SIGINT"); // (not child.kill: Deno then reports the signal, not the exit code)
  const stopped = await running.done;
  assert.equal(stopped.code, 130, stopped.stderr);
  const head = stopped.stdout.split("\n")[0];
  const match = head.match(
    /^interrupted: replayed 12 recordings \(legacy\): (\d+) completed, (\d+) interrupted, (\d+) never started$/,
  );
  assert.ok(match, stopped.stdout);
  const [completed, interrupted, never] = match!.slice(1).map(Number);
  assert.equal(completed + interrupted + never, 12);
  assert.ok(completed >= 2 && never >= 1, stopped.stdout);
  assert.doesNotMatch(stopped.stdout + stopped.stderr, /unreadable/);
  assert.match(stopped.stdout, /--resume/);

  const resumed = await runLoom([...args, "--json"], { cwd: dir });
  const resumedWithFlag = resumed; // the first try without --resume replays everything again: check it does not skip
  assert.equal(JSON.parse(resumedWithFlag.stdout).resumed, 0);

  // Interrupt again, then resume: only the recordings without a complete report are replayed.
  const second = startLoom(args, { cwd: dir });
  // Every report exists from the full rerun, so wait for the progress line instead.
  await waitFor(() => /^replay [2-9]\/12 done/m.test(second.stderr()), { what: "two recordings replayed" });
  process.kill(second.pid, "SIGINT");
  // A replay is fast: on some machines the batch ends before the signal lands (exit 0, nothing left to resume).
  const secondCode = (await second.done).code;
  assert.ok(secondCode === 130 || secondCode === 0, `exit ${secondCode}`);
  // Complete reports: from the second batch, and from the full rerun for recordings the second never reached.
  const complete =
    readdirSync(runs).filter((f) => JSON.parse(readFileSync(join(runs, f), "utf8")).outcome === "completed").length;
  // (Usually fewer than 12: the interrupt left some without a complete report. On a machine where the batch outran the
  // signal all 12 are complete, and the resume below must then replay none: the same rule, its edge case.)
  const finish = await runLoom([...args, "--resume", "--json"], { cwd: dir });
  assert.equal(finish.code, 0, finish.stderr);
  const out = JSON.parse(finish.stdout);
  assert.equal(out.completed, 12);
  assert.equal(out.resumed, complete);
  assert.equal(out.runs.filter((r: { resumed: boolean }) => r.resumed).length, out.resumed);
  assert.match(
    finish.stderr,
    new RegExp(`^resuming: ${out.resumed} recordings? already replayed, ${12 - out.resumed} to go$`, "m"),
  );

  const noReports = await runLoom(["replay", folder, "--resume"], { cwd: dir });
  assert.equal(noReports.code, 2);
  assert.match(noReports.stderr, /--resume needs --context-report PATH or --reports-dir DIR/);
});

test("a long summary is clipped in text output and whole in --json", async (t) => {
  const dir = tempDir(t);
  const patch = Array.from({ length: 125 }, (_, i) => `+ line ${i + 1} of the patch`).join("\n");
  const recording = readFileSync(FIX_BUG, "utf8").split("\n").map((line) =>
    line.replaceAll(
      JSON.stringify(
        "Fixed slugify: runs of separators collapse to one hyphen, and leading/trailing hyphens are trimmed.",
      ),
      JSON.stringify(patch),
    )
  ).join("\n");
  writeFileSync(join(dir, "long.jsonl"), recording);
  const text = await runLoom(["replay", "long.jsonl", "--quiet"], { cwd: dir });
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /^ {2}summary: \+ line 1 of the patch\n {4}\+ line 2 of the patch\n {4}\+ line 3 of the patch\n {4}… \(122 more lines; --json shows the whole summary\)$/m,
  );
  assert.doesNotMatch(text.stdout, /line 4 of/);
  const json = await runLoom(["replay", "long.jsonl", "--quiet", "--json"], { cwd: dir });
  assert.equal(JSON.parse(json.stdout).summary, patch);
});

test("loom report --merge joins the shards' aggregates into one that validates against loom schema aggregate", async (t) => {
  const dir = tempDir(t);
  const folder = folderOf(dir, 3);
  cpSync(SUSPEND, join(folder, "suspend.jsonl"));
  const files = readdirSync(folder).sort().map((f) => join(folder, f));
  // Two shards, as two machines would run them, and the whole batch on one for comparison.
  for (const [name, shard] of [["a", files.slice(0, 2)], ["b", files.slice(2)]] as const) {
    const r = await runLoom(["replay", ...shard, "--quiet", "--context-report", `${name}.json`], { cwd: dir });
    assert.ok(r.code === 0 || r.code === 1, r.stderr);
  }
  await runLoom(["replay", folder, "--quiet", "--context-report", "whole.json"], { cwd: dir });
  const merged = await runLoom(["report", "--merge", "a.json", "b.json", "-o", "all.json"], { cwd: dir });
  assert.equal(merged.code, 0, merged.stderr);
  assert.equal(merged.stdout, "", "-o writes the file; stdout stays empty");
  assert.equal(merged.stderr, "merged 2 shards (4 runs) into all.json\n");
  const all = JSON.parse(readFileSync(join(dir, "all.json"), "utf8"));
  const whole = JSON.parse(readFileSync(join(dir, "whole.json"), "utf8"));
  const schema = JSON.parse((await runLoom(["schema", "aggregate"], { cwd: dir })).stdout);
  assert.deepEqual(validateJsonSchema(schema, all), []);
  assert.deepEqual(validateJsonSchema(schema, whole), []);
  for (const key of ["outcomes", "model_calls", "checkpoints", "prefix_changes", "usage"]) {
    assert.deepEqual(all[key], whole[key], key);
  }
  for (const phase of ["classification", "selection", "arguments"]) {
    assert.equal(all.phases[phase].requests, whole.phases[phase].requests);
    assert.deepEqual(all.phases[phase].request_bytes, whole.phases[phase].request_bytes);
  }
  assert.deepEqual(all.runs.map((r: { name: string }) => r.name), whole.runs.map((r: { name: string }) => r.name));
  const shown = await runLoom(["report", "all.json"], { cwd: dir });
  assert.equal(shown.code, 0, shown.stderr);

  await runLoom(
    ["replay", files[0], files[1], "--quiet", "--context-policy", "bounded", "--context-report", "c.json"],
    {
      cwd: dir,
    },
  );
  const mixed = await runLoom(["report", "--merge", "a.json", "c.json"], { cwd: dir });
  assert.equal(mixed.code, 2);
  assert.match(mixed.stderr, /^loom report: The shards were replayed under different policies \(legacy, bounded\)\n$/);
  // A shard of one recording wrote a run's report: it merges as an aggregate of that run.
  await runLoom(["replay", files[0], "--quiet", "--context-report", "one.json"], { cwd: dir });
  const withRun = await runLoom(["report", "--merge", "a.json", "one.json"], { cwd: dir });
  assert.equal(withRun.code, 0, withRun.stderr);
  const three = JSON.parse(withRun.stdout);
  assert.equal(three.runs.length, 3);
  assert.equal(three.runs[2].name, "one.json");
});
