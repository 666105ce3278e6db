// Terminal manners: the live progress line fits the terminal (no wrapping, no scrolling), a log gets plain lines,
// colour only on a terminal and never with NO_COLOR.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { main, terminal } from "../main.ts";
import { batchProgressLine, fitLine, Reporter } from "../commands/reporter.ts";
import { UsageError } from "../lib/errors.ts";
import { ROOT } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const FIX_BUG = resolve(ROOT, "testdata/workflows/fix-bug.jsonl");

test("a batch's live line fits an 80-column terminal: every redraw is at most 79 columns", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-terminal-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const folder = join(dir, "recordings");
  mkdirSync(folder);
  for (let i = 0; i < 3; i++) {
    cpSync(FIX_BUG, join(folder, `a-rather-long-instance-name-of-a-benchmark-task-${i}.jsonl`));
  }
  const { io, out } = fakeIo({ cwd: dir });
  const code = await main(["replay", folder, "-j", "1"], { ...io, isTTY: true, columns: 80, color: false });
  assert.equal(code, 0, out.stderr);
  const redraws = out.stderr.split("\r\x1b[2K").filter((s) => s.startsWith("replay "));
  assert.ok(redraws.length >= 3, out.stderr);
  for (const line of redraws) assert.ok([...line].length <= 79, `${line.length}: ${line}`);
  assert.ok(redraws.some((l) => l.endsWith("…")), "the long file name is cut");
  assert.ok(!out.stderr.includes("\x1b[1m") && !out.stderr.includes("\x1b[31m"), "no colour when colour is off");
});

test("fitLine keeps a line that fits and cuts one that does not, never past the width", () => {
  assert.equal(fitLine("replay 1/4 done", 80), "replay 1/4 done");
  assert.equal(fitLine("replay 1/4 done", undefined), "replay 1/4 done");
  assert.equal(fitLine("abcdef", 5), "abc…");
  fc.assert(fc.property(fc.string({ maxLength: 200 }), fc.integer({ min: 2, max: 160 }), (line, columns) => {
    const fitted = fitLine(line, columns);
    assert.ok([...fitted].length <= columns - 1 || [...line].length <= columns - 1);
    if ([...line].length <= columns - 1) assert.equal(fitted, line);
  }));
  // The parts come most important first: what a cut keeps is done/total.
  const line = batchProgressLine({
    done: 3,
    total: 80,
    failed: 1,
    running: 2,
    elapsedMs: 65_000,
    current: "x".repeat(90),
  });
  assert.match(fitLine(line, 40), /^replay 3\/80 done, 1 not completed, 2 r…$/);
});

test("colour only on a terminal, never with NO_COLOR or TERM=dumb", () => {
  assert.deepEqual(terminal({ isTTY: true, columns: 120, env: {} }), { isTTY: true, columns: 120, color: true });
  assert.deepEqual(terminal({ isTTY: true, columns: 120, env: { NO_COLOR: "1" } }), {
    isTTY: true,
    columns: 120,
    color: false,
  });
  assert.deepEqual(
    terminal({ isTTY: true, columns: 120, env: { NO_COLOR: "" } }).color,
    true,
    "an empty NO_COLOR is unset",
  );
  assert.deepEqual(terminal({ isTTY: false, columns: undefined, env: {} }), {
    isTTY: false,
    columns: undefined,
    color: false,
  });
  assert.deepEqual(terminal({ isTTY: true, columns: 80, env: { TERM: "dumb" } }), {
    isTTY: true,
    columns: 80,
    color: false,
  });
  const colored = fakeIo({ cwd: ROOT });
  new Reporter({ ...colored.io, isTTY: true, color: true }, { command: "run" }).usageError(new UsageError("x"));
  assert.equal(colored.out.stderr, "\x1b[31mloom run:\x1b[39m x\n");
  const plain = fakeIo({ cwd: ROOT });
  new Reporter({ ...plain.io, isTTY: true, color: false }, { command: "run" }).usageError(new UsageError("x"));
  assert.equal(plain.out.stderr, "loom run: x\n");
});

test("progress names the action while it runs; a log gets one line per step, a terminal a line that counts seconds", () => {
  const base = { step: 4, max_steps: 30, request_bytes: 0, checkpoint: false, cost_usd: null };
  const log = fakeIo({ cwd: "/" });
  const plain = new Reporter(log.io, { command: "run" }).progress!;
  plain({ ...base, phase: "selection", request_bytes: 5_783 });
  plain({ ...base, phase: "execution", action: "run_tests" });
  plain({ ...base, step: 5, phase: "arguments", request_bytes: 6_001 });
  assert.equal(log.out.stderr, "step 4/30 run_tests\n", "no line per model call in a log, one per step");
  const tty = fakeIo({ cwd: "/" });
  const reporter = new Reporter({ ...tty.io, isTTY: true, color: false, columns: 80 }, { command: "run" });
  reporter.progress!({ ...base, phase: "execution", action: "run_tests" });
  // The line is redrawn in place: carriage return, erase line (ESC [2K), then the text.
  assert.ok(tty.out.stderr.endsWith("\r\x1b[2Kstep 4/30 run_tests 0 s"), JSON.stringify(tty.out.stderr));
  // The next call's line replaces it (and stops its clock).
  reporter.progress!({ ...base, step: 5, phase: "selection", request_bytes: 100 });
  assert.ok(tty.out.stderr.endsWith("\r\x1b[2Kstep 5/30 selection 100 B"), JSON.stringify(tty.out.stderr));
});
