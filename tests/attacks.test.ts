// Attacks through the binary with the sandbox on (bubblewrap; skipped with one line where it is not installed): a
// directory swapped for a symlink while the model writes, processes that try to outlive the run, the ways around
// run_command's argument guard, hard links, and a test that reads Loom's own environment through /proc.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import process from "node:process";
import { createWorkspaceExecutor } from "../lib/adapters/create-workspace-executor.ts";
import { findBubblewrap } from "../lib/adapters/sandbox.ts";
import { startRun } from "../lib/adapters/start-run.ts";
import { parseRecording } from "../lib/recording/recording.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { traceWriter } from "../commands/trace-file.ts";
import { ExecutionReport } from "../lib/vocabulary/reports.ts";
import type { SliceRequest } from "../lib/slice.ts";
import { ResultStore } from "../lib/context/store.ts";
import {
  type Arena,
  attackSlice,
  makeArena,
  orphanScript,
  outsideState,
  processesWith,
  recordingOf,
  sandboxMissing,
  SECRET_TEXT,
} from "./helpers/attacks.ts";
import { runLoom, startLoom, waitFor } from "./helpers/binary.ts";

const missing = sandboxMissing();
if (missing) console.log(`attacks.test.ts: skipping the sandbox attacks: ${missing}`);

function sandboxTest(name: string, fn: (t: { after: (f: () => unknown) => void }) => Promise<void>) {
  test(name, { timeout: 120_000 }, async (t) => {
    if (missing) {
      process.stderr.write(`${missing}: ${name}\n`);
      return t.skip(missing);
    }
    await fn(t);
  });
}

/** A case that needs no OS sandbox: run with and without bubblewrap, the slice in the default mode (auto). */
function bothTest(name: string, fn: (t: { after: (f: () => unknown) => void }) => Promise<void>) {
  test(name, { timeout: 120_000 }, (t) => fn(t));
}

const AUTO = { sandbox: { mode: "auto" as const } };

function replay(arena: Arena, slice: Omit<SliceRequest, "workspace">, steps: Parameters<typeof recordingOf>[1]) {
  writeFileSync(join(arena.dir, "attack.jsonl"), recordingOf(slice, steps));
  return ["replay", "attack.jsonl", "--execute", "--workspace", "ws", "--quiet", "--context-report", "report.json"];
}

/** The real executors for a slice, sandbox required, as `loom run` builds them. */
function executorFor(arena: Arena, slice: Omit<SliceRequest, "workspace">, env: Record<string, string | undefined>) {
  const store = new ResultStore();
  const executor = createWorkspaceExecutor({ ...slice, workspace: arena.workspace }, store, {
    root: arena.workspace,
    secretEnvNames: ["OPENAI_API_KEY"],
    env,
    settingsEnv: process.env, // LOOM_BWRAP=/nonexistent runs the suite as a machine without bubblewrap
    warn: () => {},
  });
  let step = 0;
  const run = async (action: string, args: Record<string, unknown>) =>
    ExecutionReport.parse(await executor.execute(action as never, args, { step: ++step }));
  const output = (report: ExecutionReport) =>
    report.kind === "command" || report.kind === "test" ? store.get(report.output) ?? "" : "";
  return { run, output, executor };
}

bothTest(
  "2,000 writes and edits while a directory is swapped for a symlink to outside: nothing lands outside",
  async (t) => {
    const arena = makeArena({ "d/f.txt": "inside\n" });
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    symlinkSync(arena.outside, join(arena.workspace, "to-outside"));
    writeFileSync(join(arena.outside, "f.txt"), "outside original\n");
    const before = outsideState(arena);
    const steps = [];
    for (let i = 0; i < 1_000; i++) {
      steps.push({ action: "write_file", args: { path: "d/f.txt", content: `written ${i}\n` } });
      steps.push({ action: "edit_file", args: { path: "d/f.txt", old_text: `written ${i}`, new_text: `edited ${i}` } });
    }
    const args = replay(arena, attackSlice(AUTO), steps);
    // The swapper: as fast as it can, d becomes a symlink to outside and back.
    const swapper = spawn(process.execPath, [
      "-e",
      `const fs = require("node:fs");
     const d = ${JSON.stringify(join(arena.workspace, "d"))};
     const real = d + ".real";
     for (;;) {
       try { fs.renameSync(d, real); fs.symlinkSync(${JSON.stringify(arena.outside)}, d); } catch {}
       try { fs.unlinkSync(d); fs.renameSync(real, d); } catch {}
     }`,
    ], { stdio: "ignore" });
    t.after(() => swapper.kill("SIGKILL"));
    const run = await runLoom(args, { cwd: arena.dir });
    swapper.kill("SIGKILL");
    assert.notEqual(run.code, null, run.stderr);
    assert.equal(outsideState(arena), before, "outside/ is unchanged");
    const report = JSON.parse(readFileSync(join(arena.dir, "report.json"), "utf8"));
    // Every write and edit was attempted (how many the swap got in the way of depends on scheduling; none got through).
    assert.equal(report.steps, 2_001);
  },
);

