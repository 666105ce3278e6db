// The process-count limit of a sandboxed action (docs/sandbox.md): a pids cgroup made for the action, so a fork bomb
// meets its limit instead of the machine's, and removed after it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProcess } from "../lib/workspace/process.ts";
import { findBubblewrap } from "../lib/workspace/sandbox.ts";
import { makePidsLimit, pidsCgroupRoot } from "../lib/workspace/pids-limit.ts";

const probe = findBubblewrap();
const root = pidsCgroupRoot();
const missing = !probe.found
  ? `not protected without an OS sandbox (${probe.reason})`
  : root === null
  ? "not protected: no writable pids cgroup on this machine (the process-count limit needs root or a delegated cgroup)"
  : null;
if (missing) console.log(`pids-limit.test.ts: skipping: ${missing}`);

// Starts 60 background sleepers, each writing one line to started.txt first; at the limit the shell cannot fork and
// stops there.
const BOMB = `i=0; while [ $i -lt 60 ]; do i=$((i+1)); (echo x >> started.txt; exec sleep 1) & done; wait; echo done`;

test("a sandboxed action gets at most its process limit; the next fork fails and the action still ends", {
  skip: missing ?? false,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-pids-"));
  try {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    writeFileSync(join(ws, "bomb.sh"), BOMB);
    const run = (maxProcesses?: number) =>
      runProcess({ argv: ["sh", "bomb.sh"], cwd: ws, timeoutMs: 30_000 }, {
        sandbox: { bwrap: probe.found!, policy: {}, root: ws },
        ...(maxProcesses === undefined ? {} : { maxProcesses }),
      });
    const started = () => readFileSync(join(ws, "started.txt"), "utf8").split("\n").filter(Boolean).length;
    const limited = await run(20);
    assert.ok(started() < 20, `at most 20 processes (bwrap, the shells and the sleepers), got ${started()} sleepers`);
    assert.match(limited.output, /fork|Resource temporarily unavailable/i);
    assert.notEqual(limited.exitCode, 0);
    rmSync(join(ws, "started.txt"));
    const free = await run();
    assert.equal(started(), 60, "the default limit (1024) lets an ordinary test start 60 processes");
    assert.equal(free.exitCode, 0, free.output);
    const left = readdirSync(root!).filter((name) => name.startsWith(`loom-${process.pid}-`));
    for (let i = 0; i < 40 && left.some((name) => existsSync(join(root!, name))); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(left.filter((name) => existsSync(join(root!, name))), [], "no cgroup left behind");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("makePidsLimit makes nothing where there is no pids controller, and wraps argv with a fixed shell", () => {
  assert.equal(makePidsLimit({ root: null }), null);
  assert.equal(pidsCgroupRoot({ self: "/nonexistent" }), null);
  const dir = mkdtempSync(join(tmpdir(), "loom-pids-fake-"));
  try {
    writeFileSync(join(dir, "cgroup.procs"), "");
    const limit = makePidsLimit({ root: dir, max: 7 });
    assert.ok(limit);
    assert.deepEqual(limit.wrap(["bwrap", "--x", "a b"]).slice(0, 2), ["/bin/sh", "-c"]);
    assert.deepEqual(limit.wrap(["bwrap", "--x", "a b"]).slice(3), [limit.dir, "bwrap", "--x", "a b"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
