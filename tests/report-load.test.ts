// `loom report` on bad input: one clear line on stderr naming the file and what was wrong, exit 2.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { aggregateReports } from "../lib/report/context-report.ts";
import { ReportBuilder } from "./helpers/report-builder.ts";
import { UsageError } from "../lib/errors.ts";
import { endingOf } from "../lib/ending.ts";
import { parseReport } from "../lib/report/load.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const CANARY = "CANARY-7f3c2a";

function validReport() {
  const b = new ReportBuilder({ policy: "bounded", version: "0.4.0" });
  b.recordCall({
    phase: "selection",
    step: 1,
    request_bytes: 1200,
    elapsed_ms: 5,
    usage: { input: 10, cache_read: null, cache_write: null, output: 2 },
    checkpoint: false,
    lookup: false,
  });
  return b.finish({ outcome: "completed", totalElapsedMs: 9 });
}

async function run(argv: string[], files: Record<string, string> = {}) {
  const dir = await mkdtemp(join(tmpdir(), "loom-report-bad-"));
  try {
    for (const [name, text] of Object.entries(files)) {
      if (text === "<dir>") await mkdir(join(dir, name));
      else await writeFile(join(dir, name), text);
    }
    const { io, out } = fakeIo({ cwd: dir });
    const code = await main(["report", ...argv], io);
    return { code, ...out };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function assertOneLine(result: { code: number; stdout: string; stderr: string }, pattern: RegExp) {
  assert.equal(result.code, 2);
  assert.equal(result.stdout, "", "nothing on stdout");
  assert.match(result.stderr, /^[^\n]+\n$/, "exactly one line on stderr");
  assert.match(result.stderr, pattern);
}

test("an unreadable path exits 2 naming the file", async () => {
  assertOneLine(await run(["missing.json"]), /^loom report: Cannot read report "missing\.json": no such file\n$/);
});

test("a directory given as a report exits 2 naming it", async () => {
  assertOneLine(await run(["reports"], { reports: "<dir>" }), /Cannot read report "reports": it is a directory/);
});

test("a file that is not JSON exits 2, without echoing its content", async () => {
  const result = await run(["notes.txt"], { "notes.txt": `token=${CANARY} {` });
  assertOneLine(
    result,
    /^loom report: Report "notes\.txt" is not JSON: line 1, column 1: expected a value, found "t"\n$/,
  );
  assert.ok(!result.stderr.includes(CANARY));
});

test("an empty file exits 2 and says it is empty", async () => {
  assertOneLine(await run(["empty.json"], { "empty.json": "\n" }), /Report "empty\.json" is empty/);
});

test("JSON that is not a report exits 2", async () => {
  assertOneLine(
    await run(["pkg.json"], { "pkg.json": '{"name":"x"}' }),
    /Report "pkg\.json" is not a Loom context report \(no "schema_version" field\)/,
  );
  assertOneLine(await run(["list.json"], { "list.json": "[1,2]" }), /Report "list\.json" is not a Loom context report/);
});

test("a report of an unknown schema_version exits 2 and names both versions", async () => {
  const v2 = JSON.stringify({ ...validReport(), schema_version: 2 });
  assertOneLine(
    await run(["v2.json"], { "v2.json": v2 }),
    /Report "v2\.json" has schema_version 2; this Loom reads version 1/,
  );
  const text = JSON.stringify({ ...validReport(), schema_version: "1" });
  assertOneLine(
    await run(["s.json"], { "s.json": text }),
    /has schema_version of type string; this Loom reads version 1/,
  );
});

test("a version-1 report with a wrong field exits 2 naming the field path, not the value", async () => {
  const bad = { ...validReport(), policy: CANARY };
  const result = await run(["bad.json"], { "bad.json": JSON.stringify(bad) });
  assertOneLine(result, /Report "bad\.json" is not a valid context report: policy: /);
  assert.ok(!result.stderr.includes(CANARY));

  const negative = validReport();
  negative.phases.selection.request_bytes.total = -1;
  assertOneLine(
    await run(["neg.json"], { "neg.json": JSON.stringify(negative) }),
    /not a valid context report: phases\.selection\.request_bytes\.total: /,
  );
});

test("the first bad file among several stops the command; good files before it print nothing", async () => {
  const result = await run(["good.json", "missing.json"], { "good.json": JSON.stringify(validReport()) });
  assertOneLine(result, /Cannot read report "missing\.json"/);
});

test("usage errors exit 2: no report, --json with --html, an unknown option", async () => {
  assertOneLine(await run([]), /Missing REPORT/);
  assertOneLine(await run(["a.json", "--json", "--html", "x.html"]), /Choose one of --json and --html/);
  const unknown = await run(["a.json", "--colour"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /colour/);
});

test("--help prints the usage on stdout and exits 0", async () => {
  const result = await run(["--help"]);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /^Usage: loom report REPORT \[REPORT…\] \[--json \| --html FILE\]/);
  assert.equal(result.stderr, "");
});

test("parseReport accepts a run report and an aggregate report, and tells them apart", () => {
  const report = validReport();
  const run = parseReport(JSON.stringify(report), { file: "r.json" });
  assert.equal(run.kind, "run");
  assert.deepEqual(run.report, report);
  const aggregate = aggregateReports([{ name: "a", path: null, report }], { version: "0.4.0", policy: "bounded" });
  const agg = parseReport(JSON.stringify(aggregate), { file: "b.json" });
  assert.equal(agg.kind, "aggregate");
  assert.equal(agg.file, "b.json");
});

test("parseReport throws a UsageError whose code says which kind of bad input it was", () => {
  const codeOf = (text: string) => {
    try {
      parseReport(text, { file: "x" });
    } catch (error) {
      assert.ok(error instanceof UsageError);
      assert.equal(endingOf({ threw: error }).exitCode, 2);
      return error.code;
    }
    assert.fail("expected a UsageError");
  };
  assert.equal(codeOf("nope"), "report_not_json");
  assert.equal(codeOf("{}"), "report_invalid");
  assert.equal(codeOf('{"schema_version":9}'), "report_version");
  assert.equal(codeOf('{"schema_version":1,"kind":"aggregate"}'), "report_invalid");
});
