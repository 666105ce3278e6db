// Attacks on what runs later (issue 42): a command making the workspace root a bare repository, a `.git` under a name
// that is not UTF-8, the model writing Loom's own configuration (`.loom/`) or its own output files of the run. Run with
// and without bubblewrap (LOOM_BWRAP=/nonexistent): the git guard works the same either way.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { createWorkspaceExecutor } from "../lib/workspace/create-workspace-executor.ts";
import { startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { parseRecording } from "../lib/recording/recording.ts";
import { traceWriter } from "../commands/trace-file.ts";
import { ExecutionReport } from "../lib/vocabulary/reports.ts";
import { ResultStore } from "../lib/context/store.ts";
import { isLoomPath } from "../lib/workspace/git-guard.ts";
import { type Arena, attackSlice, makeArena, recordingOf } from "./helpers/attacks.ts";

const AUTO = attackSlice({ sandbox: { mode: "auto" } });

/** The real executor for a slice, as `loom run` builds it (sandboxed where bubblewrap is found). */
function executorFor(arena: Arena, { ownFiles = [] }: { ownFiles?: string[] } = {}) {
  const store = new ResultStore();
  const executor = createWorkspaceExecutor({ ...AUTO, workspace: arena.workspace }, store, {
    root: arena.workspace,
    secretEnvNames: [],
    env: { PATH: process.env.PATH },
    settingsEnv: process.env, // LOOM_BWRAP=/nonexistent runs the file as a machine without bubblewrap
    warn: () => {},
    ownFiles,
  });
  let step = 0;
  const run = async (action: string, args: Record<string, unknown>) =>
    ExecutionReport.parse(await executor.execute(action as never, args, { step: ++step }));
  const sh = (script: string) => run("run_command", { argv: ["sh", "-c", script] });
  return { run, sh, executor };
}

const code = (report: ExecutionReport) => report.kind === "refusal" ? report.code : report.kind;

/** git as the user runs it next, in `folder` of the workspace (a shell `cd`, so any name of bytes works). */
function git(arena: Arena, folder: string, args: string[]) {
  const home = join(arena.dir, "home");
  mkdirSync(home, { recursive: true });
  const env = { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: "1", GIT_CEILING_DIRECTORIES: arena.dir };
  return spawnSync("sh", ["-c", `cd "$(printf "${folder}")" && exec git "$@"`, "sh", ...args], {
    cwd: arena.workspace,
    env,
    encoding: "utf8",
    timeout: 600_000,
  });
}

/** The pager the user's git would run in `folder` (from whatever config it finds there), or "" for none. */
const pagerSeen = (arena: Arena, folder = ".") => git(arena, folder, ["config", "--get", "core.pager"]).stdout.trim();

test("a command making the workspace root a bare repository: undone, git_planted, the user's git finds no config", {
  timeout: 600_000,
}, async (t) => {
  const arena = makeArena({ "src/a.js": "1\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const { sh, run } = executorFor(arena);
  const plants = [
    "git init -q --bare . && git config core.pager 'touch pwned; cat'",
    "mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD && printf '[core]\\n\\tpager = touch pwned\\n' > config",
    "echo 'ref: refs/heads/main' > HEAD && echo . > commondir && printf '[core]\\n\\tpager = x\\n' > config",
  ];
  for (const script of plants) {
    assert.equal(code(await sh(script)), "git_planted", script);
    for (const name of ["HEAD", "objects", "refs", "commondir"]) {
      assert.equal(lstatSync(join(arena.workspace, name), { throwIfNoEntry: false }), undefined, `${name}: ${script}`);
    }
    for (const folder of [".", "src"]) assert.equal(pagerSeen(arena, folder), "", `git in ${folder} read the config`);
    assert.notEqual(git(arena, ".", ["rev-parse", "--git-dir"]).status, 0, "git takes the workspace for a repository");
  }
  assert.equal(code(await run("edit_file", { path: "src/a.js", old_text: "1", new_text: "2" })), "edit");
  assert.equal(code(await sh("true")), "command", "nothing left to undo: an ordinary command");
});

test("a workspace that is a repository, or holds HEAD and objects/ of its own: kept; only what a command adds goes", {
  timeout: 600_000,
}, async (t) => {
  const arena = makeArena({ "HEAD": "a file of the project\n", "objects/o.txt": "o\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  execFileSync("git", ["init", "-q"], { cwd: arena.workspace, env: { PATH: process.env.PATH, HOME: arena.dir } });
  const { sh } = executorFor(arena);
  assert.equal(code(await sh("echo x > new.txt && git status --porcelain >/dev/null")), "command");
  assert.equal(code(await sh("mkdir refs")), "git_planted");
  assert.equal(existsSync(join(arena.workspace, "refs")), false, "refs/ made the root a repository: removed");
  assert.equal(readFileSync(join(arena.workspace, "HEAD"), "utf8"), "a file of the project\n");
  assert.ok(existsSync(join(arena.workspace, "objects/o.txt")) && existsSync(join(arena.workspace, ".git/HEAD")));
  assert.equal(git(arena, ".", ["status", "--porcelain"]).status, 0, "the workspace's own repository still works");
});

test("a bare repository as the workspace: a command cannot change its config or hooks", {
  timeout: 600_000,
}, async (t) => {
  const arena = makeArena();
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  execFileSync("git", ["init", "-q", "--bare", "."], {
    cwd: arena.workspace,
    env: { PATH: process.env.PATH, HOME: arena.dir },
  });
  const before = readFileSync(join(arena.workspace, "config"), "utf8");
  const { sh } = executorFor(arena);
  assert.equal(code(await sh("printf '[core]\\n\\tpager = x\\n' >> config")), "git_planted");
  assert.equal(code(await sh("echo 'touch pwned' > hooks/pre-receive")), "git_planted");
  assert.equal(readFileSync(join(arena.workspace, "config"), "utf8"), before);
  assert.equal(existsSync(join(arena.workspace, "hooks/pre-receive")), false);
});

/** Whether this runtime reaches a name that is not UTF-8 (Bun does; Deno reads names as text, U+FFFD for a byte). */
function reachesByteNames(arena: Arena): boolean {
  execFileSync("sh", ["-c", "mkdir \"$(printf 'probe\\377')\""], { cwd: arena.dir });
  const path = Buffer.concat([Buffer.from(`${arena.dir}/probe`), Buffer.from([0xff])]);
  try {
    return lstatSync(path as unknown as string).isDirectory();
  } catch {
    return false;
  }
}

test("a .git under a folder whose name is not UTF-8: found, git_planted, removed (where the runtime reaches it)", {
  timeout: 600_000,
}, async (t) => {
  const arena = makeArena({ "a.txt": "a\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const reachable = reachesByteNames(arena);
  const { sh } = executorFor(arena);
  const planted = [
    `d="$(printf 'sub\\377')"; mkdir -p "$d/.git/objects" "$d/.git/refs" && echo 'ref: refs/heads/main' > "$d/.git/HEAD" ` +
    `&& printf '[core]\\n\\tpager = touch pwned\\n' > "$d/.git/config"`,
    `d="$(printf 'a\\377/b\\376')"; mkdir -p "$d/objects" "$d/refs" && echo 'ref: refs/heads/main' > "$d/HEAD" ` +
    `&& printf '[core]\\n\\tpager = touch pwned\\n' > "$d/config"`,
  ];
  for (const script of planted) {
    const report = await sh(script);
    assert.equal(code(report), "git_planted", script);
    assert.ok(report.kind === "refusal" && report.reason.includes("\ufffd"), "the name is shown, its bytes escaped");
  }
  if (!reachable) {
    process.stderr.write("attacks-guard: this runtime cannot reach names that are not UTF-8: reported, not removed\n");
    return;
  }
  assert.equal(pagerSeen(arena, "sub\\377"), "", "git in sub\\377 read the planted config");
  assert.equal(pagerSeen(arena, "a\\377/b\\376"), "", "git in a\\377/b\\376 read the planted config");
  assert.equal(code(await sh("true")), "command", "nothing left to undo");
});

test("isLoomPath: .loom at any depth, in the spellings a file system folds; never another name", async () => {
  const fc = (await import("fast-check")).default;
  const segment = fc.stringMatching(/^[a-z0-9_-]{1,8}$/);
  const loom = fc.tuple(fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), fc.constantFrom("", ".", " "))
    .map(([upper, tail]) => `.${[..."loom"].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join("")}${tail}`);
  fc.assert(
    fc.property(fc.array(segment, { maxLength: 4 }), loom, fc.array(segment, { maxLength: 3 }), (a, l, b) => {
      return isLoomPath([...a, l, ...b].join("/"));
    }),
  );
  fc.assert(fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (parts) => !isLoomPath(parts.join("/"))));
  for (const name of ["loom/config.jsonc", ".loomrc", "a.loom/x", ".looms/config.jsonc"]) {
    assert.equal(isLoomPath(name), false, name);
  }
});

test("write_file and edit_file refuse .loom at any depth (loom_file); a command's .loom is removed or put back", {
  timeout: 600_000,
}, async (t) => {
  const arena = makeArena({ "pkg/.loom/config.jsonc": '{ "max_steps": 7 }\n', "a.txt": "a\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const { run, sh } = executorFor(arena);
  const config = '{ "provider_deadline_ms": 1 }\n';
  for (const path of [".loom/config.jsonc", "sub/.loom/config.jsonc", ".LOOM/config.jsonc", ".loom./config.jsonc"]) {
    assert.equal(code(await run("write_file", { path, content: config })), "loom_file", path);
  }
  const edit = await run("edit_file", { path: "pkg/.loom/config.jsonc", old_text: "7", new_text: "1" });
  assert.equal(code(edit), "loom_file");
  assert.equal(existsSync(join(arena.workspace, ".loom")), false);
  assert.equal(existsSync(join(arena.workspace, "sub/.loom")), false);
  assert.equal(code(await sh("mkdir -p .loom && echo '{}' > .loom/config.jsonc")), "loom_file_planted");
  assert.equal(code(await sh("mkdir -p deep/er/.loom && echo '{}' > deep/er/.loom/config.jsonc")), "loom_file_planted");
  assert.equal(code(await sh("echo '{}' > pkg/.loom/config.jsonc")), "loom_file_planted");
  assert.equal(existsSync(join(arena.workspace, ".loom")), false);
  assert.equal(existsSync(join(arena.workspace, "deep/er/.loom")), false);
  assert.equal(readFileSync(join(arena.workspace, "pkg/.loom/config.jsonc"), "utf8"), '{ "max_steps": 7 }\n');
  assert.equal(code(await run("write_file", { path: "loom/config.jsonc", content: "{}\n" })), "edit");
  assert.equal(code(await sh("true")), "command");
});

const FORGED = '{"forged":true}\n';

test("the model's write_file to the run's own --record, --trace, --context-report and --diff: refused, Loom's kept", {
  timeout: 600_000,
}, async (t) => {
  const arena = makeArena({ "a.txt": "a\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const ws = (name: string) => join(arena.workspace, name);
  const names = ["rec.jsonl", "trace.jsonl", "report.json", "run.diff"];
  const steps = names.map((path) => ({ action: "write_file", args: { path, content: FORGED } }));
  const recording = parseRecording(recordingOf(AUTO, steps));
  const refusals: string[] = [];
  const plan = libraryPlan({
    record: ws("rec.jsonl"),
    trace: ws("trace.jsonl"),
    contextReport: ws("report.json"),
    diff: ws("run.diff"),
  });
  const result = await startRun({ request: { ...recording.header.slice, workspace: arena.workspace } }, plan, {
    replay: { recording, execute: true },
    trace: traceWriter(ws("trace.jsonl"), { shown: "trace.jsonl" }),
    warn: () => {},
    onEvent: (event) => {
      if (event.type === "step-executed" && event.refusal !== null) refusals.push(event.refusal);
    },
  });
  assert.equal(result.steps, names.length + 1);
  assert.deepEqual(refusals, names.map(() => "loom_file"));
  for (const name of names) assert.notEqual(readFileSync(ws(name), "utf8"), FORGED, `${name} was forged`);
  assert.equal(JSON.parse(readFileSync(ws("report.json"), "utf8")).steps, names.length + 1);
  assert.equal(JSON.parse(readFileSync(ws("rec.jsonl"), "utf8").split("\n")[0] ?? "").format, "loom-recording");
});

test("a command truncating, overwriting or replacing --record and --trace in the workspace: Loom's own lines win", {
  timeout: 600_000,
}, async (t) => {
  const arena = makeArena({ "a.txt": "a\n" });
  t.after(() => rmSync(arena.dir, { recursive: true, force: true }));
  const ws = (name: string) => join(arena.workspace, name);
  const scripts = [
    `printf '${FORGED}' > rec.jsonl; printf '${FORGED}' > trace.jsonl`,
    `rm rec.jsonl trace.jsonl; printf '${FORGED}' > rec.jsonl; printf '${FORGED}' > trace.jsonl`,
    "ln -sf a.txt rec.jsonl; : > trace.jsonl",
  ];
  for (const script of scripts) {
    const steps = [{ action: "run_command", args: { argv: ["sh", "-c", script] } }];
    const recording = parseRecording(recordingOf(AUTO, steps));
    const plan = libraryPlan({ record: ws("rec.jsonl"), trace: ws("trace.jsonl") });
    await startRun({ request: { ...recording.header.slice, workspace: arena.workspace } }, plan, {
      replay: { recording, execute: true },
      trace: traceWriter(ws("trace.jsonl"), { shown: "trace.jsonl" }),
      warn: () => {},
    });
    const lines = readFileSync(ws("rec.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    assert.equal(lines[0].format, "loom-recording", script);
    assert.equal(lines.at(-1).type, "changes", `${script}: the recording is whole, to its last line`);
    assert.equal(readFileSync(ws("a.txt"), "utf8"), "a\n", "nothing written through the link");
    const trace = readFileSync(ws("trace.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    assert.ok(trace.length === 4 && trace.every((line) => line.trace_version === 1), `${script}: the trace is Loom's`);
  }
});
