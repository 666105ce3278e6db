// Nothing of the user's overwritten (issue 43): two outputs naming one file (through `./x`, a link or a hard link),
// an output naming a file the command reads, and an output naming an existing file of the workspace that Loom did not
// write are refused before anything runs, with one line and exit 2, and every file is left as it was.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  cpSync,
  existsSync,
  linkSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { ROOT } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { fileTree } from "./helpers/file-tree.ts";

/** A folder with a workspace (ws/), a request file of it and a recording; no key, so a run that starts fails. */
function arena(): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-collide-"));
  cpSync(join(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
  const request = JSON.parse(readFileSync(join(ROOT, "testdata/example-request.json"), "utf8"));
  writeFileSync(join(dir, "req.json"), JSON.stringify({ ...request, $schema: undefined, workspace: "ws" }));
  cpSync(join(ROOT, "testdata/workflows/fix-bug.jsonl"), join(dir, "rec.jsonl"));
  return dir;
}

async function loom(dir: string, argv: string[]) {
  const { io, out } = fakeIo({ cwd: dir, env: { ANTHROPIC_API_KEY: undefined } });
  const code = await main(argv, io);
  return { code, ...out };
}

/** Every file under `dir` with its bytes, to show a refusal changed nothing. */
const snapshot = fileTree;

/** Runs argv in a fresh arena (after `prepare`), expects a one-line refusal naming `says`, and no file changed. */
async function refused(
  argv: string[],
  says: RegExp,
  prepare: (dir: string) => void = () => {},
): Promise<void> {
  const dir = arena();
  try {
    prepare(dir);
    const before = snapshot(dir);
    const r = await loom(dir, argv);
    assert.equal(r.code, 2, `${argv.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, says);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.deepEqual(snapshot(dir), before, `${argv.join(" ")} changed files`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const BOTH = /name one file: one output would overwrite the other/;

test("run: --diff and --context-report naming one file are refused before the run (no 0-byte report)", async () => {
  await refused(["run", "req.json", "--diff", "same.json", "--context-report", "same.json"], BOTH);
});

test("run: --record x --context-report ./x is refused (the recording is not lost)", async () => {
  await refused(["run", "req.json", "--record", "x", "--context-report", "./x"], BOTH);
});

test("run: two outputs naming one file through a link to its folder, or a hard link, are refused", async () => {
  await refused(["run", "req.json", "--record", "link/x.jsonl", "--trace", "x.jsonl"], BOTH, (dir) => {
    symlinkSync(dir, join(dir, "link"));
  });
  await refused(["run", "req.json", "--context-report", "a.json", "--diff", "b.json"], BOTH, (dir) => {
    writeFileSync(join(dir, "a.json"), "");
    linkSync(join(dir, "a.json"), join(dir, "b.json"));
  });
});

test("run: --diff naming a source file of the workspace is refused; the file keeps its text", async () => {
  await refused(["run", "req.json", "--diff", "ws/src/slug.mjs"], /"src\/slug\.mjs"\) that Loom did not write/);
  await refused(["run", "req.json", "--context-report", "ws/package.json"], /that Loom did not write/);
});

test("run: an output naming the request file is refused", async () => {
  await refused(["run", "req.json", "--context-report", "req.json"], /which Loom reads/);
});

test("run: outputs Loom wrote before, inside the workspace, may be written again", async () => {
  const dir = arena();
  try {
    const first = await loom(dir, ["run", "req.json", "--context-report", "ws/r.json", "--diff", "ws/run.diff"]);
    assert.equal(first.code, 3, first.stderr); // no key: a startup failure, its report written
    assert.ok(existsSync(join(dir, "ws/r.json")));
    const again = await loom(dir, ["run", "req.json", "--context-report", "ws/r.json", "--diff", "ws/run.diff"]);
    assert.equal(again.code, 3, again.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("replay --execute: --diff naming a source file of the workspace is refused", async () => {
  await refused(
    ["replay", "rec.jsonl", "--execute", "-w", "ws", "--diff", "ws/src/slug.mjs"],
    /that Loom did not write/,
  );
});

test("replay: an output naming the recording, or two outputs naming one file, are refused", async () => {
  await refused(["replay", "rec.jsonl", "--context-report", "rec.jsonl"], /which Loom reads/);
  await refused(["replay", "rec.jsonl", "--context-report", "t.jsonl", "--trace", "./t.jsonl"], BOTH);
});

test("report: --html or -o naming a report read is refused", async () => {
  await refused(["report", "r.json", "--html", "r.json"], /which Loom reads/, (dir) => {
    cpSync(join(ROOT, "testdata/reports", reportFixture()), join(dir, "r.json"));
  });
  await refused(["report", "--merge", "r.json", "-o", "./r.json"], /which Loom reads/, (dir) => {
    cpSync(join(ROOT, "testdata/reports", reportFixture()), join(dir, "r.json"));
  });
});

test("eval: --out inside a task's workspace is refused", async () => {
  await refused(
    [
      "eval",
      join(ROOT, "evals"),
      "--model",
      "anthropic/claude-sonnet-5-5",
      "--out",
      join(ROOT, "evals/tasks/range-off-by-one/workspace/out"),
    ],
    /lies inside task .*'s workspace/,
  );
});

function reportFixture(): string {
  const found = readdirSync(join(ROOT, "testdata/reports")).find((name) => name.endsWith(".json"));
  if (found === undefined) throw new Error("testdata/reports holds a report");
  return found;
}