bothTest("3,000 reads while a directory is swapped for a symlink: none returns the outside file", async (t) => {
  const arena = makeArena({ "d/f.txt": "inside\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  writeFileSync(join(arena.outside, "f.txt"), SECRET_TEXT);
  const swapper = spawn(process.execPath, [
    "-e",
    `const fs = require("node:fs");
     const d = ${JSON.stringify(join(arena.workspace, "d"))};
     for (;;) {
       try { fs.renameSync(d, d + ".real"); fs.symlinkSync(${JSON.stringify(arena.outside)}, d); } catch {}
       try { fs.unlinkSync(d); fs.renameSync(d + ".real", d); } catch {}
     }`,
  ], { stdio: "ignore" });
  t.after(() => swapper.kill("SIGKILL"));
  const store = new ResultStore();
  let leaked = 0, read = 0;
  const executor = createWorkspaceExecutor(
    { ...attackSlice(AUTO), workspace: arena.workspace },
    store,
    { root: arena.workspace, secretEnvNames: [], warn: () => {} },
  );
  for (let i = 0; i < 3_000; i++) {
    const report = await executor.execute("read_file", { path: "d/f.txt" }, { step: 1 });
    if (report.kind === "read") {
      read++;
      if (store.get(report.result) === SECRET_TEXT) leaked++;
    }
    if (i % 100 === 0) await new Promise((r) => setTimeout(r, 1)); // let the swapper's scheduling interleave
  }
  swapper.kill("SIGKILL");
  assert.equal(leaked, 0, `${leaked} of ${read} reads returned the outside file`);
});

for (const how of ["timeout", "SIGINT", "SIGTERM"] as const) {
  bothTest(
    `7 kinds of orphan (setsid, double fork, setpgrp, nohup, setsid -f, daemon, signal-immune): none survives ${how}`,
    async (t) => {
      const arena = makeArena();
      t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
      const marker = String(Math.floor(Math.random() * 1e6)).padStart(6, "0");
      t.after(() => {
        for (const pid of processesWith(`3000.${marker}`)) process.kill(pid, "SIGKILL");
      });
      const slice = attackSlice({
        limits: { max_steps: 10, command_timeout_ms: how === "timeout" ? 3_000 : 60_000 },
        ...AUTO,
      });
      const args = replay(arena, slice, [{
        action: "run_command",
        args: { argv: ["sh", "-c", orphanScript(marker)] },
      }]);
      const loom = startLoom(args, { cwd: arena.dir });
      t.after(() => loom.child.kill("SIGKILL"));
      await waitFor(() => processesWith(`3000.${marker}`).length >= 7, { what: "all seven orphans to start" });
      if (how !== "timeout") process.kill(loom.pid, how);
      const run = await loom.done;
      assert.equal(run.code, how === "timeout" ? 1 : 130, run.stderr);
      await waitFor(() => processesWith(`3000.${marker}`).length === 0, {
        what: "the orphans to be gone",
        limitMs: 5_000,
      })
        .catch(() => assert.fail(`survivors: ${processesWith(`3000.${marker}`).length}`));
    },
  );
}

sandboxTest("the 9 ways around run_command's argument guard reach nothing outside with the sandbox on", async (t) => {
  const arena = makeArena({ "a b/keep.txt": "k\n", "notes.txt": "inside\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  symlinkSync(arena.outside, join(arena.workspace, "out"));
  const before = outsideState(arena);
  const slice = attackSlice({ commands: [["cp"], ["ln"], ["tar"], ["cat"], ["sh", "-c"], ["mv"]] });
  const { run, output } = executorFor(arena, slice, { PATH: process.env.PATH });
  const attempts: string[][] = [
    ["cp", "a b/../../outside/secret.txt", "stolen1"],
    ["ln", "-s", "../outside/secret.txt", "link"],
    ["ln", "../outside/secret.txt", "hard"],
    ["cp", "-t/tmp", "notes.txt"],
    ["tar", "-C..", "-cf", "stolen2.tar", "outside"],
    ["cp", "out/secret.txt", "stolen3"],
    ["cp", "--target-directory=../outside", "notes.txt"],
    ["cat", "../outside/secret.txt"],
    [
      "sh",
      "-c",
      `cat ../outside/secret.txt ${arena.secret} > stolen4; cp notes.txt ../outside/ 2>&1; echo x > ${
        join(arena.outside, "new")
      }`,
    ],
  ];
  for (const argv of attempts) {
    const report = await run("run_command", { argv });
    assert.ok(!output(report).includes(SECRET_TEXT.trim()), `${JSON.stringify(argv)} printed the secret`);
  }
  // What the commands left inside is not the secret, and writing through what they left is refused.
  for (const name of ["stolen1", "stolen3", "stolen4", "link", "hard"]) {
    const read = await run("read_file", { path: name });
    const text = read.kind === "read" ? readFileSync(join(arena.workspace, name), "utf8") : "";
    assert.ok(!text.includes(SECRET_TEXT.trim()), `${name} holds the secret`);
    await run("write_file", { path: name, content: "overwrite" });
  }
  assert.equal(outsideState(arena), before, "outside/ is unchanged");
});

sandboxTest(
  "dist/loom: the argument-guard bypasses and a shell leave no secret inside and change nothing outside",
  async (t) => {
    const arena = makeArena({ "a b/keep.txt": "k\n", "notes.txt": "inside\n" });
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    symlinkSync(arena.outside, join(arena.workspace, "out"));
    const before = outsideState(arena);
    const slice = attackSlice({ commands: [["cp"], ["ln"], ["tar"], ["sh", "-c"]] });
    const attempts: string[][] = [
      ["cp", "a b/../../outside/secret.txt", "stolen1"],
      ["ln", "../outside/secret.txt", "hard"],
      ["tar", "-C..", "-cf", "stolen2.tar", "outside"],
      ["cp", "out/secret.txt", "stolen3"],
      ["cp", "--target-directory=../outside", "notes.txt"],
      [
        "sh",
        "-c",
        `cat ../outside/secret.txt ${arena.secret} out/secret.txt > stolen4 2>&1; ` +
        `ln ${arena.secret} hard2; cp notes.txt ${arena.outside}/; echo x > ${join(arena.outside, "new")}`,
      ],
    ];
    const steps: { action: string; args: Record<string, unknown> }[] = attempts.map((argv) => ({
      action: "run_command",
      args: { argv },
    }));
    // Then the model tries to read and write what the commands left, and the symlink out.
    for (const path of ["stolen1", "stolen3", "stolen4", "hard", "hard2", "out/secret.txt"]) {
      steps.push({ action: "write_file", args: { path, content: "overwritten\n" } });
    }
    const run = await runLoom(replay(arena, slice, steps), { cwd: arena.dir });
    assert.notEqual(run.code, null, run.stderr);
    assert.equal(outsideState(arena), before, "outside/ is unchanged");
    for (const name of readdirSync(arena.workspace, { recursive: true }) as string[]) {
      const path = join(arena.workspace, name);
      // out/ is the planted symlink to outside/ itself, which is checked above.
      if (name.startsWith("out/") || !lstatSync(path).isFile()) continue;
      assert.ok(!readFileSync(path, "utf8").includes(SECRET_TEXT.trim()), `ws/${name} holds the secret`);
    }
  },
);

bothTest("a write through a hard link is refused and neither name changes", async (t) => {
  const arena = makeArena({ "a.txt": "original\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  linkSync(join(arena.workspace, "a.txt"), join(arena.workspace, "b.txt"));
  linkSync(arena.secret, join(arena.workspace, "secret-link.txt"));
  const { run } = executorFor(arena, attackSlice(AUTO), { PATH: process.env.PATH });
  for (const path of ["a.txt", "secret-link.txt"]) {
    const write = await run("write_file", { path, content: "changed\n" });
    assert.equal(write.kind === "refusal" && write.code, "hard_linked");
    const edit = await run("edit_file", { path, old_text: path === "a.txt" ? "original" : "outside", new_text: "x" });
    assert.equal(edit.kind === "refusal" && edit.code, "hard_linked");
  }
  assert.equal(readFileSync(join(arena.workspace, "b.txt"), "utf8"), "original\n");
  assert.equal(readFileSync(arena.secret, "utf8"), SECRET_TEXT);
});

/** Twelve secrets: the providers' keys, credential-shaped names, names no pattern would catch, URL userinfo. */
function canarySecrets(canary: string): Record<string, string> {
  return {
    OPENAI_API_KEY: `sk-${canary}-1`,
    ANTHROPIC_API_KEY: `sk-ant-${canary}-2`,
    GITHUB_TOKEN: `ghp_${canary}3`,
    AWS_SECRET_ACCESS_KEY: `${canary}-4`,
    DB_PASSWORD: `${canary}-5`,
    SENTRY_DSN: `https://${canary}6@o1.ingest.sentry.io/1`,
    SLACK_WEBHOOK_URL: `https://hooks.slack.com/services/T0/B0/${canary}7`,
    STRIPE_SK: `sk_live_${canary}8`,
    DATABASE_URL: `postgres://app:${canary}9@db.internal/app`,
    HTTPS_PROXY: `http://user:${canary}10@proxy.internal:3128`,
    DEPLOY_HOOK: `${canary}-11`,
    MY_APP_SETTING_X: `${canary}-12`,
  };
}

sandboxTest(
  "a test that reads /proc/*/environ and env sees none of 12 canary secrets; the outside does not exist",
  async (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const canary = `canary${Math.random().toString(36).slice(2, 10)}`;
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...canarySecrets(canary) };
    const script = `env; for f in /proc/[0-9]*/environ; do cat "$f" | tr '\\0' '\\n'; done; ` +
      `cat /proc/$PPID/environ; ls / /proc; cat ${arena.secret}; ls ${arena.dir}; echo done`;
    const slice = attackSlice({ test: { command: ["sh", "-c", script], timeout_ms: 30_000 } });
    const { run, output } = executorFor(arena, slice, env);
    const report = await run("run_tests", {});
    const text = output(report);
    assert.match(text, /done/);
    assert.ok(!text.includes(canary), "a canary reached the test process");
    assert.ok(!text.includes(SECRET_TEXT.trim()), "the outside file was readable");
    assert.doesNotMatch(text, /^(root|work|home)$/m, "only system directories, /tmp and the workspace exist");
  },
);

sandboxTest(
  "dist/loom with 12 canary secrets in its environment: a test and a command that dump /proc and env see none; stdout, stderr and the report hold none",
  async (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const canary = `canary${Math.random().toString(36).slice(2, 10)}`;
    // Whatever the processes can see lands in the workspace, where the test reads it afterwards.
    const dump = (name: string) =>
      `{ env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f"; done; cat /proc/$PPID/environ; ` +
      `cat /proc/1/environ; ls -la /proc; } > ${name} 2>&1; echo dumped`;
    // The command is allowed as a whole (the guard refuses /proc paths the model would add after a prefix).
    const slice = attackSlice({
      test: { command: ["sh", "-c", dump("seen-by-test.txt")], timeout_ms: 30_000 },
      commands: [["sh", "-c", dump("seen-by-command.txt")]],
    });
    const args = replay(arena, slice, [
      { action: "run_tests", args: {} },
      { action: "run_command", args: { argv: ["sh", "-c", dump("seen-by-command.txt")] } },
    ]);
    const run = await runLoom([...args, "--json"], { cwd: arena.dir, env: canarySecrets(canary) });
    assert.notEqual(run.code, null, run.stderr);
    const seen = ["seen-by-test.txt", "seen-by-command.txt"].map((name) =>
      readFileSync(join(arena.workspace, name), "utf8")
    );
    for (const text of seen) assert.match(text, /PATH=/, "the dump ran");
    const places = {
      "the test process": seen[0],
      "the command process": seen[1],
      stdout: run.stdout,
      stderr: run.stderr,
      report: readFileSync(join(arena.dir, "report.json"), "utf8"),
    };
    for (const [where, text] of Object.entries(places)) assert.ok(!text.includes(canary), `a canary reached ${where}`);
  },
);

sandboxTest("network is off inside the sandbox unless the slice turns it on", async (t) => {
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const server = createServer((socket) => socket.end("hello\n"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const port = (server.address() as { port: number }).port;
  const probe = `require("node:net").connect(${port}, "127.0.0.1").on("data", (d) => { console.log("got " + d); ` +
    `process.exit(0); }).on("error", (e) => { console.log("error " + e.code); process.exit(1); });`;
  const attempt = async (network: boolean) => {
    const slice = attackSlice({ commands: [["node", "-e"]], sandbox: { mode: "required", network } });
    const { run, output } = executorFor(arena, slice, { PATH: process.env.PATH });
    return output(await run("run_command", { argv: ["node", "-e", probe] }));
  };
  assert.match(await attempt(false), /^error /m);
  assert.match(await attempt(true), /^got hello/m);
});

test("--sandbox required where bubblewrap cannot be found: exit 3 with a startup report", async (t) => {
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const args = replay(arena, attackSlice(), [{ action: "run_tests", args: {} }]);
  const run = await runLoom(args, { cwd: arena.dir, env: { LOOM_BWRAP: "/nonexistent/bwrap" } });
  assert.equal(run.code, 3, run.stderr);
  assert.match(run.stderr, /sandbox is required .* unavailable/);
  const report = JSON.parse(readFileSync(join(arena.dir, "report.json"), "utf8"));
  assert.equal(report.outcome, "startup_failed");
  assert.equal(report.error.code, "sandbox_unavailable");
});

// ---- Loom's own edges: its output files, its settings, its argument lists (SPEC §11). These run with and without
// bubblewrap (LOOM_BWRAP=/nonexistent runs them as a machine without it); the sandbox mode is the default, auto.

/** A test command that swaps Loom's outputs in the workspace for links to outside: two files and a folder. */
function plantLinks(arena: Arena): string[] {
  const out = (name: string) => join(arena.outside, name);
  return [
    "sh",
    "-c",
    [
      `rm -f trace.jsonl rec.jsonl && ln -s ${out("bashrc")} trace.jsonl && ln -s ${out("profile")} rec.jsonl`,
      `mv reports reports.moved && ln -s ${arena.outside} reports`,
      "echo planted",
    ].join(" && "),
  ];
}

test("outputs in the workspace swapped for links by a test of the run: nothing outside changes (library run)", {
  timeout: 120_000,
}, async (t) => {
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  writeFileSync(join(arena.outside, "bashrc"), "# bashrc\n");
  writeFileSync(join(arena.outside, "profile"), "# profile\n");
  mkdirSync(join(arena.workspace, "reports"));
  const before = outsideState(arena);
  const slice = attackSlice({
    test: { command: plantLinks(arena), timeout_ms: 30_000 },
    sandbox: { mode: "auto" },
  });
  const steps = [
    { action: "run_tests", args: {} },
    { action: "write_file", args: { path: "after.txt", content: "$(touch /tmp/pwned)\n" } },
  ];
  const recording = parseRecording(recordingOf(slice, steps));
  const ws = (name: string) => join(arena.workspace, name);
  const result = await startRun({ request: { ...recording.header.slice, workspace: arena.workspace } }, {
    replay: { recording, execute: true },
    record: ws("rec.jsonl"),
    trace: traceWriter(ws("trace.jsonl"), { shown: "trace.jsonl" }),
    contextReport: ws("reports/report.json"),
    warn: () => {},
  });
  assert.equal(result.steps, 3);
  assert.ok(lstatSync(ws("trace.jsonl")).isSymbolicLink(), "the test planted its links");
  assert.equal(outsideState(arena), before, "outside/ is unchanged");
  // The report landed in the folder Loom pinned before the run, wherever it was moved to.
  assert.ok(existsSync(ws("reports.moved/report.json")), "the report is in the pinned folder");
});

test("dist/loom: --trace and --context-report in the workspace, swapped for links by a test: outside unchanged", {
  timeout: 120_000,
}, async (t) => {
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  writeFileSync(join(arena.outside, "bashrc"), "# bashrc\n");
  mkdirSync(join(arena.workspace, "reports"));
  const before = outsideState(arena);
  const slice = attackSlice({
    test: { command: plantLinks(arena), timeout_ms: 30_000 },
    sandbox: { mode: "auto" },
  });
  writeFileSync(join(arena.dir, "attack.jsonl"), recordingOf(slice, [{ action: "run_tests", args: {} }]));
  const run = await runLoom([
    "replay",
    "attack.jsonl",
    "--execute",
    "--workspace",
    "ws",
    "--quiet",
    "--trace",
    "ws/trace.jsonl",
    "--context-report",
    "ws/reports/report.json",
  ], { cwd: arena.dir });
  assert.notEqual(run.code, null, run.stderr);
  assert.ok(lstatSync(join(arena.workspace, "trace.jsonl")).isSymbolicLink(), "the test planted its links");
  assert.equal(outsideState(arena), before, "outside/ is unchanged");
  assert.ok(existsSync(join(arena.workspace, "reports.moved/report.json")), "the report is in the pinned folder");
});

test('a recording\'s sandbox.mode "off" does not lower LOOM_SANDBOX=required (exit 3 where there is no sandbox)', {
  timeout: 60_000,
}, async (t) => {
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const marker = join(arena.outside, "ran-unsandboxed");
  const slice = attackSlice({
    test: { command: ["sh", "-c", `touch ${marker}`], timeout_ms: 30_000 },
    sandbox: { mode: "off" },
  });
  const args = replay(arena, slice, [{ action: "run_tests", args: {} }]);
  const run = await runLoom(args, {
    cwd: arena.dir,
    env: { LOOM_SANDBOX: "required", LOOM_BWRAP: "/nonexistent/bwrap" },
  });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(JSON.parse(readFileSync(join(arena.dir, "report.json"), "utf8")).error.code, "sandbox_unavailable");
  assert.ok(!existsSync(marker), "the test ran");
  // In-process the same: the slice's "off" cannot lower the floor, and --sandbox off with a slice's "required" rises.
  const build = (settingsEnv: Record<string, string>, mode: "off" | "required", sandboxMode?: "off") =>
    createWorkspaceExecutor({ ...slice, sandbox: { mode }, workspace: arena.workspace }, new ResultStore(), {
      root: arena.workspace,
      secretEnvNames: [],
      settingsEnv,
      sandboxMode,
    });
  const noBwrap = { LOOM_BWRAP: "/nonexistent/bwrap" };
  assert.throws(() => build({ ...noBwrap, LOOM_SANDBOX: "required" }, "off"), { code: "sandbox_unavailable" });
  assert.throws(() => build(noBwrap, "required", "off"), { code: "sandbox_unavailable" });
  assert.deepEqual(
    [build(noBwrap, "off", "off").sandboxState.mode, build(noBwrap, "off", "off").sandboxState.active],
    ["off", false],
  );
});

test("sandbox.read_only may not mount /, /proc, /sys, /dev, /etc, the home folder or an ancestor of the workspace", () => {
  const arena = makeArena();
  try {
    for (
      const path of ["/", "/proc", "/sys/kernel", "/dev", "/etc", process.env.HOME ?? "/root", arena.dir, "/tmp/.."]
    ) {
      const slice = attackSlice({ sandbox: { mode: "auto", read_only: ["/usr/share", path] } });
      assert.throws(
        () =>
          createWorkspaceExecutor({ ...slice, workspace: arena.workspace }, new ResultStore(), {
            root: arena.workspace,
            secretEnvNames: [],
            warn: () => {},
          }),
        (error: Error & { code?: string }) =>
          error.code === "sandbox_mount_refused" && error.message.includes("sandbox.read_only[1]"),
        `read_only ${path} was accepted`,
      );
    }
  } finally {
    rmSync(arena.dir, { recursive: true, force: true });
  }
});

test("a bwrap on a relative or workspace PATH entry is never taken for the sandbox", async (t) => {
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const fake = join(arena.workspace, "node_modules/.bin/bwrap");
  const marker = join(arena.outside, "fake-bwrap-ran");
  mkdirSync(join(arena.workspace, "node_modules/.bin"), { recursive: true });
  writeFileSync(fake, `#!/bin/sh\ntouch ${marker}\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n`);
  chmodSync(fake, 0o755);
  const probe = findBubblewrap({ PATH: `node_modules/.bin:${join(arena.workspace, "node_modules/.bin")}` });
  assert.notEqual(probe.found?.path, fake);
  if (probe.found) assert.ok(probe.found.path.startsWith("/usr/") || probe.found.path.startsWith("/bin/"));
  const args = replay(arena, attackSlice({ test: { command: ["sh", "-c", "exit 0"], timeout_ms: 30_000 } }), [
    { action: "run_tests", args: {} },
  ]);
  const run = await runLoom(args, {
    cwd: arena.workspace.replace(/ws$/, ""),
    env: { PATH: `ws/node_modules/.bin:${process.env.PATH}`, LOOM_BWRAP: undefined },
  });
  assert.notEqual(run.code, null, run.stderr);
  assert.ok(!existsSync(marker), "the fake bwrap ran");
});

test("variables a slice passes never appear on any process's argument list", { timeout: 60_000 }, async (t) => {
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const canary = `canary${Math.random().toString(36).slice(2, 10)}`;
  const slice = attackSlice({ sandbox: { mode: "auto", env: ["DATABASE_URL"] } });
  const { run, output } = executorFor(arena, slice, {
    PATH: process.env.PATH,
    DATABASE_URL: `postgres://app:${canary}@db/app`,
  });
  let seenOnArgv = 0;
  const running = run("run_command", { argv: ["sh", "-c", 'echo "$DATABASE_URL" > seen.txt; sleep 1; echo ok'] });
  const deadline = Date.now() + 800;
  while (Date.now() < deadline) {
    seenOnArgv += processesWith(canary).length;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.match(output(await running), /ok/);
  assert.match(readFileSync(join(arena.workspace, "seen.txt"), "utf8"), new RegExp(canary), "the child got it");
  assert.equal(seenOnArgv, 0, "the value was on an argument list");
});

test("write_file and edit_file refuse .git/config and .git/hooks/ at any depth", async (t) => {
  const arena = makeArena({ ".git/config": "[core]\n", "lib/.git/config": "[core]\n", ".git/hooks/x": "#!/bin/sh\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const { run } = executorFor(arena, attackSlice({ sandbox: { mode: "auto" } }), { PATH: process.env.PATH });
  const attempts: Array<[string, Record<string, unknown>]> = [
    ["write_file", { path: ".git/config", content: "[core]\n\tfsmonitor = touch ../outside/pwned\n" }],
    ["write_file", { path: ".GIT/config", content: "x" }],
    ["write_file", { path: ".git/hooks/pre-commit", content: "#!/bin/sh\n" }],
    ["write_file", { path: "lib/.git/config", content: "x" }],
    ["write_file", { path: ".git/modules/sub/config", content: "x" }],
    ["edit_file", { path: ".git/config", old_text: "[core]", new_text: "[diff]\n\texternal = x" }],
    ["edit_file", { path: ".git/hooks/x", old_text: "#!/bin/sh", new_text: "#!/bin/sh\ntouch x" }],
  ];
  for (const [action, args] of attempts) {
    const report = await run(action, args);
    assert.equal(report.kind === "refusal" && report.code, "protected_path", `${action} ${JSON.stringify(args)}`);
  }
  assert.equal(readFileSync(join(arena.workspace, ".git/config"), "utf8"), "[core]\n");
  const ok = await run("write_file", { path: ".github/config", content: "fine\n" });
  assert.equal(ok.kind, "edit");
});

sandboxTest("a command cannot change .git/config or .git/hooks/, nor put a new .git in place", async (t) => {
  const arena = makeArena({ ".git/config": "[core]\n", ".git/hooks/pre-commit": "#!/bin/sh\n", "a.txt": "a\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const { run } = executorFor(arena, attackSlice(), { PATH: process.env.PATH });
  for (
    const script of [
      "echo '[core] fsmonitor = x' >> .git/config",
      "echo pwned > .git/hooks/pre-commit",
      "echo pwned > .git/hooks/post-checkout",
      "rm -rf .git/hooks",
      "mv .git .git-old && mkdir .git && echo '[core] fsmonitor = x' > .git/config",
      "rm -rf .git && mkdir .git && echo '[core] fsmonitor = x' > .git/config",
    ]
  ) await run("run_command", { argv: ["sh", "-c", script] });
  assert.equal(readFileSync(join(arena.workspace, ".git/config"), "utf8"), "[core]\n");
  assert.equal(readFileSync(join(arena.workspace, ".git/hooks/pre-commit"), "utf8"), "#!/bin/sh\n");
  assert.ok(!existsSync(join(arena.workspace, ".git/hooks/post-checkout")));
});

sandboxTest("a repository without .git/hooks: a command cannot create one", async (t) => {
  const arena = makeArena({ ".git/config": "[core]\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const { run } = executorFor(arena, attackSlice(), { PATH: process.env.PATH });
  await run("run_command", { argv: ["sh", "-c", "mkdir -p .git/hooks; echo pwned > .git/hooks/pre-commit"] });
  assert.ok(!existsSync(join(arena.workspace, ".git/hooks/pre-commit")));
});

test("the argument guard: every letter of an option cluster, every word of a script, sed w/e/r, git -c/config", async (t) => {
  const arena = makeArena({ "notes.txt": "inside\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const before = outsideState(arena);
  const slice = attackSlice({
    commands: [["cp"], ["tar"], ["sed"], ["git"], ["echo"]],
    sandbox: { mode: "auto" },
  });
  const { run } = executorFor(arena, slice, { PATH: process.env.PATH });
  const attempts: string[][] = [
    ["cp", "-vt/tmp", "notes.txt"],
    ["cp", `-vt${arena.outside}`, "notes.txt"],
    ["tar", `-cvf${arena.outside}/x.tar`, "notes.txt"],
    ["tar", `-vC${arena.outside}`, "-xf", "x.tar"],
    ["sed", "-n", `1w ${arena.outside}/w.txt`, "notes.txt"],
    ["sed", "-n", "s/inside/touch pwned/e", "notes.txt"],
    ["sed", "-n", `1r ${arena.secret}`, "notes.txt"],
    ["sed", "-e", `s/x/y/w ${arena.outside}/w2.txt`, "notes.txt"],
    ["git", "-c", "core.fsmonitor=touch pwned", "status"],
    ["git", "config", "core.fsmonitor", "touch pwned"],
    ["echo", `hello ${arena.secret}`],
  ];
  for (const argv of attempts) {
    const report = await run("run_command", { argv });
    assert.equal(report.kind === "refusal" && report.code, "command_not_allowed", JSON.stringify(argv));
  }
  assert.equal(outsideState(arena), before);
  assert.ok(!existsSync(join(arena.workspace, "pwned")));
  const fine = await run("run_command", { argv: ["sed", "-n", "s/inside/ok/p", "notes.txt"] });
  assert.equal(fine.kind, "command");
});

bothTest(
  "the JSON result, the report and run-started say whether the run was sandboxed; --quiet prints nothing",
  async (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const slice = attackSlice({ ...AUTO, workspace_ignore: ["coverage/"] });
    const args = replay(arena, slice, [{ action: "run_tests", args: {} }]);
    const run = await runLoom([...args, "--output-format", "stream-json"], { cwd: arena.dir });
    // The recorded reports are placeholders, so the replay differs (exit 1); what it says about the sandbox matters.
    assert.equal(run.code, 1, run.stderr);
    assert.doesNotMatch(run.stderr, /sandbox/, "--quiet: the notice is left to the result and the report");
    const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
    const expected = { mode: "auto", active: findBubblewrap().found !== null, workspace_ignore: ["coverage/"] };
    assert.deepEqual(events.find((e) => e.type === "run-started").sandbox, expected);
    assert.deepEqual(events.find((e) => e.type === "result").sandbox, expected);
    assert.deepEqual(JSON.parse(readFileSync(join(arena.dir, "report.json"), "utf8")).sandbox, expected);
  },
);

bothTest("a workspace Loom cannot write ends the run at start-up: exit 3, startup_failed, no step", async (t) => {
  const arena = makeArena({ "a.txt": "a\n" });
  const root = process.getuid?.() === 0;
  // Root passes every permission check: an immutable folder is one even root cannot write.
  const lock = (on: boolean) =>
    root ? execFileSync("chattr", [on ? "+i" : "-i", arena.workspace]) : chmodSync(arena.workspace, on ? 0o555 : 0o755);
  t.after(() => {
    lock(false);
    rmSync(arena.dir, { recursive: true, force: true });
  });
  lock(true);
  const args = replay(arena, attackSlice(AUTO), [{ action: "run_tests", args: {} }]);
  const run = await runLoom(args, { cwd: arena.dir });
  assert.equal(run.code, 3, run.stderr);
  assert.match(run.stderr, /Workspace ".*ws" cannot be written/);
  const report = JSON.parse(readFileSync(join(arena.dir, "report.json"), "utf8"));
  assert.deepEqual([report.outcome, report.error.code, report.steps, report.model_calls], [
    "startup_failed",
    "workspace_unusable",
    0,
    0,
  ]);
});

test(
  "a writer that escaped a test changes the workspace while the model thinks: the run ends with tests_current false",
  {
    timeout: 60_000,
  },
  async (t) => {
    const arena = makeArena({ "m.py": "x = 1\n" });
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    // Unsandboxed, and without the process token (env -i): nothing can tell the writer is the test's.
    const slice = attackSlice({
      test: {
        command: ["sh", "-c", "setsid env -i /bin/sh -c 'sleep 0.3; echo late > m.py' >/dev/null 2>&1 & sleep 0.1"],
        timeout_ms: 30_000,
      },
      sandbox: { mode: "off" },
    });
    const recording = parseRecording(recordingOf(slice, [{ action: "run_tests", args: {} }]));
    const scripted = new ScriptedProvider(recording.answers);
    // The model takes a second to answer, as a real one does; the writer writes meanwhile.
    const slow = {
      name: scripted.name,
      capabilities: scripted.capabilities,
      complete: async (...args: Parameters<ScriptedProvider["complete"]>) => {
        await new Promise((r) => setTimeout(r, 500));
        return scripted.complete(...args);
      },
    };
    const result = await startRun({ request: { ...recording.header.slice, workspace: arena.workspace } }, {
      provider: slow,
      sandbox: "off",
      warn: () => {},
    });
    assert.equal(result.outcome, "completed", JSON.stringify(result.error));
    assert.equal(readFileSync(join(arena.workspace, "m.py"), "utf8"), "late\n");
    assert.deepEqual([result.last_test?.revision, result.revision, result.tests_current], ["r0", "r1", false]);
  },
);
