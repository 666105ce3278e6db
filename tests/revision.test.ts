// The revision tells the truth: any change to the workspace makes a new one — an edit, or files a command or a test
// run changed — and a pass on one revision never validates a later one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { WorkspaceExecutor } from "../lib/workspace/workspace-executor.ts";
import { WorkspaceFingerprint } from "../lib/workspace/workspace-fingerprint.ts";
import { mayChangeFiles } from "../lib/recording/importers/command-effect.ts";
import { applyReport, initialBriefing } from "../lib/context/briefing.ts";
import { ExecutionReport } from "../lib/vocabulary/reports.ts";
import { ResultStore } from "../lib/context/store.ts";

function withExecutor(
  fn: (fx: {
    root: string;
    executor: WorkspaceExecutor;
    run: (action: string, args: Record<string, unknown>) => Promise<ExecutionReport>;
  }) => Promise<void>,
  testCommand = ["sh", "-c", "exit 0"],
) {
  return async () => {
    const root = mkdtempSync(join(tmpdir(), "loom-revision-"));
    writeFileSync(join(root, "a.txt"), "one\n");
    const executor = new WorkspaceExecutor({
      root,
      store: new ResultStore(),
      test: { command: testCommand, timeout_ms: 30_000 },
      commands: [["sh", "-c"]],
      commandTimeoutMs: 30_000,
    });
    let step = 0;
    const run = async (action: string, args: Record<string, unknown>) =>
      ExecutionReport.parse(await executor.execute(action as never, args, { step: ++step }));
    try {
      await fn({ root, executor, run });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
}

test(
  "a run_command that changes a file makes a new revision; one that changes nothing does not",
  withExecutor(async ({ run, executor }) => {
    const unchanged = await run("run_command", { argv: ["sh", "-c", "cat a.txt"] });
    assert.deepEqual(unchanged.kind === "command" && [unchanged.revision_before, unchanged.revision_after], [
      undefined,
      undefined,
    ]);
    const changed = await run("run_command", { argv: ["sh", "-c", "echo two > a.txt"] });
    assert.deepEqual(changed.kind === "command" && [changed.revision_before, changed.revision_after], ["r0", "r1"]);
    assert.equal(executor.revision, "r1");
    const created = await run("run_command", { argv: ["sh", "-c", "mkdir -p sub && echo x > sub/new.txt"] });
    assert.equal(created.kind === "command" && created.revision_after, "r2");
    const removed = await run("run_command", { argv: ["sh", "-c", "rm sub/new.txt"] });
    assert.equal(removed.kind === "command" && removed.revision_after, "r3");
    const chmod = await run("run_command", { argv: ["sh", "-c", "chmod +x a.txt"] });
    assert.equal(chmod.kind === "command" && chmod.revision_after, "r4");
  }),
);

test(
  "touching a file without changing its content, or writing caches tests rewrite, is no new revision",
  withExecutor(async ({ run }) => {
    const touched = await run("run_command", { argv: ["sh", "-c", "touch a.txt; cp a.txt b.tmp; mv b.tmp a.txt"] });
    assert.equal(touched.kind === "command" && touched.revision_after, undefined);
    const cached = await run("run_command", {
      argv: ["sh", "-c", "mkdir -p .pytest_cache .mypy_cache && date > .pytest_cache/y && date > .mypy_cache/z"],
    });
    assert.equal(cached.kind === "command" && cached.revision_after, undefined);
  }),
);

test(
  "a test run that changes a file reports the revision it ran on and the one it made",
  withExecutor(async ({ run, executor }) => {
    const report = await run("run_tests", {});
    assert.equal(report.kind === "test" && report.revision, "r0");
    assert.equal(report.kind === "test" && report.revision_after, "r1");
    assert.equal(executor.revision, "r1");
  }, ["sh", "-c", "echo generated > out.txt"]),
);

test(
  "tests_current is false after a command changed a file, until tests pass on the new revision",
  withExecutor(async ({ run }) => {
    const sizeOf = () => 0;
    let briefing = initialBriefing();
    const apply = (
      report: ExecutionReport,
      step: number,
    ) => (briefing = applyReport(briefing, report, { sizeOf, step }));
    apply(await run("run_tests", {}), 1);
    assert.equal(briefing.tests_current, true);
    apply(await run("run_command", { argv: ["sh", "-c", "echo broken > a.txt"] }), 2);
    assert.deepEqual([briefing.latest_revision, briefing.tests_current], ["r1", false]);
    apply(await run("run_tests", {}), 3);
    assert.deepEqual([briefing.latest_revision, briefing.last_test?.revision, briefing.tests_current], [
      "r1",
      "r1",
      true,
    ]);
  }),
);

test(
  "an edit counts once: the command after it does not see the edit as its own change",
  withExecutor(async ({ run }) => {
    const edit = await run("edit_file", { path: "a.txt", old_text: "one", new_text: "uno" });
    assert.equal(edit.kind === "edit" && edit.revision_after, "r1");
    const command = await run("run_command", { argv: ["sh", "-c", "true"] });
    assert.equal(command.kind === "command" && command.revision_after, undefined);
  }),
);

test("the fingerprint of a git checkout uses git's index and still sees a change made after it", () => {
  const root = mkdtempSync(join(tmpdir(), "loom-fingerprint-git-"));
  try {
    mkdirSync(join(root, "src"));
    for (let i = 0; i < 20; i++) writeFileSync(join(root, "src", `f${i}.txt`), `file ${i}\n`);
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root, stdio: "ignore" });
    git("init", "-q");
    git("add", ".");
    git("commit", "-qm", "init");
    // Files older than the index, as in any checkout that is not brand new: their index entries are trusted.
    const old = new Date(Date.now() - 60_000);
    for (let i = 0; i < 20; i++) utimesSync(join(root, "src", `f${i}.txt`), old, old);
    git("update-index", "--refresh");
    const fingerprint = new WorkspaceFingerprint(root);
    const first = fingerprint.take();
    assert.equal(new WorkspaceFingerprint(root).take(), first, "the same content gives the same fingerprint");
    writeFileSync(join(root, "src", "f3.txt"), "file 3 changed\n");
    assert.notEqual(fingerprint.take(), first);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("an imported command counts as a change unless it is plainly a read", () => {
  const bash = (script: string) => ["bash", "-lc", script].with(1, "-c");
  for (
    const read of [
      "ls -la",
      "cat a.py | grep x",
      "git diff",
      "find . -name '*.py'",
      "sed -n 1,20p a.py",
      "grep -rn x . 2>/dev/null",
    ]
  ) {
    assert.equal(mayChangeFiles(bash(read)), false, read);
  }
  for (
    const write of [
      "sed -i s/a/b/ a.py",
      "echo x > a.py",
      "python fix.py",
      "git commit -am x",
      "cat <<EOF > a.py",
      "rm a.py",
      "ls $(touch x)",
      "find . -delete",
    ]
  ) {
    assert.equal(mayChangeFiles(bash(write)), true, write);
  }
});

// ---- tests_current must not be wrongly true: five ways it was, and the globs a slice gives for what is not a change.

/** The working state's tests_current after the reports, as the loop computes it. */
function testsCurrent(reports: ExecutionReport[]): boolean {
  let briefing = initialBriefing("r0");
  const sizeOf = () => 0;
  reports.forEach((report, i) => (briefing = applyReport(briefing, report, { sizeOf, step: i + 1 })));
  return briefing.tests_current;
}

function executorIn(root: string, options: { ignore?: string[]; test?: string[]; commands?: string[][] } = {}) {
  const executor = new WorkspaceExecutor({
    root,
    store: new ResultStore(),
    test: { command: options.test ?? ["sh", "-c", "exit 0"], timeout_ms: 30_000 },
    commands: options.commands ?? [["sh", "-c"]],
    commandTimeoutMs: 30_000,
    ...(options.ignore ? { ignore: options.ignore } : {}),
  });
  let step = 0;
  return async (action: string, args: Record<string, unknown>) =>
    ExecutionReport.parse(await executor.execute(action as never, args, { step: ++step }));
}

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "loom-truth-"));
  writeFileSync(join(root, "m.py"), "x = 1\n");
  return root;
}

