// `loom report` summaries and comparisons (text and --json), on reports built with ReportBuilder.
import type { ContextPolicyName } from "../lib/policy.ts";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { main } from "../main.ts";
import { aggregateReports, type ContextReport } from "../lib/report/context-report.ts";
import { ReportBuilder } from "./helpers/report-builder.ts";
import { summarizeReports } from "../lib/report/summary.ts";
import { ratio } from "../lib/report/comparison.ts";
import type { Usage } from "../lib/vocabulary/turn.ts";
import { fakeIo } from "./helpers/fake-io.ts";

type Call = { phase: "selection" | "arguments"; bytes: number; ms: number; usage: Usage; checkpoint?: boolean };

function buildReport({ policy, calls, executions = [], outcome = "completed", error = null, totalMs }: {
  policy: ContextPolicyName;
  calls: Call[];
  executions?: number[];
  outcome?: ContextReport["outcome"];
  error?: { code: string; message: string } | null;
  totalMs: number;
}): ContextReport {
  const b = new ReportBuilder({ policy, version: "0.4.0" });
  calls.forEach((c, i) => {
    if (c.checkpoint) b.recordCheckpoint({ retired: 3 });
    b.recordCall({
      phase: c.phase,
      step: i + 1,
      request_bytes: c.bytes,
      elapsed_ms: c.ms,
      usage: c.usage,
      checkpoint: !!c.checkpoint,
      lookup: false,
    });
  });
  executions.forEach((ms, i) => {
    b.recordStep(i + 1);
    b.recordExecution(ms);
  });
  return b.finish({ outcome, error, totalElapsedMs: totalMs });
}

const usage = (input: number | null, cache_read: number | null, output: number | null): Usage => ({
  input,
  cache_read,
  cache_write: null,
  output,
});

// Every bounded measurement is a quarter or a half of legacy's, so the expected ratios are exact.
const legacy = () =>
  buildReport({
    policy: "legacy",
    calls: [
      { phase: "selection", bytes: 4000, ms: 100, usage: usage(1000, null, 10) },
      { phase: "arguments", bytes: 5000, ms: 100, usage: usage(1000, null, 10) },
      { phase: "selection", bytes: 8000, ms: 100, usage: usage(1000, null, 10) },
      { phase: "arguments", bytes: 9000, ms: 100, usage: usage(1000, null, 10) },
      { phase: "selection", bytes: 12000, ms: 100, usage: usage(1000, null, 10) },
    ],
    executions: [1000, 1000],
    totalMs: 3000,
  });
const bounded = () =>
  buildReport({
    policy: "bounded",
    calls: [
      { phase: "selection", bytes: 1000, ms: 50, usage: usage(250, 100, 10) },
      { phase: "arguments", bytes: 2000, ms: 50, usage: usage(250, 100, 10) },
      { phase: "selection", bytes: 2000, ms: 50, usage: usage(250, 100, 10), checkpoint: true },
      { phase: "arguments", bytes: 1500, ms: 50, usage: usage(250, 100, 10) },
      { phase: "selection", bytes: 3000, ms: 50, usage: usage(250, 100, 10) },
    ],
    executions: [1000, 1000],
    totalMs: 1500,
  });

async function withReports(files: Record<string, unknown>, body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "loom-report-"));
  try {
    for (const [name, value] of Object.entries(files)) await writeFile(join(dir, name), JSON.stringify(value));
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("one report prints a readable text summary: policy, outcome, per-phase bytes, counters, usage scope", async () => {
  await withReports({ "legacy.json": legacy() }, async (dir) => {
    const { io, out } = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "legacy.json"], io), 0);
    assert.equal(out.stderr, "");
    const text = out.stdout;
    assert.match(text, /^Context report legacy\.json$/m);
    assert.match(text, /^policy\s+legacy$/m);
    assert.match(text, /^outcome\s+completed$/m);
    assert.match(text, /^error\s+—$/m);
    // selection: 3 requests, 24,000 B total (23.4 KiB), 12,000 B max (11.7 KiB), 300 ms
    assert.match(text, /^selection\s+3\s+23\.4 KiB\s+11\.7 KiB\s+300 ms$/m);
    assert.match(text, /^arguments\s+2\s+13\.7 KiB\s+8\.8 KiB\s+200 ms$/m);
    assert.match(text, /^execution\s+2\s+—\s+—\s+2\.00 s$/m);
    assert.match(text, /^model calls\s+5 \(per-call series: 5\)$/m);
    assert.match(text, /^checkpoints\s+0$/m);
    assert.match(text, /^prefix changes\s+0$/m);
    assert.match(text, /^retrievals\s+result 0 · list_history 0 · read_history 0 · omitted 0 · errors 0$/m);
    assert.match(text, /^usage\s+final \(the run ended normally\)$/m);
    assert.match(text, /^ {2}input\s+5,000$/m);
    assert.match(text, /^ {2}cache read\s+not reported$/m, "a null counter is 'not reported', never 0");
    assert.match(text, /^ {2}output\s+50$/m);
  });
});

