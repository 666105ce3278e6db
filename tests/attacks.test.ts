// Attacks through the binary with the sandbox on (bubblewrap; skipped with one line where it is not installed): a
// directory swapped for a symlink while the model writes, processes that try to outlive the run, the ways around
// run_command's argument guard, hard links, and a test that reads Loom's own environment through /proc.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { createWorkspaceExecutor } from "../lib/workspace/create-workspace-executor.ts";
import { findBubblewrap } from "../lib/workspace/sandbox.ts";
import { startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
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
import { ROOT, runLoom, startLoom, waitFor } from "./helpers/binary.ts";
import { type EvalAgent, startEvalAgent } from "./helpers/eval-agent.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { main } from "../main.ts";
import { UsageError } from "../lib/errors.ts";
import { loadSuiteFile } from "../lib/eval/run/eval-suite-file.ts";
import { changesSince, createWorkspace, snapshot } from "../lib/eval/run/eval-workspace.ts";
import { runCheck } from "../lib/eval/run/eval-check.ts";
import { pidsCgroupRoot } from "../lib/workspace/pids-limit.ts";

const missing = sandboxMissing();
if (missing) console.log(`attacks.test.ts: skipping the sandbox attacks: ${missing}`);

function sandboxTest(name: string, fn: (t: { after: (f: () => unknown) => void }) => Promise<void>) {
  test(name, { timeout: 600_000 }, async (t) => {
    if (missing) {
      process.stderr.write(`${missing}: ${name}\n`);
      return t.skip(missing);
    }
    await fn(t);
  });
}

/** A case that needs no OS sandbox: run with and without bubblewrap, the slice in the default mode (auto). */
function bothTest(name: string, fn: (t: { after: (f: () => unknown) => void }) => void | Promise<void>) {
  test(name, { timeout: 600_000 }, (t) => fn(t));
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
    // What these cases' slices ask for is what the user granted on the command line (#33: a file alone may not).
    grants: {
      sandbox_network: slice.sandbox?.network,
      sandbox_env: slice.sandbox?.env,
      sandbox_read_only: slice.sandbox?.read_only,
    },
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
        limitMs: 30_000, // they would sleep 3,000 s: not a speed measure
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
  timeout: 600_000,
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
  const plan = libraryPlan({ record: ws("rec.jsonl"), contextReport: ws("reports/report.json") });
  const result = await startRun({ request: { ...recording.header.slice, workspace: arena.workspace } }, plan, {
    replay: { recording, execute: true },
    trace: traceWriter(ws("trace.jsonl"), { shown: "trace.jsonl" }),
    warn: () => {},
  });
  assert.equal(result.steps, 3);
  // The link the test planted is replaced by Loom's own trace (written again whole, never through the link).
  assert.ok(lstatSync(ws("trace.jsonl")).isFile(), "Loom's trace is back in place of the planted link");
  assert.equal(outsideState(arena), before, "outside/ is unchanged");
  // The report landed in the folder Loom pinned before the run, wherever it was moved to.
  assert.ok(existsSync(ws("reports.moved/report.json")), "the report is in the pinned folder");
});

test("dist/loom: --trace and --context-report in the workspace, swapped for links by a test: outside unchanged", {
  timeout: 600_000,
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
  // The link the test planted is replaced by Loom's own trace (written again whole, never through the link).
  assert.ok(lstatSync(join(arena.workspace, "trace.jsonl")).isFile(), "Loom's trace is back in place of the link");
  assert.equal(outsideState(arena), before, "outside/ is unchanged");
  assert.ok(existsSync(join(arena.workspace, "reports.moved/report.json")), "the report is in the pinned folder");
});

