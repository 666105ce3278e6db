// Messages (issue 36): a recording or a trace given to `loom report` is named for what it is, with the command that
// reads it; no message repeats its command's prefix; doctor lists the check that failed above the ones it stopped.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { ROOT } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";

async function loom(args: string[], cwd = ROOT, env: Record<string, string> = {}) {
  const { io, out } = fakeIo({ cwd, env });
  return { code: await main(args, io), ...out };
}

test("loom report given a recording says it is one and how to get its report", async () => {
  const r = await loom(["report", "testdata/workflows/fix-bug.jsonl"]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /^loom report: "testdata\/workflows\/fix-bug\.jsonl" is a recording \(loom-recording\): replay it with `loom replay FILE --context-report report\.json`, then `loom report report\.json`, not a report\n$/,
  );
});

test("loom report given a request trace names it", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-messages-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const line = { trace_version: 1, call: 1, phase: "selection", request_bytes: 2, turn_request: {} };
  writeFileSync(join(dir, "trace.jsonl"), `${JSON.stringify(line)}\n${JSON.stringify({ ...line, call: 2 })}\n`);
  writeFileSync(join(dir, "one.jsonl"), `${JSON.stringify(line)}\n`);
  for (const file of ["trace.jsonl", "one.jsonl"]) {
    const r = await loom(["report", file], dir);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /is a request trace \(--trace\): its report is the run's --context-report file, not a report/,
    );
  }
});

test("no message repeats its command's prefix", async () => {
  for (const args of [["doctor"], ["doctor", "extra"], ["config", "extra"]]) {
    const r = await loom(args, ROOT, { HOME: tmpdir(), XDG_CONFIG_HOME: join(tmpdir(), "loom-no-config") });
    assert.equal(r.code, 2, args.join(" "));
    assert.doesNotMatch(r.stderr, /^loom (\w+): loom \1\b/, r.stderr);
  }
});

test("doctor without a key lists the failing key check first, and says which check stopped the rest", async () => {
  const r = await loom(["doctor", "-m", "anthropic/claude-sonnet-5-5"], ROOT, { HOME: tmpdir() });
  assert.equal(r.code, 3);
  const rows = r.stdout.split("\n").filter((line) => /^ {2}\S/.test(line));
  assert.match(rows[0]!, /^ {2}key +fail /);
  assert.match(rows[1]!, /^ {2}model +skip +not checked: the key check failed$/);
});
