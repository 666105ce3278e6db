// Every byte reaches the pipe: the built binary's --json and stream-json output, over 1 MiB, read by a reader that
// starts late and reads in small blocks, is the same as the output written to a file, every time (the binary used to
// leave through process.exit while a slow pipe still held all but its first 64 KiB, and exit 0).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestOf } from "../lib/text/digest.ts";
import { assertBinaryBuilt, LOOM_BINARY, ROOT } from "./helpers/binary.ts";

const TRIES = 20;
const MiB = 1 << 20;
const NO_USAGE = { input: null, cache_read: null, cache_write: null, output: null };

/** A recording whose one print step carries `bytes` of text, so the result (and its stream event) is that large. */
function bigPrintRecording(bytes: number): string {
  const header = JSON.parse(readFileSync(join(ROOT, "testdata/workflows/fix-bug.jsonl"), "utf8").split("\n")[0]);
  const text = `${"0123456789abcdef".repeat(63)}\n`.repeat(Math.ceil(bytes / 1009));
  const ref = digestOf(text);
  const finish = { status: "success", summary: "printed" };
  const lines = [
    header,
    { type: "answer", phase: "selection", step: 1, value: { action: "print", reason: "print" }, usage: NO_USAGE },
    { type: "answer", phase: "arguments", step: 1, value: { text }, usage: NO_USAGE },
    {
      type: "execution",
      step: 1,
      action: "print",
      args: { text },
      report: { kind: "print", text: ref },
      results: { [ref]: text },
    },
    { type: "answer", phase: "selection", step: 2, value: { action: "finish", reason: "done" }, usage: NO_USAGE },
    { type: "answer", phase: "arguments", step: 2, value: finish, usage: NO_USAGE },
    { type: "execution", step: 2, action: "finish", args: finish, report: { kind: "finish", ...finish }, results: {} },
  ];
  return lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
}

/** Runs the binary with stdout to a file, or into a slow reader (a pipe read 50 ms late, in 4 KiB blocks). */
function loom(dir: string, args: string[], into: "file" | "slow pipe"): { code: number; bytes: Buffer } {
  const out = join(dir, "out");
  const rc = join(dir, "rc");
  const reader = into === "file" ? `> "${out}"` : `| { sleep 0.05; dd bs=4096 2>/dev/null; } > "${out}"`;
  // The exit status of loom itself, not of the reader: sh has no pipefail.
  const script = `{ "$0" "$@"; echo $? > "${rc}"; } ${reader}`;
  const r = spawnSync("sh", ["-c", script, LOOM_BINARY, ...args], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  assert.equal(r.status, 0, `sh failed: ${r.stderr}`);
  return { code: Number(readFileSync(rc, "utf8")), bytes: readFileSync(out) };
}

// Wall-clock figures (elapsed_ms, duration_ms) vary between runs; everything else in a stream must be byte for byte the same.
const steady = (bytes: Buffer) => bytes.toString("utf8").replace(/"(elapsed_ms|duration_ms)":[0-9.e+-]+/g, '"$1":0');

test(`--json and stream-json over 1 MiB reach a slow reader whole, ${TRIES} times each`, { timeout: 600_000 }, () => {
  assertBinaryBuilt();
  const dir = mkdtempSync(join(tmpdir(), "loom-pipe-"));
  try {
    const recording = join(dir, "big.jsonl");
    writeFileSync(recording, bigPrintRecording(MiB + 4096));
    // loom report over many copies of one report: 1.1 MiB of JSON, the same bytes every time.
    const report = join(dir, "report.json");
    const made = loom(dir, [
      "replay",
      join(ROOT, "testdata/workflows/fix-bug.jsonl"),
      "--quiet",
      "--context-report",
      report,
    ], "file");
    assert.equal(made.code, 0);
    const cases: { name: string; args: string[]; same: (b: Buffer) => string }[] = [
      {
        name: "report --json",
        args: ["report", ...Array(450).fill(report), "--json"],
        same: (b) => b.toString("utf8"),
      },
      { name: "replay --json", args: ["replay", recording, "--quiet", "--json"], same: steady },
      {
        name: "replay stream-json",
        args: ["replay", recording, "--quiet", "--output-format", "stream-json"],
        same: steady,
      },
    ];
    for (const { name, args, same } of cases) {
      const file = loom(dir, args, "file");
      assert.equal(file.code, 0, name);
      assert.ok(file.bytes.length > MiB, `${name}: ${file.bytes.length} B written to a file, expected over 1 MiB`);
      const expected = same(file.bytes);
      for (let i = 1; i <= TRIES; i++) {
        const piped = loom(dir, args, "slow pipe");
        assert.equal(piped.code, 0, `${name}, try ${i}: exit code`);
        const got = same(piped.bytes);
        assert.equal(got.length, expected.length, `${name}, try ${i}: bytes through the pipe`);
        assert.ok(got === expected, `${name}, try ${i}: the piped output differs from the file's`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