test('a recording\'s sandbox.mode "off" does not lower LOOM_SANDBOX=required (exit 3 where there is no sandbox)', {
  timeout: 600_000,
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
            grants: { sandbox_read_only: slice.sandbox?.read_only }, // granted, and still refused
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

test("variables a slice passes never appear on any process's argument list", { timeout: 600_000 }, async (t) => {
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

/** The fsmonitor command a planted git config names: it leaves `CANARY` beside the workspace when git runs it. */
function plantedConfig(arena: Arena): string {
  return `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${join(arena.dir, "CANARY")}; false"\n`;
}

/**
 * The user's next `git status` (and `git log`), the real git, in the workspace and in every folder of `folders`: true
 * when any of them ran what a planted config names (the canary exists).
 */
function gitRanPlanted(arena: Arena, folders: readonly string[]): boolean {
  const home = join(arena.dir, "home");
  mkdirSync(home, { recursive: true });
  const env = { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: "1", GIT_CEILING_DIRECTORIES: arena.dir };
  for (const folder of [".", ...folders]) {
    const cwd = join(arena.workspace, folder);
    if (!existsSync(cwd)) continue;
    for (const args of [["status"], ["log", "-1"]]) {
      spawnSync("git", args, { cwd, env, stdio: "ignore", timeout: 600_000 });
    }
  }
  return existsSync(join(arena.dir, "CANARY"));
}

/** A monorepo-shaped workspace; `repository`: its root is a git repository (whose `.git` is legitimate). */
function monorepoArena(repository: boolean): Arena {
  const arena = makeArena({ "packages/a/index.js": "1\n", "packages/a/src/b.js": "2\n", "README": "r\n" });
  if (repository) {
    execFileSync("git", ["init", "-q"], { cwd: arena.workspace, env: { PATH: process.env.PATH, HOME: arena.dir } });
  }
  return arena;
}

const GIT_FOLDERS = ["packages", "packages/a", "packages/a/src", "src", ".gd", "packages/a/.gd"];

for (const repository of [false, true]) {
  const where = repository ? "a repository workspace" : "a monorepo workspace";
  test(`write_file alone cannot plant a .git that the user's git status runs (${where})`, async (t) => {
    const arena = monorepoArena(repository);
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const { run } = executorFor(arena, attackSlice({ sandbox: { mode: "auto" } }), { PATH: process.env.PATH });
    const config = plantedConfig(arena);
    // The git folder the .git files point to: harmless alone, until something names it or it is shaped like one.
    for (const gd of [".gd", "packages/a/.gd"]) {
      await run("write_file", { path: `${gd}/config`, content: config });
      await run("write_file", { path: `${gd}/HEAD`, content: "ref: refs/heads/main\n" });
      await run("write_file", { path: `${gd}/objects/keep`, content: "" });
      await run("write_file", { path: `${gd}/refs/keep`, content: "" });
    }
    const planted: Array<[string, string]> = [
      ["packages/a/.git", "gitdir: .gd\n"],
      ["packages/a/src/.git", "gitdir: ../.gd\n"],
      ["src/.git", "gitdir: ../.gd\n"],
      [".GIT", "gitdir: .gd\n"],
      ["packages/.Git/config", config],
      [".git/x", "x"],
      ["packages/a/.git./config", config],
      ["packages/a/git~1/config", config],
      ["packages/a/.g\u200cit/config", config],
      [".gitmodules", '[submodule "x"]\n\tpath = x\n\turl = ../x\n'],
    ];
    for (const [path, content] of planted) {
      const report = await run("write_file", { path, content });
      assert.equal(report.kind === "refusal" && report.code, "protected_path", `write_file ${JSON.stringify(path)}`);
    }
    const edit = await run("edit_file", { path: "packages/a/index.js", old_text: "1", new_text: "2" });
    assert.equal(edit.kind, "edit", "an ordinary edit still works");
    assert.ok(!existsSync(join(arena.workspace, "packages/a/.git")));
    assert.equal(gitRanPlanted(arena, GIT_FOLDERS), false, "git status ran the planted fsmonitor");
    if (repository) {
      const status = spawnSync("git", ["status", "--porcelain"], { cwd: arena.workspace, encoding: "utf8" });
      assert.equal(status.status, 0, "the workspace's own repository still works");
    }
  });

  bothTest(`a command cannot plant a .git that the user's git status runs (${where})`, async (t) => {
    const arena = monorepoArena(repository);
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const { run } = executorFor(arena, attackSlice({ sandbox: { mode: "auto" } }), { PATH: process.env.PATH });
    // The config is written as a plain file first: the canary's path is outside, which a command may not name.
    await run("write_file", { path: "cfg.txt", content: plantedConfig(arena) });
    await run("write_file", { path: "up1.txt", content: "gitdir: ../.gd\n" });
    await run("write_file", { path: "up3.txt", content: "gitdir: ../../../.gd\n" });
    const scripts = [
      // .git as a folder at a package root
      `mkdir -p packages/a/.git/objects packages/a/.git/refs && echo 'ref: refs/heads/main' > packages/a/.git/HEAD ` +
      "&& cp cfg.txt packages/a/.git/config",
      // src/.git as a gitdir: file, the folder beside it
      "mkdir -p src .gd/objects .gd/refs && echo 'ref: refs/heads/main' > .gd/HEAD && cp cfg.txt .gd/config " +
      "&& cp up1.txt src/.git && cp up3.txt packages/a/src/.git",
      // a link named .git
      'mkdir -p .gd/objects .gd/refs && echo "ref: refs/heads/main" > .gd/HEAD && cp cfg.txt .gd/config && ' +
      'ln -s "$PWD/.gd" packages/a/.git && ln -s .gd .Git',
    ];
    for (const script of scripts) {
      const report = await run("run_command", { argv: ["sh", "-c", script] });
      assert.equal(report.kind === "refusal" && report.code, "git_planted", script);
    }
    const tests = await run("run_tests", {});
    assert.equal(tests.kind, "test", "nothing planted: the test report is an ordinary one");
    for (const path of ["packages/a/.git", "src/.git", "packages/a/src/.git", ".Git", ".gd"]) {
      assert.ok(lstatSync(join(arena.workspace, path), { throwIfNoEntry: false }) === undefined, `${path} removed`);
    }
    assert.equal(gitRanPlanted(arena, GIT_FOLDERS), false, "git status ran the planted fsmonitor");
  });
}

bothTest("a command cannot change the config or hooks of a nested repository the workspace had", async (t) => {
  const arena = makeArena({ "lib/a.txt": "a\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const git = (cwd: string) =>
    execFileSync("git", ["init", "-q"], { cwd, env: { PATH: process.env.PATH, HOME: arena.dir } });
  git(arena.workspace);
  git(join(arena.workspace, "lib"));
  const before = readFileSync(join(arena.workspace, "lib/.git/config"), "utf8");
  const { run } = executorFor(arena, attackSlice({ sandbox: { mode: "auto" } }), { PATH: process.env.PATH });
  await run("write_file", { path: "cfg.txt", content: plantedConfig(arena) });
  await run("run_command", { argv: ["sh", "-c", "cat cfg.txt >> lib/.git/config"] });
  await run("run_command", { argv: ["sh", "-c", "echo 'touch ../CANARY' > lib/.git/hooks/pre-commit"] });
  assert.equal(readFileSync(join(arena.workspace, "lib/.git/config"), "utf8"), before);
  assert.ok(!existsSync(join(arena.workspace, "lib/.git/hooks/pre-commit")));
  assert.equal(gitRanPlanted(arena, ["lib"]), false, "git status ran the planted fsmonitor");
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
    timeout: 600_000,
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
    const plan = libraryPlan({ sandbox: "off" });
    const result = await startRun({ request: { ...recording.header.slice, workspace: arena.workspace } }, plan, {
      provider: slow,
      warn: () => {},
    });
    assert.equal(result.outcome, "completed", JSON.stringify(result.error));
    assert.equal(readFileSync(join(arena.workspace, "m.py"), "utf8"), "late\n");
    assert.deepEqual([result.last_test?.revision, result.revision, result.tests_current], ["r0", "r1", false]);
  },
);

// ---- What a folder, a suite or a results file can do (each case failed on the code before it was fixed). These run
// with and without bubblewrap unless they say otherwise.

const MODEL = "anthropic/claude-sonnet-5-5";

/** `loom eval ...` in-process, against the stand-in agent when one is given. */
async function loomEval(args: string[], { agent, cwd = ROOT }: { agent?: EvalAgent; cwd?: string } = {}) {
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, LOOM_BWRAP: process.env.LOOM_BWRAP };
  if (agent) Object.assign(env, { ANTHROPIC_BASE_URL: agent.server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-attack" });
  const { io, out } = fakeIo({ cwd, env });
  const code = await main(["eval", ...args], io);
  return { code, ...out };
}

/** A PID that no process has now: a child that already exited. */
function deadPid(): number {
  return spawnSync("true").pid!;
}

bothTest(
  "LOOM_BWRAP naming a program others can write, or that is not root's, is refused like a fixed location",
  (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    // A "bubblewrap" in the project: it runs the command as it is (no sandbox) and says it ran.
    const project = join(arena.dir, "project");
    mkdirSync(project);
    const fake = join(project, "bwrap");
    const marker = join(arena.outside, "fake-bwrap-ran");
    writeFileSync(
      fake,
      `#!/bin/sh\necho ran >> ${marker}\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n`,
      {
        mode: 0o755,
      },
    );
    chmodSync(project, 0o777); // writable by everyone, like a shared or the model's folder
    const writable = findBubblewrap({ LOOM_BWRAP: fake });
    assert.equal(writable.found, null);
    assert.match(
      !writable.found ? writable.reason : "",
      /LOOM_BWRAP ".*bwrap" is not trusted: ".*project" is writable/,
    );
    chmodSync(project, 0o755);
    if (process.getuid?.() === 0) {
      // (Probes are remembered per value of LOOM_BWRAP: another name for the same program.)
      const other = join(project, "bwrap-foreign");
      writeFileSync(other, readFileSync(fake), { mode: 0o755 });
      chownSync(other, 65534, 65534);
      const foreign = findBubblewrap({ LOOM_BWRAP: other });
      assert.match(!foreign.found ? foreign.reason : "", /is not owned by root/);
    }
    chmodSync(project, 0o777);
    assert.equal(existsSync(marker), false, "the planted bubblewrap was run to probe it");
    const real = findBubblewrap({});
    if (real.found) assert.ok(findBubblewrap({ LOOM_BWRAP: real.found.path }).found, "the real one is still taken");
  },
);

bothTest(
  "dist/loom --sandbox required with LOOM_BWRAP set to a script in a writable folder: exit 3, the script never runs",
  async (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const project = join(arena.dir, "project");
    mkdirSync(project);
    const fake = join(project, "bwrap");
    const marker = join(arena.outside, "fake-bwrap-ran");
    writeFileSync(
      fake,
      `#!/bin/sh\necho ran >> ${marker}\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n`,
      {
        mode: 0o755,
      },
    );
    chmodSync(project, 0o777);
    const args = replay(arena, attackSlice(), [{ action: "run_tests", args: {} }]);
    const run = await runLoom(args, { cwd: arena.dir, env: { LOOM_BWRAP: fake, LOOM_SANDBOX: "required" } });
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /LOOM_BWRAP ".*" is not trusted/);
    assert.equal(existsSync(marker), false, "the planted bubblewrap ran");
  },
);

test(
  "eval rescore: an agent that replaced src/ by a link to a host folder gets nothing deleted there; crafted " +
    "changes.json entries (../, absolute, under a link) are refused with one line",
  { timeout: 600_000 },
  async (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const agent = await startEvalAgent({});
    t.after(() => agent.close());
    const out = join(arena.dir, "out");
    // Without bubblewrap the evaluation runs only when told so (--sandbox off); rescore then names the suite itself.
    const off = missing ? ["--sandbox", "off"] : [];
    const ran = await loomEval([
      "evals/",
      "--model",
      MODEL,
      "--task",
      "range-off-by-one",
      "--out",
      out,
      "--quiet",
      ...off,
    ], {
      agent,
    });
    assert.equal(ran.code, 0, ran.stderr);
    const row = JSON.parse(readFileSync(join(out, "eval.json"), "utf8")).rows[0];
    const changesPath = join(out, "runs", row.id, `attempt-${row.attempt}`, "changes.json");
    // The host folder the agent's link points at holds a file of the same name as the one it "deleted".
    writeFileSync(join(arena.outside, "range.mjs"), "host file\n");
    const before = outsideState(arena);

    // What a run saves when the agent replaced src/ by a link (the real snapshot and diff of an evaluation).
    const loaded = loadSuiteFile("evals/", { cwd: ROOT });
    const task = loaded.tasks.find((x) => x.id === "range-off-by-one")!;
    const copy = join(arena.dir, "copy");
    createWorkspace(task, { suiteDir: loaded.dir, dest: copy });
    const snap = snapshot(copy);
    rmSync(join(copy, "src"), { recursive: true });
    symlinkSync(arena.outside, join(copy, "src"));
    writeFileSync(changesPath, JSON.stringify(changesSince(snap, copy)));
    const rescored = await loomEval(["rescore", out, "--suite", "evals/", ...off]);
    assert.equal(rescored.code, 0, rescored.stderr);
    assert.equal(outsideState(arena), before, "rescore deleted or wrote in the host folder");

    const escape = `escape-${Math.random().toString(36).slice(2, 10)}.txt`;
    const bytes = { base64: Buffer.from("pwned\n").toString("base64") };
    const crafted: Record<string, unknown>[] = [
      { [`../../${escape}`]: bytes },
      { [join(arena.outside, "abs.txt")]: bytes },
      { src: { link: arena.outside }, "src/new.mjs": bytes },
      { src: { link: arena.outside }, "src/range.mjs": bytes },
    ];
    for (const files of crafted) {
      writeFileSync(changesPath, JSON.stringify({ files }));
      const refused = await loomEval(["rescore", out, "--suite", "evals/", ...off]);
      assert.equal(refused.code, 2, `${JSON.stringify(files)}: ${refused.stderr}`);
      assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
      assert.match(
        refused.stderr,
        /changes\.json: entry ".*" (is absolute|climbs out with \.\.|lies under a link); refused/,
      );
    }
    assert.equal(outsideState(arena), before, "a crafted changes.json wrote outside the copy");
    assert.equal(existsSync(join(tmpdir(), escape)), false);
  },
);

bothTest(
  'suite paths: ../, links out, a workspace that is a link, check.files "/" are suite errors (exit 2, one line)',
  async (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const suiteDir = join(arena.dir, "suite");
    for (const dir of ["ws/src", "check", "solution", "real-ws"]) mkdirSync(join(suiteDir, dir), { recursive: true });
    writeFileSync(join(suiteDir, "ws/test.mjs"), "process.exit(1);\n");
    writeFileSync(join(suiteDir, "check/check.mjs"), "process.exit(1);\n");
    writeFileSync(join(arena.outside, "catalog.json"), "{}\n");
    symlinkSync(join(suiteDir, "real-ws"), join(suiteDir, "ws-link"));
    symlinkSync(arena.outside, join(suiteDir, "check-link"));
    const base = {
      id: "t",
      intent: "x",
      workspace: "ws",
      test: { command: ["node", "test.mjs"], timeout_ms: 5_000 },
      check: { command: ["node", "{check}/check.mjs"], timeout_ms: 5_000, files: "check" },
    };
    const cases: [Record<string, unknown>, RegExp, string[]?][] = [
      [{ workspace: "../outside" }, /workspace: "\.\.\/outside" leads outside the suite's folder/],
      [{ workspace: arena.dir }, /workspace: ".*" leads outside the suite's folder/],
      [{ workspace: "ws-link" }, /workspace: "ws-link" is a symbolic link/],
      [{ workspace: "missing" }, /workspace: "missing" does not exist/],
      [{ check: { ...base.check, files: "check-link" } }, /check\.files: "check-link" leads outside/],
      [{ check: { ...base.check, files: "/" } }, /check\.files: "\/" leads outside the suite's folder/],
      [{ check: { ...base.check, files: "/" } }, /check\.files: the hidden check must live outside the workspace/, [
        "--allow-outside-suite",
      ]],
      [{ solution: "../outside" }, /solution: "\.\.\/outside" leads outside/],
      [{ workspace: undefined, git: { repo: "../..", commit: "abcdef1" } }, /git\.repo: "\.\.\/\.\." leads outside/],
      [{ slice: { catalog: "../outside/catalog.json", name: "s" } }, /slice\.catalog: ".*" leads outside/],
    ];
    for (const [change, message, flags = []] of cases) {
      writeFileSync(join(suiteDir, "suite.json"), JSON.stringify({ tasks: [{ ...base, ...change }] }));
      const run = await loomEval(["validate", suiteDir, ...flags]);
      assert.equal(run.code, 2, `${JSON.stringify(change)}: ${run.stderr}`);
      assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
      assert.match(run.stderr, message);
      assert.doesNotMatch(run.stderr, /EINVAL|internal/);
    }
    // A workspace that became a link after the suite was read: a suite error at copy time, never an infra failure.
    writeFileSync(join(suiteDir, "suite.json"), JSON.stringify({ tasks: [base] }));
    const loaded = loadSuiteFile(suiteDir, { cwd: ROOT });
    rmSync(join(suiteDir, "ws"), { recursive: true });
    symlinkSync(join(suiteDir, "real-ws"), join(suiteDir, "ws"));
    assert.throws(
      () => createWorkspace(loaded.tasks[0], { suiteDir: loaded.dir, dest: join(arena.dir, "dest") }),
      (error: Error) => error instanceof UsageError && /workspace "ws" is not a folder/.test(error.message),
    );
  },
);

bothTest(
  "the hidden check: agent code that exits 0 on import or patches JSON does not score solved; validate catches a " +
    "check that trusts its own exit status",
  async (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const loaded = loadSuiteFile("evals/", { cwd: ROOT });
    const task = loaded.tasks.find((x) => x.id === "range-off-by-one")!;
    const agents = {
      "exits 0 on import": "process.exit(0);\n",
      "patches JSON": 'JSON.stringify = () => "[0,1,2]";\nexport const range = () => [];\n',
      "kills its parent": "process.kill(process.ppid, 'SIGKILL');\nprocess.exit(0);\n",
    };
    for (const [name, code] of Object.entries(agents)) {
      const ws = join(arena.dir, name.replaceAll(" ", "-"));
      createWorkspace(task, { suiteDir: loaded.dir, dest: ws });
      writeFileSync(join(ws, "src/range.mjs"), code);
      const check = await runCheck(task.check, ws, { suiteDir: loaded.dir, sandbox: "auto" });
      assert.equal(check.passed, false, `${name}: ${check.output}`);
    }
    // A suite whose check runs the agent's module in its own process and trusts the exit status.
    const suiteDir = join(arena.dir, "naive");
    mkdirSync(join(suiteDir, "ws/src"), { recursive: true });
    mkdirSync(join(suiteDir, "check"));
    mkdirSync(join(suiteDir, "solution/src"), { recursive: true });
    writeFileSync(join(suiteDir, "ws/src/a.mjs"), "export const answer = () => 41;\n");
    writeFileSync(join(suiteDir, "solution/src/a.mjs"), "export const answer = () => 42;\n");
    writeFileSync(
      join(suiteDir, "ws/test.mjs"),
      'import { answer } from "./src/a.mjs";\nprocess.exit(answer() === 42 ? 0 : 1);\n',
    );
    writeFileSync(
      join(suiteDir, "check/check.mjs"),
      'const { answer } = await import(process.cwd() + "/src/a.mjs");\nprocess.exit(answer() === 42 ? 0 : 1);\n',
    );
    writeFileSync(
      join(suiteDir, "suite.json"),
      JSON.stringify({
        tasks: [{
          id: "naive",
          intent: "x",
          workspace: "ws",
          solution: "solution",
          test: { command: ["node", "test.mjs"], timeout_ms: 10_000 },
          check: { command: ["node", "{check}/check.mjs"], timeout_ms: 10_000, files: "check" },
        }],
      }),
    );
    const run = await loomEval(["validate", suiteDir]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /FAIL naive: .*the check passes on a workspace whose modules exit 0 on import/);
  },
);

bothTest(
  "a relative or workspace PATH entry cannot plant node for the test, a command or the hidden check",
  async (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const loaded = loadSuiteFile("evals/", { cwd: ROOT });
    const task = loaded.tasks.find((x) => x.id === "range-off-by-one")!;
    createWorkspace(task, { suiteDir: loaded.dir, dest: arena.workspace });
    for (const dir of ["node_modules/.bin", "bin"]) {
      mkdirSync(join(arena.workspace, dir), { recursive: true });
      writeFileSync(join(arena.workspace, dir, "node"), "#!/bin/sh\necho PLANTED\nexit 0\n", { mode: 0o755 });
    }
    const PATH = ["node_modules/.bin", join(arena.workspace, "bin"), "", process.env.PATH].join(":");
    const slice = attackSlice({
      ...AUTO,
      test: { command: ["node", "-e", "console.log('real node')"], timeout_ms: 30_000 },
      commands: [["node"]],
    });
    const { run, output } = executorFor(arena, slice, { PATH });
    for (
      const [action, args] of [["run_tests", {}], [
        "run_command",
        { argv: ["node", "-e", "console.log('real node')"] },
      ]] as const
    ) {
      const text = output(await run(action, args));
      assert.match(text, /real node/, `${action}: ${text}`);
      assert.doesNotMatch(text, /PLANTED/);
    }
    const check = await runCheck(task.check, arena.workspace, { suiteDir: loaded.dir, sandbox: "auto", env: { PATH } });
    assert.doesNotMatch(check.output, /PLANTED/);
    assert.equal(check.passed, false, "the planted node passed the check on an unsolved workspace");
  },
);

test(
  "write_file and edit_file on a full disk: the old file stays whole, the step is refused as disk_full",
  { timeout: 600_000 },
  async (t) => {
    if (process.platform !== "linux" || process.getuid?.() !== 0) {
      process.stderr.write("skipped: mounting a small tmpfs needs root on Linux\n");
      return t.skip("needs root on Linux");
    }
    const arena = makeArena();
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=128k", "tmpfs", arena.workspace]);
    t.after(() => {
      spawnSync("umount", [arena.workspace]);
      rmSync(arena.dir, { recursive: true, force: true });
    });
    if (mounted.status !== 0) {
      process.stderr.write(`skipped: cannot mount a tmpfs here (${String(mounted.stderr).trim()})\n`);
      return t.skip("cannot mount a tmpfs");
    }
    const original = `FIRST LINE\n${"keep me\n".repeat(4_000)}`; // 32 KB
    writeFileSync(join(arena.workspace, "big.txt"), original);
    // Fill what is left.
    try {
      writeFileSync(join(arena.workspace, "filler"), Buffer.alloc(1024 * 1024));
    } catch { /* ENOSPC: full now */ }
    const { run } = executorFor(arena, attackSlice(AUTO), { PATH: process.env.PATH });
    const write = await run("write_file", { path: "big.txt", content: "new ".repeat(20_000) });
    assert.deepEqual([write.kind, write.kind === "refusal" && write.code], ["refusal", "disk_full"]);
    const edit = await run("edit_file", { path: "big.txt", old_text: "FIRST LINE", new_text: "CHANGED" });
    assert.deepEqual([edit.kind, edit.kind === "refusal" && edit.code], ["refusal", "disk_full"]);
    assert.equal(readFileSync(join(arena.workspace, "big.txt"), "utf8"), original, "the old file was lost");
    assert.deepEqual(readdirSync(arena.workspace).sort(), ["big.txt", "filler"], "a temporary file was left behind");
  },
);

bothTest(
  "dist/loom removes the scratch copies and pids cgroups a killed Loom left (dead PID, its naming), nothing else",
  async (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const temp = join(arena.dir, "tmp");
    const dead = deadPid();
    const stale = join(temp, `loom-eval-${dead}-a1B2c3`);
    const live = join(temp, `loom-check-${process.pid}-d4E5f6`);
    const foreign = join(temp, "loom-eval-keep-me");
    mkdirSync(join(stale, "workspace"), { recursive: true });
    writeFileSync(join(stale, "workspace", "copy.txt"), "a task's files\n");
    mkdirSync(live, { recursive: true });
    mkdirSync(foreign, { recursive: true });
    // A link planted at a stale-looking name: removed as a name at most, never followed.
    symlinkSync(arena.outside, join(temp, `loom-eval-${dead}-g7H8i9`));
    const before = outsideState(arena);
    const cgroups = pidsCgroupRoot();
    const staleCgroup = cgroups === null ? null : join(cgroups, `loom-${dead}-${"0a1b2c3d4e5f"}`);
    if (staleCgroup !== null) {
      try {
        mkdirSync(staleCgroup);
      } catch { /* not writable here: only the scratch copies are tried */ }
    }
    t.after(() => {
      if (staleCgroup !== null && existsSync(staleCgroup)) rmdirSync(staleCgroup);
    });
    const args = replay(arena, attackSlice(AUTO), [{ action: "run_tests", args: {} }]);
    const run = await runLoom(args, { cwd: arena.dir, env: { TMPDIR: temp } });
    assert.notEqual(run.code, null, run.stderr);
    assert.equal(existsSync(stale), false, "the stale scratch copy is still there");
    assert.ok(existsSync(live), "a live Loom's scratch folder was removed");
    assert.ok(existsSync(foreign), "a folder Loom did not name was removed");
    assert.equal(outsideState(arena), before, "the planted link was followed");
    if (staleCgroup !== null) assert.equal(existsSync(staleCgroup), false, "the stale cgroup is still there");
  },
);

test(
  "install.sh in a shared bin folder: a link planted at the old predictable temporary name is not followed",
  {
    timeout: 600_000,
    skip: spawnSync("sh", ["-c", "command -v curl && command -v tar"]).status === 0 ? false : "needs curl and tar",
  },
  (t) => {
    const arena = makeArena();
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const name = "loom-0.0.2-linux-x64";
    mkdirSync(join(arena.dir, "pack", name), { recursive: true });
    writeFileSync(join(arena.dir, "pack", name, "loom"), '#!/bin/sh\necho "loom 0.0.2"\n', { mode: 0o755 });
    const release = join(arena.dir, "release");
    mkdirSync(release);
    execFileSync("tar", ["-czf", join(release, `${name}.tar.gz`), "-C", join(arena.dir, "pack"), name]);
    const sums = execFileSync("sha256sum", [`${name}.tar.gz`], { cwd: release, encoding: "utf8" });
    writeFileSync(join(release, "SHA256SUMS"), sums);
    const prefix = join(arena.dir, "prefix");
    mkdirSync(join(prefix, "bin"), { recursive: true });
    const before = outsideState(arena);
    // Another user of the bin folder planted a link at the name install.sh used to pick (.loom.new.<its PID>); the
    // shell execs install.sh, so $$ is the script's PID.
    const r = spawnSync("sh", [
      "-c",
      `ln -s ${JSON.stringify(arena.secret)} "${prefix}/bin/.loom.new.$$"; exec sh "$0"`,
      join(ROOT, "install.sh"),
    ], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        HOME: arena.dir,
        LOOM_BASE_URL: `file://${release}`,
        LOOM_PREFIX: prefix,
        LOOM_TARGET: "linux-x64",
      },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(outsideState(arena), before, "install.sh wrote through the planted link");
    assert.ok(lstatSync(join(prefix, "bin", "loom")).isFile());
    assert.equal(execFileSync(join(prefix, "bin", "loom"), { encoding: "utf8" }), "loom 0.0.2\n");
  },
);
// ─── #26 item 3: credentials go only where the user sent them (lib/settings/settings.ts) ─────────────────────────────
// A catalog is data: its base_url and api_key_env may not send the user's keys (or any other secret in the
// environment) to a host the user never named. Each refusal is one line naming the file, the field and the host, and
// nothing reaches the host. Every case here sent the key on the code before this block.

async function keyHostArena(t: { after: (fn: () => unknown) => void }) {
  const { main } = await import("../main.ts");
  const { fakeIo } = await import("./helpers/fake-io.ts");
  const { anthropicAnswer, openAIAnswer, startAnthropicServer, startOpenAIServer } = await import(
    "./helpers/fake-provider-servers.ts"
  );
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const dir = mkdtempSync(join(tmpdir(), "loom-key-host-"));
  mkdirSync(join(dir, "ws"));
  writeFileSync(join(dir, "ws", "a.txt"), "a\n");
  const answers = [{ action: "finish" }, { status: "success", summary: "Done." }];
  // "Another host": a server the user never named (on 127.0.0.1, so nothing leaves the machine).
  const other = await startAnthropicServer((_r, i) => anthropicAnswer(answers[i % 2]));
  const otherOpenAI = await startOpenAIServer((_r, i) => openAIAnswer(answers[i % 2]));
  t.after(async () => {
    await other.close();
    await otherOpenAI.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const catalog = (model: Record<string, unknown>) => {
    writeFileSync(
      join(dir, "catalog.json"),
      JSON.stringify({
        models: { m: model },
        slices: {
          s: {
            description: "Finish at once",
            intent: "{{request}}",
            instructions: "Finish.",
            actions: ["read_file", "finish"],
            test: { command: ["true"], timeout_ms: 5000 },
            model: "m",
            workspace: "ws",
            limits: { max_steps: 2 },
          },
        },
        routes: { default: "s" },
      }),
    );
  };
  const env = {
    ANTHROPIC_API_KEY: "sk-ant-user-key-0123456789",
    AWS_SECRET_ACCESS_KEY: "aws-secret-0123456789",
    XDG_CONFIG_HOME: join(dir, "no-config"),
    ...SANDBOX_ENV_OFF,
  };
  const loom = async (args: string[], extraEnv: Record<string, string> = {}) => {
    const { io, out } = fakeIo({ cwd: dir, env: { ...env, ...extraEnv } });
    const code = await main(["run", "--catalog", "catalog.json", "go", "-q", ...args], io);
    return { code, stderr: out.stderr, stdout: out.stdout };
  };
  return { other, otherOpenAI, catalog, loom };
}

const SANDBOX_ENV_OFF: Record<string, string> = { LOOM_SANDBOX: "off" };

test("a catalog's api_key_env naming AWS_SECRET_ACCESS_KEY is refused in one line; nothing is sent", async (t) => {
  const arena = await keyHostArena(t);
  arena.catalog({
    kind: "openai-compatible",
    model: "x",
    base_url: arena.otherOpenAI.baseUrl,
    api_key_env: "AWS_SECRET_ACCESS_KEY",
  });
  const run = await arena.loom([]);
  assert.equal(run.code, 3, run.stderr);
  assert.equal(arena.otherOpenAI.requests.length, 0, "nothing reached the catalog's host");
  const host = new URL(arena.otherOpenAI.baseUrl).host;
  const line = run.stderr.split("\n").find((l) => l.includes("AWS_SECRET_ACCESS_KEY")) ?? "";
  assert.match(line, /catalog\.json: models\.m\.api_key_env "AWS_SECRET_ACCESS_KEY"/);
  assert.ok(line.includes(host), line);
  assert.ok(!run.stderr.includes("aws-secret-0123456789") && !run.stdout.includes("aws-secret-0123456789"));
  // The user may allow a variable by name on the command line.
  const allowed = await arena.loom(["--allow-key-env", "AWS_SECRET_ACCESS_KEY"]);
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.equal(arena.otherOpenAI.requests.length, 2);
});

test("a catalog's base_url on another host never gets the default key, unless --allow-key-host says so", async (t) => {
  const arena = await keyHostArena(t);
  arena.catalog({ kind: "anthropic", model: "claude-x", base_url: arena.other.baseUrl });
  const host = new URL(arena.other.baseUrl).host;
  const refused = await arena.loom([]);
  assert.equal(refused.code, 3, refused.stderr);
  assert.equal(arena.other.requests.length, 0, "the key did not reach the catalog's host");
  assert.match(
    refused.stderr,
    new RegExp(`catalog\\.json: models\\.m\\.base_url would send ANTHROPIC_API_KEY to ${host}`),
  );
  assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
  // Naming the key explicitly changes nothing; pinning ANTHROPIC_BASE_URL elsewhere does not help the catalog.
  arena.catalog({
    kind: "anthropic",
    model: "claude-x",
    base_url: arena.other.baseUrl,
    api_key_env: "ANTHROPIC_API_KEY",
  });
  const pinned = await arena.loom([], { ANTHROPIC_BASE_URL: "http://127.0.0.1:9" });
  assert.equal(pinned.code, 3);
  assert.equal(arena.other.requests.length, 0);
  // The user's word: --allow-key-host, or the same host as a base URL the user set.
  const allowed = await arena.loom(["--allow-key-host", host]);
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.equal(arena.other.requests.length, 2);
  const userSet = await arena.loom([], { ANTHROPIC_BASE_URL: arena.other.baseUrl });
  assert.equal(userSet.code, 0, userSet.stderr);
  assert.equal(arena.other.requests.length, 4);
  // An openai-compatible entry may not borrow another provider's default key for its own host either.
  arena.catalog({
    kind: "openai-compatible",
    model: "x",
    base_url: arena.otherOpenAI.baseUrl,
    api_key_env: "ANTHROPIC_API_KEY",
  });
  const borrowed = await arena.loom([]);
  assert.equal(borrowed.code, 3);
  assert.equal(arena.otherOpenAI.requests.length, 0);
});

test("resolveSettings: the credential rules, as data (every key variable × host source)", async () => {
  const { resolveSettings } = await import("../lib/settings/settings.ts");
  const slice = { name: "s", entry: { model: "m" } };
  const at = (model: Record<string, unknown>, extra: { env?: Record<string, string>; flags?: object } = {}) =>
    resolveSettings({
      env: extra.env ?? {},
      flags: extra.flags,
      catalog: { file: "c.json", slice, models: { m: { kind: "anthropic", model: "x", ...model } as never } },
    });
  assert.equal(at({}).ok, true, "the provider's own host");
  assert.equal(at({ base_url: "https://api.anthropic.com" }).ok, true);
  assert.equal(at({ base_url: "https://evil.test" }).ok, false);
  assert.equal(at({ base_url: "https://evil.test" }, { flags: { allow_key_host: ["evil.test"] } }).ok, true);
  assert.equal(
    at({ base_url: "https://proxy.test/v1" }, { env: { ANTHROPIC_BASE_URL: "https://proxy.test" } }).ok,
    true,
  );
  // A variable a catalog names holds a key only when the user allowed it (#33): set and not allowed, refused.
  const work = { base_url: "https://evil.test", api_key_env: "ANTHROPIC_WORK_API_KEY" };
  assert.equal(at(work, { env: { ANTHROPIC_WORK_API_KEY: "k" } }).ok, false, "a catalog-named key variable");
  assert.equal(
    at(work, { env: { ANTHROPIC_WORK_API_KEY: "k" }, flags: { allow_key_env: ["ANTHROPIC_WORK_API_KEY"] } }).ok,
    true,
    "allowed by the user",
  );
  // The provider's own host means its origin: https, its own port (#33).
  assert.equal(at({ base_url: "http://api.anthropic.com" }).ok, false, "plain http to the right host");
  assert.equal(at({ base_url: "https://api.anthropic.com:8443" }).ok, false, "another port of the right host");
  assert.equal(at({ base_url: "https://api.anthropic.com:443/v1" }).ok, true, "the default port, spelled out");
  assert.equal(
    at({ base_url: "http://proxy.test:8080/v1" }, { env: { ANTHROPIC_BASE_URL: "http://proxy.test:8080" } }).ok,
    true,
    "a base URL the user set, as given",
  );
  assert.equal(
    at({ base_url: "http://proxy.test:9090/v1" }, { env: { ANTHROPIC_BASE_URL: "http://proxy.test:8080" } }).ok,
    false,
    "another port than the user's",
  );
  for (const name of ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "OPENAI_API_KEY", "HOME"]) {
    const refused = at({ api_key_env: name });
    assert.equal(refused.ok, false, name);
    if (!refused.ok) {
      assert.match(
        refused.message,
        new RegExp(`^c\\.json: models\\.m\\.api_key_env "${name}" .*api\\.anthropic\\.com`),
      );
    }
  }
});

// ─── #33 item 3: redact before clipping, everywhere ───────────────────────────────────────────────────────────────────
// A provider that echoes the key in its error (every body shape, the key where the 300-character clip cuts it) or in
// an answer: no run of 12 characters of the key appears in stdout, stderr, --json, the trace or the context report.

const ECHOED_KEY = `sk-ant-${"k".repeat(20)}${"0123456789abcdef".repeat(5)}-tail`; // 107 characters
/** Every run of 12 characters of the key: what must appear nowhere. */
function keyRuns(key: string): string[] {
  const runs: string[] = [];
  for (let i = 0; i + 12 <= key.length; i++) runs.push(key.slice(i, i + 12));
  return runs;
}

test("a provider echoing the key in every error shape: no 12 characters of it in any output", async (t) => {
  const { startAnthropicServer, anthropicAnswer } = await import("./helpers/fake-provider-servers.ts");
  const dir = mkdtempSync(join(tmpdir(), "loom-redact-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "ws"));
  writeFileSync(join(dir, "ws", "a.txt"), "a\n");
  const pad = (n: number) => "x".repeat(n);
  const shapes: Array<{ status: number; body?: unknown; rawBody?: string }> = [
    {
      status: 400,
      body: { type: "error", error: { type: "invalid_request_error", message: `${pad(250)}${ECHOED_KEY}` } },
    },
    { status: 400, body: { error: `bad key ${ECHOED_KEY}` } },
    { status: 422, body: { message: `${pad(280)} ${ECHOED_KEY}` } },
    { status: 404, body: { detail: { key: ECHOED_KEY } } },
    { status: 500, rawBody: `upstream said: ${ECHOED_KEY.slice(0, 60)}` }, // a prefix only
    { status: 401, body: { error: { message: ECHOED_KEY } } },
  ];
  const request = {
    intent: "Finish",
    instructions: "Finish.",
    workspace: "ws",
    actions: ["read_file", "print", "finish"],
    test: { command: ["true"], timeout_ms: 5000 },
    model: "anthropic/claude-sonnet-5-5",
    limits: { max_steps: 3 },
  };
  writeFileSync(join(dir, "request.json"), JSON.stringify(request));
  const outputs: string[] = [];
  for (const [i, shape] of shapes.entries()) {
    const server = await startAnthropicServer(() => shape);
    const { io, out } = fakeIo({
      cwd: dir,
      env: {
        ANTHROPIC_API_KEY: ECHOED_KEY,
        ANTHROPIC_BASE_URL: server.baseUrl,
        LOOM_SANDBOX: "off",
        PATH: process.env.PATH,
      },
    });
    await main(
      ["run", "request.json", "--json", "--trace", `trace-${i}.jsonl`, "--context-report", `report-${i}.json`],
      io,
    );
    await server.close();
    outputs.push(out.stdout, out.stderr);
    assert.ok(out.stdout.length + out.stderr.length > 0, "the run said something");
  }
  // An answer that carries the key: the model's print and finish summary.
  const answers = [{ action: "print" }, { text: `the key is ${ECHOED_KEY}` }, { action: "finish" }, {
    status: "success",
    summary: ECHOED_KEY,
  }];
  const server = await startAnthropicServer((_r, i) => anthropicAnswer(answers[i % answers.length]));
  const { io, out } = fakeIo({
    cwd: dir,
    env: {
      ANTHROPIC_API_KEY: ECHOED_KEY,
      ANTHROPIC_BASE_URL: server.baseUrl,
      LOOM_SANDBOX: "off",
      PATH: process.env.PATH,
    },
  });
  await main(
    ["run", "request.json", "--json", "--trace", "trace-answer.jsonl", "--context-report", "report-a.json"],
    io,
  );
  await server.close();
  outputs.push(out.stdout, out.stderr);
  for (const name of readdirSync(dir)) {
    if (name.endsWith(".json") || name.endsWith(".jsonl")) outputs.push(readFileSync(join(dir, name), "utf8"));
  }
  const all = outputs.join("\n");
  const leaked = keyRuns(ECHOED_KEY).filter((run) => all.includes(run));
  assert.deepEqual(leaked.slice(0, 3), [], `${leaked.length} runs of the key leaked`);
  assert.match(all, /\[redacted\]/);
});

// ─── #33 item 2: files a user is handed never widen the sandbox ──────────────────────────────────────────────────────
// A request, a catalog slice or a recording (replay --execute, no model at all) that asks for the network, a host
// variable or a host mount is refused in one line naming the file and the field; the command line grants them.

test("a request, catalog or recording asking for network, env or a mount: refused in one line unless granted", async (t) => {
  const arena = makeArena({ "a.txt": "a\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const env = {
    PATH: process.env.PATH,
    LOOM_SANDBOX: "off",
    HOST_SECRET: "host-secret-value",
    HOME: arena.dir,
    ANTHROPIC_API_KEY: "sk-ant-never-sent-0123456789",
    ANTHROPIC_BASE_URL: "http://127.0.0.1:9", // nothing listens: the refusal comes before any call
  };
  const loom = async (args: string[]) => {
    const { io, out } = fakeIo({ cwd: arena.dir, env });
    const code = await main(args, io);
    return { code, stderr: out.stderr };
  };
  const oneLine = (run: { code: number; stderr: string }, file: string, field: string) => {
    assert.equal(run.code, 3, run.stderr);
    const lines = run.stderr.trim().split("\n");
    assert.equal(lines.length, 1, run.stderr);
    assert.ok(lines[0]?.includes(`${file}`) && lines[0].includes(field), run.stderr);
    assert.ok(!run.stderr.includes("host-secret-value"));
  };
  // replay --execute of a recording someone sent: no model involved.
  const asks: Array<[Record<string, unknown>, string, string[]]> = [
    [{ network: true }, "sandbox.network", ["--sandbox-network"]],
    [{ env: ["HOST_SECRET"] }, "sandbox.env[0]", ["--sandbox-env", "HOST_SECRET"]],
    [{ read_only: ["/opt"] }, "sandbox.read_only[0]", ["--sandbox-read-only", "/opt"]],
  ];
  for (const [sandbox, field, grant] of asks) {
    const args = replay(arena, attackSlice({ sandbox: { mode: "auto", ...sandbox } }), []);
    oneLine(await loom(args), "attack.jsonl", field);
    if (sandbox.read_only === undefined || existsSync("/opt")) {
      const granted = await loom([...args, ...grant]);
      assert.equal(granted.code, 0, `${field} granted: ${granted.stderr}`);
    }
  }
  // A request file.
  const request = {
    ...attackSlice({ sandbox: { network: true } }),
    workspace: "ws",
    model: "anthropic/claude-sonnet-5-5",
  };
  writeFileSync(join(arena.dir, "request.json"), JSON.stringify(request));
  oneLine(await loom(["run", "request.json", "-q"]), "request.json", "sandbox.network");
  // A catalog slice (its defaults merged in count the same).
  writeFileSync(
    join(arena.dir, "catalog.json"),
    JSON.stringify({
      models: { m: { kind: "anthropic", model: "claude-sonnet-5-5" } },
      defaults: { sandbox: { env: ["HOST_SECRET"] } },
      slices: {
        s: {
          ...attackSlice(),
          description: "s",
          intent: "{{request}}",
          model: "m",
          workspace: "ws",
          sandbox: undefined,
        },
      },
      routes: { default: "s" },
    }),
  );
  oneLine(await loom(["run", "--catalog", "catalog.json", "go", "-q"]), "catalog.json", "sandbox.env[0]");
});

// ─── #33 item 4: results folders and tables are data ─────────────────────────────────────────────────────────────────

test("eval rescore --sandbox off of a results folder naming its own suite: refused, the planted check never runs", {
  timeout: 600_000,
}, async (t) => {
  const { cpSync } = await import("node:fs");
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const agent = await startEvalAgent({});
  t.after(() => agent.close());
  // The folder someone sent: results made with their own suite, whose check writes a canary on the host.
  const suite = join(arena.dir, "suite");
  cpSync(join(ROOT, "evals"), suite, { recursive: true });
  const canary = join(arena.outside, "check-ran");
  const checkFile = join(suite, "tasks/range-off-by-one/check/check.mjs");
  writeFileSync(
    checkFile,
    `import { writeFileSync as plant } from "node:fs";\ntry { plant(${
      JSON.stringify(canary)
    }, "ran\\n"); } catch {}\n` +
      readFileSync(checkFile, "utf8"),
  );
  // Its name carries a terminal escape (a window title): shown escaped wherever the results are printed.
  const suiteFile = join(suite, "suite.jsonc");
  writeFileSync(
    suiteFile,
    readFileSync(suiteFile, "utf8").replace('"name": "loom-shipped"', '"name": "loom\\u001b]0;pwned\\u0007"'),
  );
  const out = join(arena.dir, "out");
  const sandbox = missing ? ["--sandbox", "off"] : [];
  const ran = await loomEval([
    suite,
    "--model",
    MODEL,
    "--task",
    "range-off-by-one",
    "--out",
    out,
    "--quiet",
    ...sandbox,
  ], {
    agent,
  });
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stdout, /eval loom\\e\]0;pwned\\u0007/);
  assert.ok(!ran.stdout.includes("\u001b"), "a raw escape reached the terminal");
  rmSync(canary, { force: true });
  const refused = await loomEval(["rescore", out, "--sandbox", "off"]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
  assert.match(refused.stderr, /eval\.json" names the suite .*--suite SUITE/);
  assert.equal(existsSync(canary), false, "the suite the results folder named ran its check on the host");
  if (!missing) {
    // Sandboxed, the recorded suite may run: named on stderr first, its check confined (the canary is outside).
    const shown = await loomEval(["rescore", out]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.ok(shown.stderr.includes(suite), shown.stderr);
    assert.equal(existsSync(canary), false, "the sandboxed check wrote on the host");
  }
});

test("a server reporting usage counters above 2^53: eval.json stays readable (--resume, rescore)", {
  timeout: 600_000,
}, async (t) => {
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const agent = await startEvalAgent({ usage: { input_tokens: 2 ** 60, output_tokens: 1e300 } });
  t.after(() => agent.close());
  const out = join(arena.dir, "out");
  const sandbox = missing ? ["--sandbox", "off"] : [];
  const args = ["evals/", "--model", MODEL, "--task", "range-off-by-one", "--out", out, "--quiet", ...sandbox];
  const ran = await loomEval(args, { agent });
  assert.equal(ran.code, 0, ran.stderr);
  const file = JSON.parse(readFileSync(join(out, "eval.json"), "utf8"));
  for (const row of file.rows) {
    for (const value of Object.values(row.usage)) {
      assert.ok(value === null || Number.isSafeInteger(value), `a counter of ${value} was written`);
    }
  }
  const resumed = await loomEval([...args, "--resume"], { agent });
  assert.equal(resumed.code, 0, resumed.stderr);
  const rescored = await loomEval(["rescore", out, "--suite", "evals/", ...sandbox]);
  assert.equal(rescored.code, 0, rescored.stderr);
  // A file edited past the bound: a clear line naming the file and the field, on every path that reads it.
  file.rows[0].usage.input = 2 ** 60;
  writeFileSync(join(out, "eval.json"), JSON.stringify(file));
  for (const again of [[...args, "--resume"], ["rescore", out, "--suite", "evals/", ...sandbox]]) {
    const refused = await loomEval(again, { agent });
    assert.equal(refused.code, 2, refused.stderr);
    // (a one-task run also says, first, that it cannot show a margin: a notice, not the error)
    const line = refused.stderr.trim().split("\n").filter((l) => l.includes("eval.json"));
    assert.equal(line.length, 1, refused.stderr);
    assert.match(line[0] ?? "", /eval\.json" is not a valid eval\.json: rows\[0\]\.usage\.input: Too big/);
  }
});

test("a --models file: zero prices, an alias rerouting a model, 1.7e308 refused in one line; escapes never reach the terminal", async (t) => {
  const { BUILT_IN_MODELS } = await import("../lib/models/built-in.ts");
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const sonnet = BUILT_IN_MODELS.models["anthropic/claude-sonnet-5-5"]!;
  const file = (models: Record<string, unknown>) => {
    writeFileSync(join(arena.dir, "models.json"), JSON.stringify({ format: 1, currency: "USD", models }));
    return ["models", "--models", "models.json"];
  };
  const loom = async (args: string[]) => {
    const { io, out } = fakeIo({ cwd: arena.dir, env: { PATH: process.env.PATH } });
    return { code: await main(args, io), ...out };
  };
  const low = { input: 0.01, output: 0.01, cache_read: 0.01, cache_write_5m: 0.01, cache_write_1h: 0.01 };
  const zero = { ...low, input: 0 }; // no price is zero, for any model (issue 42)
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ "anthropic/claude-sonnet-5-5": { ...sonnet, prices: low } }, /prices\.input 0\.01 is below Loom's list price/],
    [{ "anthropic/new": { ...sonnet, prices: zero } }, /prices\.input: Too small: expected number to be >0/],
    [{ "anthropic/claude-sonnet-5-5": { ...sonnet, prices: null } }, /prices is null, but Loom's table prices it/],
    [
      { "anthropic/cheap": { ...sonnet, prices: low, aliases: ["claude-sonnet-4-5-20250929"] } },
      /aliases names "claude-sonnet-4-5-20250929", which is "anthropic\/claude-sonnet-4-5" in Loom's table/,
    ],
    [{ "anthropic/new": { ...sonnet, prices: { ...low, output: 1.7e308 } } }, /prices\.output/],
  ];
  for (const [models, expected] of cases) {
    const run = await loom(file(models));
    assert.equal(run.code, 2, run.stdout);
    assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
    assert.match(run.stderr, /models\.json/);
    assert.match(run.stderr, expected);
  }
  // Raised prices, a new model: fine. Its strings reach the terminal with their escape sequences escaped.
  const hostile = { ...sonnet, prices: { ...sonnet.prices!, input: 30 }, effort: ["\u001b]0;pwned\u0007high"] };
  const shown = await loom(file({ "anthropic/claude-sonnet-5-5": hostile, "anthropic/x\u001b[2Jy": sonnet }));
  assert.equal(shown.code, 0, shown.stderr);
  // deno-lint-ignore no-control-regex
  assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(shown.stdout), JSON.stringify(shown.stdout));
  assert.match(shown.stdout, /\\e\]0;pwned/);
});

bothTest(
  "a .git a command plants is told on stderr as it happens and is a git_planted refusal in the report",
  async (t) => {
    const arena = makeArena({ "a.txt": "a\n" });
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    const args = replay(arena, attackSlice(AUTO), [
      { action: "run_command", args: { argv: ["sh", "-c", "mkdir -p pkg/.git && echo x > pkg/.git/config"] } },
    ]);
    const { io, out } = fakeIo({ cwd: arena.dir, env: { PATH: process.env.PATH, LOOM_BWRAP: process.env.LOOM_BWRAP } });
    const code = await main([...args.filter((a) => a !== "--quiet"), "--output-format", "stream-json"], io);
    assert.notEqual(code, null);
    assert.match(out.stderr, /planted or changed what git runs \("pkg\/\.git"\); removed or put back/);
    assert.equal(existsSync(join(arena.workspace, "pkg/.git")), false);
    // The step's event names the refusal; the report counts it among the run's refusals.
    assert.match(out.stdout, /"refusal":"git_planted"/);
    assert.equal(JSON.parse(readFileSync(join(arena.dir, "report.json"), "utf8")).refusals, 1);
  },
);

test("isGitPath: any case, any depth, git's equivalent spellings; never a name that is not one", async () => {
  const fc = (await import("fast-check")).default;
  const { isGitPath } = await import("../lib/workspace/git-guard.ts");
  const segment = fc.stringMatching(/^[a-z0-9_-]{1,8}$/);
  const dotGit = fc.tuple(fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), fc.constantFrom("", ".", " ", ". "))
    .map(([upper, tail]) => `.${[..."git"].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join("")}${tail}`);
  fc.assert(
    fc.property(
      fc.array(segment, { maxLength: 4 }),
      dotGit,
      fc.array(segment, { maxLength: 3 }),
      (before, git, after) => {
        return isGitPath([...before, git, ...after].join("/"));
      },
    ),
  );
  fc.assert(fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (parts) => !isGitPath(parts.join("/"))));
  for (const name of [".github/config", ".gitignore", ".gitattributes", "git/config", "a.git/x", ".gitx"]) {
    assert.equal(isGitPath(name), false, name);
  }
  for (const name of ["GIT~1/config", ".gitmodules", "a/.GitModules", ".g\u200cit/config", "a\\.git\\config"]) {
    assert.equal(isGitPath(name), true, name);
  }
});

bothTest(
  "a nested repository's hooks/ swapped for a link to outside: Loom removes and writes nothing there",
  async (t) => {
    const arena = makeArena({ "lib/a.txt": "a\n" });
    t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
    execFileSync("git", ["init", "-q"], {
      cwd: join(arena.workspace, "lib"),
      env: { PATH: process.env.PATH, HOME: arena.dir },
    });
    writeFileSync(join(arena.workspace, "lib/.git/hooks/pre-commit"), "#!/bin/sh\n");
    writeFileSync(join(arena.outside, "pre-commit"), "outside file\n");
    writeFileSync(join(arena.outside, "other"), "outside file\n");
    const before = outsideState(arena);
    const { run } = executorFor(arena, attackSlice({ sandbox: { mode: "auto" } }), { PATH: process.env.PATH });
    await run("write_file", { path: "out.txt", content: arena.outside });
    await run("run_command", { argv: ["sh", "-c", 'rm -rf lib/.git/hooks && ln -s "$(cat out.txt)" lib/.git/hooks'] });
    assert.ok(outsideState(arena) === before, `Loom removed or wrote through the link: ${readdirSync(arena.outside)}`);
  },
);
