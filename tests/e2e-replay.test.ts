// The foundation end to end through the real binary: replay, re-execution, exit codes, reports, recordings.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ContextReport } from "../lib/report/context-report.ts";
import { parseRecording } from "../lib/recording/recording.ts";
import { runWithOptions } from "../api.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { canonicalJson } from "../lib/text/digest.ts";
import { comparableReport } from "../lib/vocabulary/reports.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const loom = join(root, "dist", "loom");
const fixBug = join(root, "testdata/workflows/fix-bug.jsonl");
const suspend = join(root, "testdata/workflows/escape-and-suspend.jsonl");
// Hand-made trajectories in the formats of the workloads' mini-swe-agent and SWE-agent files.
const miniTrajectory = join(root, "tests/fixtures/mini-swe-agent/v1-bash-blocks.json");
const sweTrajectory = join(root, "tests/fixtures/swe-agent/v1-function-calling.traj");

function binary(args: string[], { cwd = root }: { cwd?: string } = {}) {
  assert.ok(existsSync(loom), "dist/loom is missing: run `bash compile.sh` (scripts/test.sh builds it)");
  const r = spawnSync(loom, args, { cwd, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function withTemp<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "loom-e2e-"));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function copyProject(dir: string, name: string): string {
  const ws = join(dir, name);
  cpSync(join(root, "testdata/example-project"), ws, { recursive: true });
  return ws;
}

test("replay --execute fixes a copy of the example project: exit 0, its tests pass, reports equal the recording", () => {
  withTemp((dir) => {
    const ws = copyProject(dir, "ws");
    const before = spawnSync("node", ["test.mjs"], { cwd: ws });
    assert.equal(before.status, 1);
    const r = binary([
      "replay",
      fixBug,
      "--execute",
      "--workspace",
      ws,
      "--json",
      "--quiet",
      "--context-report",
      join(dir, "r.json"),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.outcome, "completed");
    assert.deepEqual(out.replay.differing_steps, []);
    assert.equal(out.replay.compared, parseRecording(readFileSync(fixBug, "utf8")).executions.length);
    assert.equal(spawnSync("node", ["test.mjs"], { cwd: ws }).status, 0);
    assert.equal(ContextReport.parse(JSON.parse(readFileSync(join(dir, "r.json"), "utf8"))).outcome, "completed");
  });
});

test("replay --execute on a workspace that differs reports the differing steps and exits 1", () => {
  withTemp((dir) => {
    const ws = copyProject(dir, "ws");
    writeFileSync(join(ws, "test.mjs"), 'console.log("different tests"); process.exit(0);\n');
    const r = binary(["replay", fixBug, "--execute", "--workspace", ws, "--json", "--quiet"]);
    assert.equal(r.code, 1);
    assert.ok(JSON.parse(r.stdout).replay.differing_steps.length > 0);
    assert.match(r.stderr, /executed differently from the recording/);
  });
});

test("the failing workflow ends suspended with exit 4, after two refusals, and its report is written", () => {
  withTemp((dir) => {
    const report = join(dir, "report.json");
    const r = binary(["replay", suspend, "--quiet", "--context-report", report, "--json"]);
    assert.equal(r.code, 4);
    const out = JSON.parse(r.stdout);
    assert.equal(out.outcome, "suspended");
    const parsed = ContextReport.parse(JSON.parse(readFileSync(report, "utf8")));
    assert.equal(parsed.outcome, "suspended");
    assert.equal(parsed.refusals, 2);
    assert.equal(r.stderr.trim().split("\n").length, 1);
  });
});

test("the escapes in the failing workflow are refused on a real workspace too, and nothing outside is touched", () => {
  withTemp((dir) => {
    const ws = copyProject(dir, "ws");
    const r = binary(["replay", suspend, "--execute", "--workspace", ws, "--json", "--quiet"]);
    assert.equal(r.code, 4);
    assert.deepEqual(JSON.parse(r.stdout).replay.differing_steps, []);
    assert.ok(existsSync(join(ws, "test.mjs")), "rm -rf was not run");
  });
});

test("legacy and bounded replays produce the same execution reports and the same workspace", () => {
  withTemp((dir) => {
    const files: Record<string, string> = {};
    for (const policy of ["legacy", "bounded"]) {
      const ws = copyProject(dir, policy);
      const r = binary([
        "replay",
        fixBug,
        "--execute",
        "--workspace",
        ws,
        "--context-policy",
        policy,
        "--json",
        "--quiet",
      ]);
      assert.equal(r.code, 0, r.stderr);
      files[policy] = readFileSync(join(ws, "src/slug.mjs"), "utf8");
    }
    assert.equal(files.legacy, files.bounded);
    assert.notEqual(files.legacy, readFileSync(join(root, "testdata/example-project/src/slug.mjs"), "utf8"));
  });
});

test("a recording round-trips: run --record, then replay reproduces the same execution reports", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-rec-"));
  try {
    const original = parseRecording(readFileSync(fixBug, "utf8"));
    const ws = copyProject(dir, "ws");
    const path = join(dir, "again.jsonl");
    const first = await runWithOptions({ ...original.header.slice, workspace: ws }, {
      provider: new ScriptedProvider(original.answers),
      record: path,
    });
    assert.equal(first.outcome, "completed");
    const again = parseRecording(readFileSync(path, "utf8"));
    assert.deepEqual(again.answers.map((a) => a.value), original.answers.map((a) => a.value));
    assert.deepEqual(
      again.executions.map((e) => canonicalJson(comparableReport(e.report))),
      original.executions.map((e) => canonicalJson(comparableReport(e.report))),
    );
    const r = binary(["replay", path, "--json", "--quiet"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).revision, "r2");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a corrupt recording line is reported with its file name and line number, exit 2", () => {
  withTemp((dir) => {
    const lines = readFileSync(fixBug, "utf8").split("\n");
    lines[3] = lines[3].replace('"type":"execution"', '"type":"exekution"');
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, lines.join("\n"));
    const r = binary(["replay", bad]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bad\.jsonl:4: /);
    assert.equal(r.stderr.trim().split("\n").length, 1);
    writeFileSync(bad, "{not json\n");
    const r2 = binary(["replay", bad]);
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /bad\.jsonl: not valid JSON: line 1, column \d+/);
  });
});