test("a failed run shows its error and labels usage as partial", async () => {
  const failed = buildReport({
    policy: "bounded",
    calls: [{ phase: "selection", bytes: 900, ms: 10, usage: usage(null, null, null) }],
    outcome: "failed",
    error: { code: "provider_error", message: "Provider answered HTTP 500" },
    totalMs: 20,
  });
  await withReports({ "failed.json": failed }, async (dir) => {
    const { io, out } = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "failed.json"], io), 0);
    assert.match(out.stdout, /^outcome\s+failed$/m);
    assert.match(out.stdout, /^error\s+provider_error: Provider answered HTTP 500$/m);
    assert.match(out.stdout, /^usage\s+partial \(observed before the run ended with an error\)$/m);
    assert.match(out.stdout, /^ {2}input\s+not reported$/m);

    const json = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "failed.json", "--json"], json.io), 0);
    const [summary] = JSON.parse(json.out.stdout).reports;
    assert.equal(summary.usage_scope, "partial");
    assert.deepEqual(summary.usage, { input: null, cache_read: null, cache_write: null, output: null });
    assert.deepEqual(summary.error, { code: "provider_error", message: "Provider answered HTTP 500" });
  });
});

test("--json of one report is one object with the summary and no comparisons", async () => {
  await withReports({ "legacy.json": legacy() }, async (dir) => {
    const { io, out } = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "--json", "legacy.json"], io), 0);
    const doc = JSON.parse(out.stdout);
    assert.equal(doc.format, "loom-report-summary");
    assert.equal(doc.version, 1);
    assert.deepEqual(doc.comparisons, []);
    const [s] = doc.reports;
    assert.equal(s.file, "legacy.json");
    assert.equal(s.kind, "run");
    assert.equal(s.policy, "legacy");
    assert.equal(s.outcome, "completed");
    assert.deepEqual(s.request_bytes, { total: 38000, max: 12000 });
    assert.deepEqual(s.phases.selection, { requests: 3, request_bytes: { total: 24000, max: 12000 }, elapsed_ms: 300 });
    assert.deepEqual(s.phases.execution, { requests: 2, request_bytes: { total: 0, max: 0 }, elapsed_ms: 2000 });
    assert.equal(s.model_calls, 5);
    assert.equal(s.usage_scope, "final");
    assert.deepEqual(s.usage, { input: 5000, cache_read: null, cache_write: null, output: 50 });
  });
});

test("two reports compare side by side with ratios against the first (bounded/legacy)", async () => {
  await withReports({ "legacy.json": legacy(), "bounded.json": bounded() }, async (dir) => {
    const { io, out } = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "legacy.json", "bounded.json", "--json"], io), 0);
    const doc = JSON.parse(out.stdout);
    assert.equal(doc.reports.length, 2);
    assert.equal(doc.comparisons.length, 1);
    const [c] = doc.comparisons;
    assert.equal(c.file, "bounded.json");
    assert.equal(c.baseline, "legacy.json");
    assert.deepEqual(c.ratios.request_bytes, { classification: null, selection: 0.25, arguments: 0.25, total: 0.25 });
    assert.equal(c.ratios.max_request_bytes, 0.25);
    assert.equal(c.ratios.model_calls, 1);
    assert.deepEqual(c.ratios.elapsed_ms, {
      classification: null,
      selection: 0.5,
      arguments: 0.5,
      execution: 1,
      total: 0.5,
    });
    assert.equal(c.ratios.checkpoints, null, "no ratio against a baseline of 0");
    // A counter compares only where both reports have it: legacy's cache_read is null.
    assert.deepEqual(c.ratios.usage, { input: 0.25, cache_read: null, cache_write: null, output: 1 });
    assert.equal(doc.reports[1].checkpoints, 1);
    assert.equal(doc.reports[1].prefix_changes, 1);

    const text = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "legacy.json", "bounded.json"], text.io), 0);
    const t = text.out.stdout;
    assert.match(t, /ratios are against \[1\] legacy\.json/);
    assert.match(t, /^\s+\[1\] legacy\.json\s+\[2\] bounded\.json$/m);
    assert.match(t, /^ {2}total\s+37\.1 KiB\s+9\.3 KiB {2}0\.25×$/m);
    assert.match(t, /^ {2}selection\s+23\.4 KiB\s+5\.9 KiB {2}0\.25×$/m);
    assert.match(t, /^largest request\s+11\.7 KiB\s+2\.9 KiB {2}0\.25×$/m);
    assert.match(t, /^model calls\s+5\s+5 {2}1\.00×$/m);
    assert.match(t, /^ {2}cache read\s+—\s+500$/m);
    assert.match(t, /^ {2}input\s+5,000\s+1,250 {2}0\.25×$/m);
  });
});

