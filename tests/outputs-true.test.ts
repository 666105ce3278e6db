// Every output true (issue 43): what `loom report`, `loom run`, `loom replay`, `loom doctor` and `loom config` print
// says what happened, of this run, and nothing else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { ROOT } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";

async function loom(dir: string, argv: string[], env: Record<string, string | undefined> = {}) {
  const { io, out } = fakeIo({ cwd: dir, env });
  const code = await main(argv, io);
  return { code, ...out };
}

/** A folder holding the two shipped recordings and, for each, a replay's report and request trace. */
async function replayed(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "loom-true-"));
  for (const name of ["fix-bug", "escape-and-suspend"]) {
    cpSync(join(ROOT, `testdata/workflows/${name}.jsonl`), join(dir, `${name}.jsonl`));
    const r = await loom(dir, [
      "replay",
      `${name}.jsonl`,
      "--context-report",
      `${name}.json`,
      "--trace",
      `${name}.trace.jsonl`,
      "--quiet",
    ]);
    assert.ok(r.code === 0 || r.code === 4, `${name}: ${r.code} ${r.stderr}`);
  }
  return dir;
}

test("report --transcript: another run's recording or trace is refused in one line; its own is shown", async () => {
  const dir = await replayed();
  try {
    const own = await loom(dir, [
      "report",
      "fix-bug.json",
      "--html",
      "own.html",
      "--transcript",
      "fix-bug.jsonl",
      "--transcript",
      "fix-bug.trace.jsonl",
    ]);
    assert.equal(own.code, 0, own.stderr);
    for (const other of ["escape-and-suspend.jsonl", "escape-and-suspend.trace.jsonl"]) {
      const r = await loom(dir, ["report", "fix-bug.json", "--html", "x.html", "--transcript", other]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is not this report's run/);
      assert.equal(r.stderr.trim().split("\n").length, 1);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("report --transcript: a second recording (or the same file twice) is refused", async () => {
  const dir = await replayed();
  try {
    const args = ["report", "fix-bug.json", "--html", "x.html", "--transcript", "fix-bug.jsonl", "--transcript"];
    for (const second of ["fix-bug.jsonl", "./fix-bug.jsonl"]) {
      const r = await loom(dir, [...args, second]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is a second recording/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