test("usage errors exit 2 with one line: unknown command, unknown flag, bad policy, missing recording", () => {
  for (
    const args of [["fly"], ["replay", fixBug, "--bogus"], ["replay", fixBug, "--context-policy", "huge"], [
      "replay",
      "/nonexistent.jsonl",
    ], ["replay"]]
  ) {
    const r = binary(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  const v = binary(["--version"]);
  assert.equal(v.code, 0);
  const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
  // compile.sh puts in the commit (unknown outside a git checkout) and the UTC build date.
  const line = new RegExp(
    `^loom ${
      version.replaceAll(".", "\\.")
    } \\(commit ([0-9a-f]{7,40}(-dirty)?|unknown), built \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\)\\n$`,
  );
  assert.match(v.stdout, line);
});

test("an imported file in the wrong format gets one line naming the format expected, exit 2", () => {
  const r = binary(["replay", "--from", "swe-agent", miniTrajectory]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /v1-bash-blocks\.json: expected a SWE-agent/i);
  assert.equal(r.stderr.trim().split("\n").length, 1);
});

test("batch replay of a folder with --jobs 2 writes one aggregate report and one report per recording", () => {
  withTemp((dir) => {
    const aggregate = join(dir, "all.json");
    const r = binary([
      "replay",
      join(root, "testdata/workflows"),
      "--jobs",
      "2",
      "--context-report",
      aggregate,
      "--json",
    ]);
    assert.equal(r.code, 1, `one recording ends suspended, so the batch did not complete: ${r.stderr}`);
    const out = JSON.parse(r.stdout);
    assert.equal(out.recordings, 2);
    assert.deepEqual(out.outcomes, { completed: 1, suspended: 1 });
    const agg = JSON.parse(readFileSync(aggregate, "utf8"));
    assert.equal(agg.kind, "aggregate");
    assert.equal(agg.runs.length, 2);
    for (const run of agg.runs) assert.ok(existsSync(run.report));
    assert.deepEqual(readdirSync(join(dir, "all.runs")).sort(), ["1-escape-and-suspend.json", "2-fix-bug.json"]);
    assert.match(r.stderr, /replay 2\/2 done, 1 not completed/);
    const report = binary(["report", aggregate]);
    assert.equal(report.code, 0, report.stderr);
  });
});

test("batch exit codes: 0 when every recording completed, 1 when one did not complete or could not be read", () => {
  withTemp((dir) => {
    const folder = join(dir, "recordings");
    mkdirSync(folder);
    cpSync(fixBug, join(folder, "a.jsonl"));
    cpSync(fixBug, join(folder, "b.jsonl"));
    const all = binary(["replay", folder, "--jobs", "2", "--json", "--quiet"]);
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual(JSON.parse(all.stdout).outcomes, { completed: 2 });

    cpSync(suspend, join(folder, "c.jsonl"));
    const suspended = binary(["replay", folder, "--jobs", "2", "--json", "--quiet"]);
    assert.equal(suspended.code, 1);
    assert.deepEqual(JSON.parse(suspended.stdout).outcomes, { completed: 2, suspended: 1 });

    rmSync(join(folder, "c.jsonl"));
    writeFileSync(join(folder, "d.jsonl"), "{not json\n");
    const unreadable = binary(["replay", folder, "--jobs", "2", "--json", "--quiet"]);
    assert.equal(unreadable.code, 1);
    const out = JSON.parse(unreadable.stdout);
    assert.deepEqual(out.outcomes, { completed: 2 });
    assert.deepEqual(out.unreadable, ["d.jsonl"]);
    assert.match(unreadable.stderr, /^loom replay: d\.jsonl: not valid JSON: line 1, column \d+/m);
  });
});

test("batch replay: recordings with the same name in different folders keep one report each", () => {
  withTemp((dir) => {
    for (const [folder, source] of [["one", fixBug], ["two", suspend]]) {
      mkdirSync(join(dir, folder));
      cpSync(source, join(dir, folder, "run.jsonl"));
    }
    const aggregate = join(dir, "all.json");
    const r = binary([
      "replay",
      join(dir, "one/run.jsonl"),
      join(dir, "two/run.jsonl"),
      "--jobs",
      "2",
      "--context-report",
      aggregate,
      "--quiet",
    ]);
    assert.equal(r.code, 1, r.stderr);
    const agg = JSON.parse(readFileSync(aggregate, "utf8"));
    assert.equal(agg.runs.length, 2);
    const paths = agg.runs.map((run: { report: string }) => run.report);
    assert.equal(new Set(paths).size, 2, `distinct report files: ${paths}`);
    const outcomes = paths.map((path: string) => JSON.parse(readFileSync(path, "utf8")).outcome);
    assert.deepEqual(outcomes, ["completed", "suspended"], "each report is its own recording's");
    assert.match(r.stdout, /^replayed 2 recordings \(legacy\): 1 completed, 1 suspended$/m);
  });
});

test("batch replay: a stale per-recording report from an earlier batch is not read as this batch's run", () => {
  withTemp((dir) => {
    const folder = join(dir, "recordings");
    mkdirSync(folder);
    cpSync(fixBug, join(folder, "good.jsonl"));
    const reports = join(dir, "reports");
    const first = binary(["replay", folder, "--jobs", "1", "--reports-dir", reports, "--json", "--quiet"]);
    assert.equal(first.code, 0, first.stderr);
    const [written] = readdirSync(reports);
    assert.equal(JSON.parse(readFileSync(join(reports, written), "utf8")).outcome, "completed");
    // The same recording, now corrupt: its child fails before writing a report.
    writeFileSync(join(folder, "good.jsonl"), "{not json\n");
    const second = binary(["replay", folder, "--jobs", "1", "--reports-dir", reports, "--json", "--quiet"]);
    assert.equal(second.code, 1);
    const out = JSON.parse(second.stdout);
    assert.deepEqual(out.unreadable, ["good.jsonl"]);
    assert.deepEqual(out.outcomes, {});
    assert.match(second.stdout, /"completed":0/);
    assert.ok(!existsSync(join(reports, written)), "the stale report was removed before the child ran");
  });
});

test("a batch of one recording says so in the singular", () => {
  withTemp((dir) => {
    const folder = join(dir, "recordings");
    mkdirSync(folder);
    cpSync(fixBug, join(folder, "only.jsonl"));
    const r = binary(["replay", folder, "--jobs", "1", "--quiet"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^replayed 1 recording \(legacy\): 1 completed$/m);
    assert.match(r.stdout, /^ {2}[\d,]+ model calls, [\d,]+ request bytes, 0 checkpoints$/m);
  });
});

test("replay --execute with a workspace that does not exist: exit 3 before any step, and a startup_failed report", () => {
  withTemp((dir) => {
    const report = join(dir, "report.json");
    const missing = join(dir, "no-such-workspace");
    const r = binary([
      "replay",
      fixBug,
      "--execute",
      "--workspace",
      missing,
      "--context-report",
      report,
      "--json",
      "--quiet",
    ]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stderr, `loom replay: Workspace ${JSON.stringify(missing)} is not a directory\n`);
    const out = JSON.parse(r.stdout);
    assert.equal(out.outcome, "startup_failed");
    assert.equal(out.exit_code, 3);
    assert.equal(out.steps, 0);
    const parsed = ContextReport.parse(JSON.parse(readFileSync(report, "utf8")));
    assert.equal(parsed.outcome, "startup_failed");
    assert.deepEqual(parsed.error, {
      code: "workspace_missing",
      message: `Workspace ${JSON.stringify(missing)} is not a directory`,
    });
    assert.equal(parsed.model_calls, 0);
    // A file is not a workspace either.
    const file = binary(["replay", fixBug, "--execute", "--workspace", report, "--quiet"]);
    assert.equal(file.code, 3, file.stderr);
  });
});

test("replay refuses an unwritable --context-report or --reports-dir before replaying anything (exit 2)", () => {
  withTemp((dir) => {
    writeFileSync(join(dir, "a-file"), "");
    for (
      const [args, pattern] of [
        [["--context-report", dir], /^loom replay: --context-report ".*": is a directory, not a file$/],
        [
          ["--context-report", join(dir, "a-file/sub/r.json")],
          /^loom replay: --context-report ".*a-file[\\/]sub[\\/]r\.json": its folder cannot be created: ".*a-file" is not a directory$/,
        ],
        [
          ["--reports-dir", join(dir, "a-file"), "--jobs", "1"],
          /^loom replay: --reports-dir ".*a-file": is not a directory$/,
        ],
      ] as const
    ) {
      const r = binary(["replay", join(root, "testdata/workflows"), "--quiet", ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr.trimEnd(), pattern);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.equal(r.stdout, "");
    }
    // The folder beside an aggregate report is checked too.
    writeFileSync(join(dir, "agg.runs"), "");
    const beside = binary([
      "replay",
      join(root, "testdata/workflows"),
      "--jobs",
      "1",
      "--context-report",
      join(dir, "agg.json"),
      "--quiet",
    ]);
    assert.equal(beside.code, 2, beside.stderr);
    assert.match(
      beside.stderr,
      /per-recording reports folder ".*agg\.runs": is not a directory \(pass --reports-dir DIR\)/,
    );
  });
});

test("--from auto detects each file's format: a Loom recording, a mini-swe-agent and a SWE-agent trajectory", () => {
  for (const file of [fixBug, miniTrajectory, sweTrajectory]) {
    const r = binary(["replay", "--from", "auto", file, "--json", "--quiet"]);
    assert.equal(r.code, 0, `${file}: ${r.stderr}`);
    assert.equal(JSON.parse(r.stdout).outcome, "completed");
  }
  withTemp((dir) => {
    const odd = join(dir, "odd.json");
    writeFileSync(odd, JSON.stringify({ hello: "world" }));
    const r = binary(["replay", "--from", "auto", odd]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /odd\.json: not a recognised trajectory/);
  });
});

test("a folder of batch output expands to the trajectories in instance subfolders, skipping preds.json", () => {
  withTemp((dir) => {
    for (const name of ["example__slug-1", "example__slug-2"]) {
      mkdirSync(join(dir, name));
      cpSync(miniTrajectory, join(dir, name, `${name}.traj.json`));
    }
    writeFileSync(join(dir, "preds.json"), JSON.stringify({ "example__slug-1": { model_patch: "" } }));
    const r = binary(["replay", "--from", "mini-swe-agent", dir, "--json", "--quiet"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).recordings, 2);
  });
});