test("a .pyc planted in __pycache__ after the tests passed: tests_current is false", async () => {
  const root = tempRoot();
  try {
    const run = executorIn(root);
    const reports = [await run("run_tests", {})];
    reports.push(
      await run("run_command", {
        argv: ["sh", "-c", "mkdir -p __pycache__ && printf 'poison' > __pycache__/m.cpython-312.pyc"],
      }),
    );
    assert.equal(testsCurrent(reports), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a command changing a nested repository's .git (lib/.git/) and a file: put back, refused, then tests_current is false", async () => {
  const root = tempRoot();
  try {
    mkdirSync(join(root, "lib/.git/hooks"), { recursive: true });
    writeFileSync(join(root, "lib/.git/config"), "[core]\n");
    const run = executorIn(root);
    const reports = [await run("run_tests", {})];
    const script = "echo '[core] fsmonitor = x' >> lib/.git/config; echo 'x = 2' > m.py";
    const planted = await run("run_command", { argv: ["sh", "-c", script] });
    assert.equal(planted.kind === "refusal" && planted.code, "git_planted");
    assert.equal(readFileSync(join(root, "lib/.git/config"), "utf8"), "[core]\n");
    reports.push(planted);
    // The refused step's other change is not lost: the next look counts it as a new revision.
    reports.push(await run("run_command", { argv: ["sh", "-c", "true"] }));
    assert.equal(testsCurrent(reports), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a file deeper than PATH_MAX changed after the tests passed: tests_current is false", async () => {
  const root = tempRoot();
  // 40 folders of 200 characters: 8,000 characters of path, twice PATH_MAX, reached by relative steps (Python's chdir).
  const descend = `import os\nfor _ in range(40):\n  os.makedirs("${"d".repeat(200)}", exist_ok=True)\n  os.chdir("${
    "d".repeat(200)
  }")\n`;
  const write = (text: string) => ["python3", "-c", `${descend}open("deep.txt", "w").write("${text}")`];
  try {
    const run = executorIn(root, { commands: [["python3", "-c"]] });
    const reports = [await run("run_command", { argv: write("one") })];
    assert.equal(reports[0].kind === "command" && reports[0].revision_after, "r1");
    reports.push(await run("run_tests", {}));
    assert.equal(testsCurrent(reports), true);
    reports.push(await run("run_command", { argv: write("two") }));
    assert.equal(testsCurrent(reports), false);
  } finally {
    execFileSync("python3", ["-c", `import shutil; shutil.rmtree(${JSON.stringify(root)})`]);
  }
});

test("a stale .git/index entry with the file's size and mtime but other content: seen as a change", () => {
  const root = tempRoot();
  try {
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root, stdio: "ignore" });
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(root, "m.py"), old, old);
    git("init", "-q");
    git("add", ".");
    git("commit", "-qm", "init");
    // Same size, same mtime, other bytes: only ctime (and git's own check of it) tells.
    writeFileSync(join(root, "m.py"), "x = 2\n");
    utimesSync(join(root, "m.py"), old, old);
    const withIndex = new WorkspaceFingerprint(root).take();
    rmSync(join(root, ".git"), { recursive: true });
    assert.equal(withIndex, new WorkspaceFingerprint(root).take(), "the index's stale hash was trusted");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a background process a test leaves running (no sandbox) is killed before the fingerprint", async () => {
  const root = tempRoot();
  try {
    // The test passes, leaving a detached writer that changes a file a moment later.
    const run = executorIn(root, {
      test: ["sh", "-c", "setsid sh -c 'sleep 0.5; echo late > m.py' >/dev/null 2>&1 & sleep 0.2; exit 0"],
    });
    const reports = [await run("run_tests", {})];
    await new Promise((r) => setTimeout(r, 1_000));
    reports.push(await run("run_command", { argv: ["sh", "-c", "true"] }));
    assert.equal(readFileSync(join(root, "m.py"), "utf8"), "x = 1\n", "the writer outlived the test");
    assert.equal(testsCurrent(reports), true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("workspace_ignore: coverage a test writes is no change when the slice says so; the default counts it", async () => {
  const write = ["sh", "-c", "mkdir -p coverage && date +%N > coverage/lcov.info && date +%N > out.log"];
  for (const [ignore, current] of [[undefined, false], [["coverage/", "*.log"], true]] as const) {
    const root = tempRoot();
    try {
      const run = executorIn(root, { test: write, ...(ignore ? { ignore: [...ignore] } : {}) });
      const reports = [await run("run_tests", {}), await run("run_tests", {})];
      assert.equal(testsCurrent(reports), current, JSON.stringify(ignore));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
});

test("a change after the last action (a writer that escaped, no sandbox) is a new revision when the run ends", async () => {
  const root = tempRoot();
  try {
    // env -i: the writer carries no process token, so nothing can tell it is the test's; it writes after the test.
    const executor = new WorkspaceExecutor({
      root,
      store: new ResultStore(),
      test: {
        command: ["sh", "-c", "setsid env -i /bin/sh -c 'sleep 0.4; echo late > m.py' >/dev/null 2>&1 & sleep 0.1"],
        timeout_ms: 30_000,
      },
      commands: [],
      commandTimeoutMs: 30_000,
    });
    const report = ExecutionReport.parse(await executor.execute("run_tests", {}, { step: 1 }));
    assert.equal(testsCurrent([report]), true);
    assert.equal(executor.settle(), null, "nothing changed yet");
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(readFileSync(join(root, "m.py"), "utf8"), "late\n");
    assert.equal(executor.settle(), "r1");
    assert.equal(executor.settle(), null, "counted once");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/** Waits past the current wall-clock second (git compares whole seconds: what is older than the index is trusted). */
function nextSecond(): void {
  const until = (Math.floor(Date.now() / 1_000) + 1) * 1_000 + 50;
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, until - Date.now()));
}

test("in a git work tree, what git vouches for and Loom's own scan see the same changes, step by step", () => {
  const root = mkdtempSync(join(tmpdir(), "loom-fingerprint-vouched-"));
  try {
    mkdirSync(join(root, "src"));
    for (let i = 0; i < 8; i++) writeFileSync(join(root, "src", `f${i}.txt`), `file ${i}\n`);
    writeFileSync(join(root, ".gitignore"), "*.log\nbuild/\n");
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root, stdio: "ignore" });
    git("init", "-q");
    nextSecond(); // the files' ctimes in an earlier second than the index's mtime: git's answer is used for them
    git("add", ".");
    git("commit", "-qm", "init");
    const withGit = new WorkspaceFingerprint(root);
    const scan = new WorkspaceFingerprint(root, { git: false });
    const step = (what: string, change: () => void, expected: boolean) => {
      change();
      assert.deepEqual([withGit.changed(), scan.changed()], [expected, expected], what);
      assert.equal(withGit.take(), scan.take(), what);
    };
    step("first look", () => {}, false);
    step("nothing", () => {}, false);
    step("append to a tracked file", () => writeFileSync(join(root, "src/f1.txt"), "file 1\nmore\n"), true);
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(root, "src/f2.txt"), old, old);
    step("touch back in time only", () => {}, false);
    step("same size, mtime put back", () => {
      writeFileSync(join(root, "src/f2.txt"), "FILE 2\n");
      utimesSync(join(root, "src/f2.txt"), old, old);
    }, true);
    step("an assume-unchanged file changed", () => {
      git("update-index", "--assume-unchanged", "src/f3.txt");
      writeFileSync(join(root, "src/f3.txt"), "file 3 changed\n");
    }, true);
    step("an ignored file the run wrote", () => {
      mkdirSync(join(root, "build"));
      writeFileSync(join(root, "build/out.log"), "log\n");
    }, true);
    step("an untracked file", () => writeFileSync(join(root, "src/new.txt"), "new\n"), true);
    step("a tracked file removed", () => rmSync(join(root, "src/f4.txt")), true);
    step("chmod +x", () => execFileSync("chmod", ["+x", join(root, "src/f5.txt")]), true);
    step("an empty folder", () => mkdirSync(join(root, "src/empty")), true);
    step("touched, same content", () => execFileSync("touch", [join(root, "src/f6.txt")]), false);
    step("a commit: only .git changes", () => git("commit", "-qam", "next"), false);
    nextSecond();
    step("after the commit, a tracked file changed", () => writeFileSync(join(root, "src/f7.txt"), "seven\n"), true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("git asked about a workspace runs none of the workspace's fsmonitor, filters or hooks", () => {
  const root = mkdtempSync(join(tmpdir(), "loom-fingerprint-hostile-"));
  const marker = join(root, "..", `${root.split("/").at(-1)}-ran`);
  try {
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root, stdio: "ignore" });
    writeFileSync(join(root, "a.txt"), "a\n");
    writeFileSync(join(root, ".gitattributes"), "* filter=evil\n");
    git("init", "-q");
    git("add", ".");
    git("commit", "-qm", "init");
    for (
      const [name, value] of [
        ["core.fsmonitor", `touch ${marker}`],
        ["filter.evil.clean", `sh -c 'touch ${marker}; cat'`],
        ["filter.evil.process", `sh -c 'touch ${marker}'`],
        ["core.hooksPath", root],
      ]
    ) git("config", name as string, value as string);
    writeFileSync(join(root, "post-index-change"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    const fingerprint = new WorkspaceFingerprint(root);
    fingerprint.changed();
    writeFileSync(join(root, "a.txt"), "b\n");
    assert.equal(fingerprint.changed(), true);
    assert.equal(existsSync(marker), false, "a program the workspace's git config names ran");
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(marker, { force: true });
  }
});
