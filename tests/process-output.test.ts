// A command's output is kept whole however late Loom gets to it: a program that ends itself with process.exit drops
// what a pipe or socket could not take yet, so the runner gives it a file (lib/workspace/output-file.ts). The reader's
// lateness here is not a delay but a fact: Loom's thread is held until the writer has exited.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProcess } from "../lib/workspace/process.ts";

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "loom-process-output-"));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Holds this thread (and so every read of the runtime's event loop) until `path` exists; a generous hang guard. */
function holdUntil(path: string): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 120_000;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    Atomics.wait(cell, 0, 0, 10);
  }
}

// One TAP line per case, as the evaluation's clue task prints them: ~200 KB in line-sized writes, past a pipe's 64 KiB
// and far past the ~15 KB a socket pair takes in writes this small.
const CASES = 4_000;
const expectedOutput = Array.from({ length: CASES }, (_, i) => `ok ${i + 1} - toEur(100) at the published rate\n`)
  .join("") + "# done\n";

test("a program that ends itself with process.exit keeps every line it printed while Loom was not reading; no file is left", async () => {
  await withTempDir(async (dir) => {
    const exited = join(dir, "exited");
    const program = `
      const { writeFileSync } = require("node:fs");
      process.on("exit", () => writeFileSync(${JSON.stringify(exited)}, ""));
      for (let i = 0; i < ${CASES}; i++) console.log("ok " + (i + 1) + " - toEur(100) at the published rate");
      console.error("# done");
      process.exit(1);
    `;
    const outputFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith(`loom-output-${process.pid}-`));
    const before = new Set(outputFolders());
    const running = runProcess({ argv: ["node", "-e", program], cwd: dir, timeoutMs: 120_000 });
    // The child is spawned by now; nothing of its output is read until it has exited.
    holdUntil(exited);
    const result = await running;
    assert.equal(result.exitCode, 1);
    assert.equal(result.timedOut, false);
    assert.equal(result.output.length, expectedOutput.length, "bytes kept");
    assert.equal(result.output, expectedOutput);
    assert.deepEqual(outputFolders().filter((name) => !before.has(name)), [], "the output file is gone");
  });
});

test("stdout and stderr are kept in the order the command wrote them, however it interleaves them", async () => {
  const script = Array.from({ length: 300 }, (_, i) => `echo out ${i}; echo err ${i} >&2`).join("; ");
  const result = await runProcess({ argv: ["sh", "-c", script], cwd: tmpdir(), timeoutMs: 120_000 });
  const expected = Array.from({ length: 300 }, (_, i) => `out ${i}\nerr ${i}\n`).join("");
  assert.equal(result.output, expected);
});

test(
  "a command that writes past maxWrittenBytes is stopped, and its output says so",
  { timeout: 600_000 },
  async () => {
    const result = await runProcess(
      {
        argv: ["sh", "-c", "while :; do echo a line of a command that never stops printing; done"],
        cwd: tmpdir(),
        timeoutMs: 110_000,
      },
      { maxWrittenBytes: 64 * 1024, maxOutputBytes: 4096 },
    );
    assert.equal(result.timedOut, false);
    assert.equal(result.exitCode, null, "killed");
    assert.match(
      result.output,
      /\[… loom stopped the command here: it had written more than 65536 bytes of output …\]\n$/,
    );
  },
);
