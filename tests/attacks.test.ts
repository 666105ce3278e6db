// Attacks through the binary with the sandbox on (bubblewrap; skipped with one line where it is not installed): a
// directory swapped for a symlink while the model writes, processes that try to outlive the run, the ways around
// run_command's argument guard, hard links, and a test that reads Loom's own environment through /proc.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { linkSync, lstatSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import process from "node:process";
import { createWorkspaceExecutor } from "../lib/adapters/create-workspace-executor.ts";
import { ExecutionReport } from "../lib/reports.ts";
import type { SliceRequest } from "../lib/slice.ts";
import { ResultStore } from "../lib/store.ts";
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

function sandboxTest(name: string, fn: (t: { after: (f: () => unknown) => void }) => Promise<void>) {
  test(name, { timeout: 120_000 }, async (t) => {
    if (missing) return t.skip(missing);
    await fn(t);
  });
}

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
  });
  let step = 0;
  const run = async (action: string, args: Record<string, unknown>) =>
    ExecutionReport.parse(await executor.execute(action as never, args, { step: ++step }));
  const output = (report: ExecutionReport) =>
    report.kind === "command" || report.kind === "test" ? store.get(report.output) ?? "" : "";
  return { run, output, executor };
}

sandboxTest(
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
    const args = replay(arena, attackSlice(), steps);
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

sandboxTest("3,000 reads while a directory is swapped for a symlink: none returns the outside file", async (t) => {
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
    { ...attackSlice(), workspace: arena.workspace },
    store,
    { root: arena.workspace, secretEnvNames: [] },
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
  sandboxTest(
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

sandboxTest("a write through a hard link is refused and neither name changes", async (t) => {
  const arena = makeArena({ "a.txt": "original\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  linkSync(join(arena.workspace, "a.txt"), join(arena.workspace, "b.txt"));
  linkSync(arena.secret, join(arena.workspace, "secret-link.txt"));
  const { run } = executorFor(arena, attackSlice(), { PATH: process.env.PATH });
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
    const slice = attackSlice({ test: { command: ["sh", "-c", dump("seen-by-test.txt")], timeout_ms: 30_000 } });
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
  const run = await runLoom(args, { cwd: arena.dir, env: { PATH: "/nonexistent" } });
  assert.equal(run.code, 3, run.stderr);
  assert.match(run.stderr, /sandbox is required .* unavailable/);
  const report = JSON.parse(readFileSync(join(arena.dir, "report.json"), "utf8"));
  assert.equal(report.outcome, "startup_failed");
  assert.equal(report.error.code, "sandbox_unavailable");
});
