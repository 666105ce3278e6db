// Batches that cannot lie: --resume refuses reports made under other settings (policy, version, recording, step
// protocol, previews), and a comparison of two aggregates pairs their runs by recording, never by position.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { main } from "../main.ts";
import { aggregateReports } from "../lib/report/context-report.ts";
import { ReportBuilder } from "./helpers/report-builder.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { pairRuns } from "../lib/report/pairs.ts";
import { VERSION } from "../lib/version.ts";
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

test("--resume refuses reports made under another step protocol or other previews, and takes matching ones", async (t) => {
  const dir = tempDir(t);
  const folder = join(dir, "recordings");
  mkdirSync(folder);
  cpSync(FIX_BUG, join(folder, "a.jsonl"));
  cpSync(FIX_BUG, join(folder, "b.jsonl"));
  const bounded = ["--context-policy", "bounded", "--reports-dir", "runs"];
  const single = await loom(["replay", folder, "--quiet", ...bounded, "--step-protocol", "single-call"], dir);
  assert.equal(single.code, 0, single.stderr);
  const report = JSON.parse(readFileSync(join(dir, "runs", "1-a.json"), "utf8"));
  assert.equal(report.step_protocol, "single-call");
  assert.equal(report.previews, "balanced");

  // The recording is two-call: without the flag a resumed batch replays two-call, so the single-call reports differ.
  const own = await loom(["replay", folder, "--quiet", "--resume", ...bounded], dir);
  assert.equal(own.code, 2);
  assert.match(own.stderr, /1-a\.json" was made under --step-protocol single-call, not --step-protocol two-call/);
  assert.equal(own.stderr.split("\n").length, 2, "one line");

  const wide = await loom(
    ["replay", folder, "--quiet", "--resume", ...bounded, "--step-protocol", "single-call", "--previews", "wide"],
    dir,
  );
  assert.equal(wide.code, 2);
  assert.match(wide.stderr, /was made under --previews balanced, not --previews wide/);

  const same = await loom(
    ["replay", folder, "--quiet", "--resume", "--json", ...bounded, "--step-protocol", "single-call"],
    dir,
  );
  assert.equal(same.code, 0, same.stderr);
  assert.equal(JSON.parse(same.stdout).resumed, 2);
});

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

/** An aggregate whose runs are [name, recording number, request bytes], in the order given. */
function aggregateOf(policy: ContextPolicyName, runs: [string, number, number][]) {
  return aggregateReports(
    runs.map(([name, recording, bytes]) => {
      const b = new ReportBuilder({ policy, version: VERSION });
      b.recordCall({
        phase: "selection",
        step: 1,
        request_bytes: bytes,
        elapsed_ms: 1,
        usage: { input: null, cache_read: null, cache_write: null, output: null },
        checkpoint: false,
        lookup: false,
      });
      const report = b.finish({ outcome: "completed", error: null, totalElapsedMs: 1 });
      return { name, path: null, report: { ...report, recording: digest(recording) } };
    }),
    { version: VERSION, policy },
  );
}

test("a comparison of two aggregates pairs runs by recording, lists the unmatched, in text, JSON and HTML", async (t) => {
  const dir = tempDir(t);
  // The baseline merged shards [x y][z]; the other batch merged [z][x w] (and y is missing, w is new).
  writeFileSync(
    join(dir, "legacy.json"),
    JSON.stringify(aggregateOf("legacy", [["x", 1, 100], ["y", 2, 200], ["z", 3, 300]])),
  );
  writeFileSync(
    join(dir, "bounded.json"),
    JSON.stringify(aggregateOf("bounded", [["z", 3, 330], ["x", 1, 110], ["w", 4, 999]])),
  );

  const json = await loom(["report", "legacy.json", "bounded.json", "--json"], dir);
  assert.equal(json.code, 0, json.stderr);
  const [comparison] = JSON.parse(json.stdout).comparisons;
  assert.deepEqual(comparison.runs, {
    paired_by: "recording",
    paired: 2,
    only_in_baseline: ["y"],
    only_in_report: ["w"],
    paired_request_bytes: { baseline: 400, report: 440, ratio: 1.1 },
  });

  const text = await loom(["report", "legacy.json", "bounded.json"], dir);
  assert.match(
    text.stdout,
    /^\[2\] runs paired with \[1\] by recording \(sha256\): 2 paired, only in \[1\]: y; only in \[2\]: w \(the totals above include them\); request bytes over the paired runs alone: 1\.10×$/m,
  );

  const html = await loom(["report", "legacy.json", "bounded.json", "--html", "r.html"], dir);
  assert.equal(html.code, 0, html.stderr);
  const page = readFileSync(join(dir, "r.html"), "utf8");
  const chart = page.slice(
    page.indexOf('id="chart-per-run"'),
    page.indexOf("</svg>", page.indexOf('id="chart-per-run"')),
  );
  const bars = [...chart.matchAll(/<g class="bars"[^>]*data-series="(\d)"[^>]*>(.*?)<\/g>/g)].map((
    [, series, rects],
  ) => ({
    series,
    runs: [...rects.matchAll(/data-run="(\w)" data-slot="(\d)"[^>]*><title>[^<]*· ([\d.]+ B)</g)].map((m) =>
      m.slice(1).join(" ")
    ),
  }));
  assert.deepEqual(bars, [
    { series: "0", runs: ["x 0 100 B", "y 1 200 B", "z 2 300 B"] },
    { series: "1", runs: ["x 0 110 B", "z 2 330 B", "w 3 999 B"] },
  ]);
  assert.match(page, /runs are paired by recording \(sha256 of its bytes\), never by position/);
  assert.match(
    page,
    /<p class="note pairing" data-series="1">\[2\] runs paired with \[1\] by recording \(sha256\): 2 paired, only in \[1\]: y; only in \[2\]: w/,
  );
});

test("pairing: renamed recordings pair by digest, copies of one recording pair by name first, and old reports by name", () => {
  const row = (name: string, recording?: number) => ({
    name,
    report: null,
    outcome: "completed" as const,
    model_calls: 1,
    request_bytes: 1,
    max_request_bytes: 1,
    checkpoints: 0,
    ...(recording === undefined ? {} : { recording: digest(recording) }),
  });
  assert.deepEqual(pairRuns([row("a", 1), row("b", 1), row("c", 2)], [row("b", 1), row("renamed", 2), row("a", 1)]), {
    paired_by: "recording",
    pairs: [[0, 2], [1, 0], [2, 1]],
    only_in_baseline: [],
    only_in_report: [],
  });
  const old = pairRuns([row("a"), row("b", 1)], [row("b", 1), row("a", 1)]);
  assert.equal(old.paired_by, "name");
  assert.deepEqual(old.pairs, [[0, 1], [1, 0]]);
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom("a", "b", "c"), fc.integer({ min: 0, max: 3 })), { maxLength: 8 }),
      fc.array(fc.tuple(fc.constantFrom("a", "b", "c"), fc.integer({ min: 0, max: 3 })), { maxLength: 8 }),
      (left, right) => {
        const l = left.map(([n, r]) => row(n, r)),
          r = right.map(([n, d]) => row(n, d));
        const p = pairRuns(l, r);
        // Every pair is one recording; every run is paired or listed once; pairs never share a run.
        for (const [i, j] of p.pairs) {
          assert.equal(l[i].recording, r[j].recording);
        }
        assert.equal(p.pairs.length + p.only_in_baseline.length, l.length);
        assert.equal(p.pairs.length + p.only_in_report.length, r.length);
        assert.equal(new Set(p.pairs.map(([, j]) => j)).size, p.pairs.length);
        // As many pairs as the recordings the two share, counted with copies.
        const count = (rows: typeof l) =>
          rows.reduce((m, x) => m.set(x.recording!, (m.get(x.recording!) ?? 0) + 1), new Map<string, number>());
        const cl = count(l), cr = count(r);
        assert.equal(p.pairs.length, [...cl].reduce((n, [k, c]) => n + Math.min(c, cr.get(k) ?? 0), 0));
      },
    ),
  );
});

