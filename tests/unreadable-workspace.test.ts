// A workspace Loom cannot read (chmod 000) is a start failure like any other (issue 43): one line naming the
// workspace, exit 3, the report written — not a usage error about its project config file. chmod does not stop root,
// so the run is made as an unprivileged user (setpriv); the test is skipped, saying why, where that cannot be done.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { ROOT } from "./helpers/binary.ts";

const NOBODY = 65534;
const BUN = join(ROOT, "node_modules/.bin/bun");

/** Why the test cannot make a folder unreadable to the run, or null when it can. */
function cannotDrop(): string | null {
  if (process.platform !== "linux") return "needs Linux's setpriv";
  const root = process.getuid?.() === 0;
  if (!root) return null; // not root: chmod 000 already stops the run
  const probe = spawnSync("setpriv", ["--reuid", `${NOBODY}`, "--regid", `${NOBODY}`, "--clear-groups", "true"]);
  if (probe.status !== 0) return "runs as root and setpriv cannot drop to an unprivileged user";
  // The unprivileged user must reach the checkout's main.ts and its Bun (a clone under a 0700 folder, as mktemp -d
  // makes, is out of its reach).
  const reach = spawnSync(
    "setpriv",
    [
      "--reuid",
      `${NOBODY}`,
      "--regid",
      `${NOBODY}`,
      "--clear-groups",
      BUN,
      "-e",
      `require("fs").readFileSync(${JSON.stringify(join(ROOT, "main.ts"))})`,
    ],
    { encoding: "utf8", timeout: 600_000 },
  );
  return reach.status === 0 ? null : "an unprivileged user cannot reach this checkout's main.ts and Bun";
}

const skip = cannotDrop();
if (skip) console.log(`unreadable-workspace.test.ts: skipping: ${skip}`);

test("an unreadable workspace names the workspace, exits 3 and writes the report", { skip: skip ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-unreadable-"));
  try {
    chmodSync(dir, 0o777);
    cpSync(join(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
    const request = JSON.parse(readFileSync(join(ROOT, "testdata/example-request.json"), "utf8"));
    writeFileSync(join(dir, "req.json"), JSON.stringify({ ...request, $schema: undefined, workspace: "ws" }));
    chmodSync(join(dir, "req.json"), 0o644);
    chmodSync(join(dir, "ws"), 0o000);
    const drop = process.getuid?.() === 0
      ? ["setpriv", "--reuid", `${NOBODY}`, "--regid", `${NOBODY}`, "--clear-groups"]
      : [];
    const argv = [...drop, BUN, join(ROOT, "main.ts"), "run", "req.json", "-w", "ws", "--context-report", "r.json"];
    const r = spawnSync(argv[0]!, argv.slice(1), {
      cwd: dir,
      encoding: "utf8",
      timeout: 600_000,
      env: { PATH: process.env.PATH, HOME: dir, ANTHROPIC_API_KEY: "sk-ant-test", LOOM_SANDBOX: "off" },
    });
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /Workspace ".*ws" cannot be read: permission denied/);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.ok(existsSync(join(dir, "r.json")), "the report is written");
    assert.equal(JSON.parse(readFileSync(join(dir, "r.json"), "utf8")).outcome, "startup_failed");
  } finally {
    chmodSync(join(dir, "ws"), 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});