test("an aggregate report is summarised as totals plus one row per run, and compares with run reports", async () => {
  const aggregate = aggregateReports(
    [{ name: "a.jsonl", path: "a.json", report: legacy() }, { name: "b.jsonl", path: null, report: bounded() }],
    { version: "0.4.0", policy: "bounded" },
  );
  await withReports({ "batch.json": aggregate, "legacy.json": legacy() }, async (dir) => {
    const { io, out } = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "batch.json"], io), 0);
    assert.match(out.stdout, /^Aggregate report batch\.json \(2 runs\)$/m);
    assert.match(out.stdout, /^outcomes\s+2 runs: 2 completed$/m);
    assert.match(out.stdout, /^model calls\s+10$/m);
    assert.match(out.stdout, /^a\.jsonl\s+completed\s+5\s+37\.1 KiB\s+11\.7 KiB\s+0$/m);
    assert.match(out.stdout, /^b\.jsonl\s+completed\s+5\s+9\.3 KiB\s+2\.9 KiB\s+1$/m);

    const json = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "legacy.json", "batch.json", "--json"], json.io), 0);
    const doc = JSON.parse(json.out.stdout);
    assert.equal(doc.reports[1].kind, "aggregate");
    assert.equal(doc.reports[1].runs, 2);
    assert.equal(doc.reports[1].run_rows.length, 2);
    assert.equal(doc.reports[1].steps, null, "run-only fields are null for an aggregate");
    assert.equal(doc.comparisons[0].ratios.request_bytes.total, 1.25); // (38000 + 9500) / 38000
    assert.equal(doc.comparisons[0].ratios.model_calls, 2);
  });
});

test("ratio() is value/baseline, and null for a null value, a null baseline or a zero baseline", () => {
  assert.equal(ratio(1, 4), 0.25);
  assert.equal(ratio(0, 4), 0);
  assert.equal(ratio(4, 0), null);
  assert.equal(ratio(null, 4), null);
  assert.equal(ratio(4, null), null);
});

test("a report compared with itself has ratio 1 for every measurement with a non-zero value", () => {
  const call = fc.record({
    phase: fc.constantFrom("selection" as const, "arguments" as const),
    bytes: fc.integer({ min: 1, max: 200_000 }),
    ms: fc.integer({ min: 0, max: 5000 }),
    usage: fc.record({
      input: fc.option(fc.nat(100_000)),
      cache_read: fc.option(fc.nat(100_000)),
      cache_write: fc.option(fc.nat(100_000)),
      output: fc.option(fc.nat(10_000)),
    }),
    checkpoint: fc.boolean(),
  });
  fc.assert(fc.property(fc.array(call, { minLength: 1, maxLength: 30 }), (calls) => {
    const report = buildReport({ policy: "bounded", calls, totalMs: 10 });
    const doc = summarizeReports([{ file: "a", kind: "run", report }, { file: "b", kind: "run", report }]);
    const walk = (node: unknown): number[] =>
      node === null ? [] : typeof node === "number" ? [node] : Object.values(node as object).flatMap(walk);
    const ratios = walk(doc.comparisons[0].ratios);
    assert.ok(ratios.length >= 4, "request bytes, largest request and model calls always compare");
    for (const r of ratios) assert.equal(r, 1);
  }));
});

