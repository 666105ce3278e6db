// Files Loom reads by name that must not hang, exhaust or betray it (issue 42): a config file that is a FIFO (also in
// a folder above the workspace, such as /tmp), a link to /dev/zero or to /etc/shadow, one over the 1 MiB cap; a
// deadline a timer cannot hold; a NUL byte in a suite's path. Each is one line and exit 2, naming the file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { MAX_CONFIG_BYTES, readConfigFile } from "../lib/io/config-file.ts";

type Folders = { root: string; home: string; project: string; deep: string; userFile: string; projectFile: string };

function folders(t: { after: (fn: () => unknown) => void }): Folders {
  const root = mkdtempSync(join(tmpdir(), "loom-config-guard-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, "home"), project = join(root, "project"), deep = join(project, "src");
  mkdirSync(join(home, ".config", "loom"), { recursive: true });
  mkdirSync(join(project, ".loom"), { recursive: true });
  mkdirSync(deep, { recursive: true });
  return {
    root,
    home,
    project,
    deep,
    userFile: join(home, ".config/loom/config.jsonc"),
    projectFile: join(project, ".loom/config.jsonc"),
  };
}

async function loomConfig(f: Folders, cwd = f.deep) {
  const { io, out } = fakeIo({ cwd, env: { HOME: f.home } });
  const code = await main(["config", "--model", "anthropic/claude-sonnet-5-5"], io);
  return { code, ...out };
}

/** The error is one line, exit 2, names the file, and quotes nothing of what the file holds. */
function assertOneLine(r: { code: number; stderr: string }, file: string, pattern: RegExp) {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.ok(r.stderr.includes(file), r.stderr);
  assert.match(r.stderr, pattern);
}

for (const which of ["project", "user"] as const) {
  test(`the ${which} config file as a link to /dev/zero, a FIFO, a folder, 1 MiB + 1: refused in one line`, async (t) => {
    const f = folders(t);
    const file = which === "project" ? f.projectFile : f.userFile;
    symlinkSync("/dev/zero", file);
    assertOneLine(await loomConfig(f), file, /is a (device|link out of its folder)/);
    rmSync(file);
    execFileSync("mkfifo", [file]);
    assertOneLine(await loomConfig(f), file, /is a FIFO, not a regular file/);
    rmSync(file);
    mkdirSync(file);
    assertOneLine(await loomConfig(f), file, /is a folder, not a regular file/);
    rmSync(file, { recursive: true });
    writeFileSync(file, `{${" ".repeat(MAX_CONFIG_BYTES)}}`);
    assertOneLine(await loomConfig(f), file, /over the 1048576-byte \(1 MiB\) cap/);
    writeFileSync(file, "{}");
    assert.equal((await loomConfig(f)).code, 0, "an ordinary file is read");
  });
}

test("a FIFO as .loom/config.jsonc in a folder above the workspace: the binary ends at once, exit 2", {
  timeout: 600_000,
}, async (t) => {
  const f = folders(t);
  execFileSync("mkfifo", [f.projectFile]);
  const { ROOT } = await import("./helpers/binary.ts");
  // main.ts through the runtime running this test: a FIFO read without O_NONBLOCK would block it forever.
  const child = spawn(process.execPath, [
    ...(process.execPath.includes("deno") ? ["run", "-A"] : []),
    join(ROOT, "main.ts"),
    "config",
  ], {
    cwd: f.deep,
    env: { PATH: process.env.PATH, HOME: f.home },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const guard = setTimeout(() => child.kill("SIGKILL"), 300_000); // a hang guard only
  const code = await new Promise<number | null>((done) => child.on("close", (c) => done(c)));
  clearTimeout(guard);
  assert.equal(code, 2, stderr);
  assert.match(stderr, /is a FIFO, not a regular file/);
});

test("a project config file linked to a file outside its folder (/etc/shadow) is not read; no byte of it shown", async (t) => {
  const f = folders(t);
  const secret = join(f.root, "shadow");
  writeFileSync(secret, "root:$6$secret-hash:19000:0:99999:7:::\n");
  symlinkSync(secret, f.projectFile);
  const r = await loomConfig(f);
  assertOneLine(r, f.projectFile, /is a link out of its folder/);
  assert.ok(!r.stderr.includes("root") && !r.stderr.includes("secret"), r.stderr);
  // A file that is not JSON: where, never what.
  rmSync(f.projectFile);
  writeFileSync(f.projectFile, "root:$6$secret-hash\n");
  const bad = await loomConfig(f);
  assertOneLine(bad, f.projectFile, /not valid JSON \(line 1, column 1\)$/m);
  assert.ok(!/["'`]r|secret/.test(bad.stderr), bad.stderr);
  // A link to a file beside it in the same folder is read; a .loom that is itself a link is not.
  writeFileSync(join(f.project, ".loom/real.jsonc"), "{}");
  rmSync(f.projectFile);
  symlinkSync("real.jsonc", f.projectFile);
  assert.equal((await loomConfig(f)).code, 0);
  rmSync(join(f.project, ".loom"), { recursive: true });
  mkdirSync(join(f.root, "elsewhere"));
  writeFileSync(join(f.root, "elsewhere/config.jsonc"), "{}");
  symlinkSync(join(f.root, "elsewhere"), join(f.project, ".loom"));
  assertOneLine(await loomConfig(f), f.projectFile, /in a folder that is a link/);
});

test("readConfigFile: nothing there is no config; a FIFO is never waited on", (t) => {
  const f = folders(t);
  assert.deepEqual(readConfigFile(join(f.root, "none.jsonc")), { ok: false, missing: true });
  assert.deepEqual(readConfigFile(join(f.root, "none", "x.jsonc")), { ok: false, missing: true });
  const fifo = join(f.root, "fifo");
  execFileSync("mkfifo", [fifo]);
  const read = readConfigFile(fifo);
  assert.ok(!read.ok && !read.missing && /FIFO/.test(read.problem));
});

for (const field of ["provider_deadline_ms", "provider_idle_timeout_ms"] as const) {
  test(`a project's ${field} of 2^31 ms or more: one line naming the file and the field, exit 2`, async (t) => {
    const f = folders(t);
    writeFileSync(f.projectFile, JSON.stringify({ [field]: 2 ** 31 }));
    const r = await loomConfig(f);
    assertOneLine(r, f.projectFile, new RegExp(`${field}.*at most 2147483647`));
    writeFileSync(f.projectFile, JSON.stringify({ [field]: 2 ** 31 - 1 }));
    assert.equal((await loomConfig(f)).code, 0, "the largest a timer holds is accepted");
  });
}

test("--provider-deadline-ms of 2^31 ms: a usage error, not every call failing at once", async (t) => {
  const f = folders(t);
  const { io, out } = fakeIo({ cwd: f.deep, env: { HOME: f.home } });
  const code = await main(
    ["config", "--model", "anthropic/claude-sonnet-5-5", "--provider-deadline-ms", "2147483648"],
    io,
  );
  assert.equal(code, 2, out.stderr);
  assert.match(out.stderr, /--provider-deadline-ms "2147483648": expected at most 2147483647 milliseconds/);
});

test("a NUL byte in a suite task's path or check command: one line naming the suite file and field, exit 2", async (t) => {
  const f = folders(t);
  mkdirSync(join(f.root, "suite/ws"), { recursive: true });
  const task = { id: "t1", intent: "Do it", workspace: "ws", check: { command: ["true"], timeout_ms: 1000 } };
  const cases: Array<[string, unknown]> = [
    ["tasks[0].workspace", { ...task, workspace: "ws\u0000/x" }],
    ["tasks[0].solution", { ...task, solution: "sol\u0000" }],
    ["tasks[0].check.files", { ...task, check: { ...task.check, files: "c\u0000" } }],
    ["tasks[0].check.command[0]", { ...task, check: { ...task.check, command: ["tr\u0000ue"] } }],
  ];
  for (const [field, bad] of cases) {
    const suite = join(f.root, "suite/suite.json");
    writeFileSync(suite, JSON.stringify({ tasks: [bad] }));
    const { io, out } = fakeIo({ cwd: f.root, env: { HOME: f.home } });
    const code = await main(["eval", "validate", suite], io);
    assert.equal(code, 2, `${field}: ${out.stderr}`);
    assert.equal(out.stderr.trim().split("\n").length, 1, out.stderr);
    assert.ok(out.stderr.includes("suite.json") && out.stderr.includes("NUL"), out.stderr);
    assert.ok(out.stderr.includes(`(tasks[0])${field.slice("tasks[0]".length)}`), out.stderr);
  }
});