test("the README's shard-and-merge recipe, merged in two orders: every run is compared with its own recording", async (t) => {
  const dir = tempDir(t);
  const folder = join(dir, "recordings");
  mkdirSync(folder);
  cpSync(FIX_BUG, join(folder, "a.jsonl"));
  cpSync(SUSPEND, join(folder, "b.jsonl"));
  cpSync(FIX_BUG, join(folder, "c.jsonl"));
  cpSync(SUSPEND, join(folder, "d.jsonl"));
  const shards = [["a.jsonl", "b.jsonl"], ["c.jsonl", "d.jsonl"]].map((s) => s.map((f) => join(folder, f)));
  for (const policy of ["legacy", "bounded"]) {
    for (const [i, shard] of shards.entries()) {
      const r = await loom(
        ["replay", ...shard, "-q", "--context-policy", policy, "--context-report", `${policy}-${i}.json`],
        dir,
      );
      assert.equal(r.code, 1, r.stderr);
    }
  }
  // The legacy shards merged in order, the bounded ones the other way round.
  assert.equal((await loom(["report", "--merge", "legacy-0.json", "legacy-1.json", "-o", "legacy.json"], dir)).code, 0);
  assert.equal(
    (await loom(["report", "--merge", "bounded-1.json", "bounded-0.json", "-o", "bounded.json"], dir)).code,
    0,
  );
  const json = await loom(["report", "legacy.json", "bounded.json", "--json"], dir);
  const doc = JSON.parse(json.stdout);
  assert.deepEqual(doc.comparisons[0].runs.paired_by, "recording");
  assert.equal(doc.comparisons[0].runs.paired, 4);
  assert.deepEqual([doc.comparisons[0].runs.only_in_baseline, doc.comparisons[0].runs.only_in_report], [[], []]);
  const legacy = JSON.parse(readFileSync(join(dir, "legacy.json"), "utf8"));
  const bounded = JSON.parse(readFileSync(join(dir, "bounded.json"), "utf8"));
  assert.deepEqual(legacy.runs.map((r: { name: string }) => r.name), ["a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl"]);
  assert.deepEqual(bounded.runs.map((r: { name: string }) => r.name), ["c.jsonl", "d.jsonl", "a.jsonl", "b.jsonl"]);
  // Shards that overlap (or one given twice) would count runs twice: refused.
  const twice = await loom(["report", "--merge", "legacy-0.json", "legacy-0.json", "legacy-1.json"], dir);
  assert.equal(twice.code, 2);
  assert.equal(
    twice.stderr,
    'loom report: "legacy-0.json" and "legacy-0.json" both hold the run of "a.jsonl" (the same recording): merged, it would count twice\n',
  );
  // In the HTML, each group of bars is one recording under both policies.
  assert.equal((await loom(["report", "legacy.json", "bounded.json", "--html", "r.html"], dir)).code, 0);
  const page = readFileSync(join(dir, "r.html"), "utf8");
  const start = page.indexOf('id="chart-per-run"');
  const chart = page.slice(start, page.indexOf("</svg>", start));
  const slots = (series: number) =>
    Object.fromEntries(
      [...[...chart.matchAll(new RegExp(`data-series="${series}"[^>]*>(.*?)</g>`, "g"))][0][1].matchAll(
        /data-run="([^"]+)" data-slot="(\d+)"/g,
      )].map((m) => [m[1], m[2]]),
    );
  assert.deepEqual(slots(1), slots(0));
  assert.deepEqual(slots(0), { "a.jsonl": "0", "b.jsonl": "1", "c.jsonl": "2", "d.jsonl": "3" });
});

test("a resumed row keeps every field a replayed row has: status and summary come from the recording's finish", async (t) => {
  const dir = tempDir(t);
  const folder = join(dir, "recordings");
  mkdirSync(folder);
  cpSync(FIX_BUG, join(folder, "a.jsonl"));
  cpSync(SUSPEND, join(folder, "b.jsonl"));
  const args = ["replay", folder, "--quiet", "--json", "--jobs", "1", "--context-report", "all.json"];
  const first = await loom(args, dir);
  const again = await loom([...args, "--resume"], dir);
  assert.equal(JSON.parse(again.stdout).resumed, 2, again.stderr);
  const rows = (text: string) => JSON.parse(text).runs.map(({ resumed: _, ...row }: { resumed: boolean }) => row);
  assert.equal(JSON.parse(first.stdout).runs[0].status, "success");
  assert.ok(JSON.parse(first.stdout).runs[0].summary.length > 0);
  assert.deepEqual(rows(again.stdout), rows(first.stdout));
});