test("a run's summary names its step protocol, previews and sandbox; one that names none shows no such line", () => {
  const b = new ReportBuilder({ policy: "bounded", version: "0.5.0" });
  b.setStepProtocol("single-call");
  b.setPreviews("wide");
  const report = { ...b.finish({ outcome: "completed", error: null, totalElapsedMs: 5 }) };
  report.sandbox = { mode: "required", active: true, workspace_ignore: [] };
  const [named] = summarizeReports([{ file: "r.json", kind: "run", report }]).reports;
  assert.equal(named.step_protocol, "single-call");
  assert.equal(named.previews, "wide");
  assert.deepEqual(named.sandbox, { mode: "required", active: true });
  const [plain] = summarizeReports([{ file: "l.json", kind: "run", report: legacy() }]).reports;
  assert.deepEqual([plain.step_protocol, plain.previews, plain.sandbox], [null, null, null]);
});

test("every text table fits 100 columns: any number of reports, long run names, long errors (they wrap by design)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 6 }),
      fc.array(
        fc.integer({ min: 1, max: 120 }).chain((n) => fc.stringMatching(new RegExp(`^[a-z0-9-]{${n}}$`))),
        { minLength: 1, maxLength: 4 },
      ),
      fc.stringMatching(/^[A-Za-z ]{0,300}$/),
      async (count, names, message) => {
        const failed = buildReport({
          policy: "legacy",
          calls: [{ phase: "selection", bytes: 19_200, ms: 1, usage: usage(1, null, 1) }],
          outcome: "failed",
          error: { code: "provider_error", message },
          totalMs: 1,
        });
        const aggregate = aggregateReports(
          names.map((name, i) => ({ name: `${name}-${i}.jsonl`, path: null, report: i % 2 ? failed : legacy() })),
          { version: "0.4.0", policy: "legacy" },
        );
        const files = { "agg.json": aggregate, "run.json": failed };
        await withReports(files, async (dir) => {
          for (
            const argv of [
              ["agg.json"],
              ["run.json"],
              Array.from({ length: count }, (_, i) => i % 2 ? "agg.json" : "run.json"),
            ]
          ) {
            const { io, out } = fakeIo({ cwd: dir });
            assert.equal(await main(["report", ...argv], io), 0);
            for (const line of out.stdout.split("\n")) {
              assert.ok([...line].length <= 100, `${[...line].length} columns: ${JSON.stringify(line)}`);
            }
            // Nothing is lost to the width: every run name is there, whole, on one line or continued on the next.
            if (argv[0] === "agg.json" && argv.length === 1) {
              const table = out.stdout.slice(out.stdout.indexOf("\nrun ") + 1).split("\n").slice(1).filter(Boolean);
              const shown: string[] = [];
              for (const line of table) {
                if (/ {2}(completed|failed) /.test(line)) shown.push(line.split(" ")[0]);
                else shown[shown.length - 1] += line.trim();
              }
              assert.deepEqual(shown, names.map((name, i) => `${name}-${i}.jsonl`));
            }
          }
        });
      },
    ),
    { numRuns: 25 },
  );
});

test("numbers print with separators and fixed precision; a run's report text says verified or NOT verified", async () => {
  const { formatCount, plural } = await import("../lib/text/numbers.ts");
  assert.equal(plural(1, "task"), "1 task");
  assert.equal(plural(19200, "token"), "19,200 tokens");
  assert.equal(formatCount(19200), "19,200");
  assert.equal(formatCount(0.005618000000000001), "0.01");
  assert.equal(formatCount(1234.5), "1,234.50");
  const verified = { ...legacy(), verified: true };
  const unverified = { ...legacy(), verified: false };
  await withReports({ "v.json": verified, "u.json": unverified, "old.json": legacy() }, async (dir) => {
    const one = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "u.json"], one.io), 0);
    assert.match(one.out.stdout, /^verified +NOT verified$/m);
    const both = fakeIo({ cwd: dir });
    assert.equal(await main(["report", "v.json", "u.json", "old.json"], both.io), 0);
    // Side by side, in as many blocks as fit 100 columns.
    const cells = [...both.out.stdout.matchAll(/^verified +(.+)$/gm)].flatMap((m) => m[1].trim().split(/ {2,}/));
    assert.deepEqual(cells, ["verified", "NOT verified", "—"]);
  });
});
