// What the agent did, in every report (issue 36): each step's action, target, status, revision, test result and lines
// added/removed (step-executed, the report's step_log), the files changed against the starting revision (the
// report's changes), and `--diff FILE`: a git-style patch from Loom's own snapshot that real `git apply` takes on a
// fresh copy of the starting workspace.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { main } from "../main.ts";
import { lineCounts, unifiedDiff } from "../lib/text/unified-diff.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { anthropicAnswer, startAnthropicServer } from "./helpers/fake-provider-servers.ts";

const hasGit = spawnSync("git", ["--version"]).status === 0;
if (!hasGit) console.log("run-changes.test.ts: skipping the git apply checks: git is not installed");

/** Applies `patch` with real git in `dir` (not a repository: git apply works as patch does). */
function gitApply(dir: string, patch: string): { status: number | null; stderr: string } {
  const file = join(dir, "..", `${Math.random().toString(36).slice(2)}.patch`);
  writeFileSync(file, patch);
  const r = spawnSync("git", ["apply", "--whitespace=nowarn", file], { cwd: dir, encoding: "utf8" });
  rmSync(file, { force: true });
  return { status: r.status, stderr: r.stderr };
}

const lineArb = fc.constantFrom("a", "b", "c", "d", "", "  x", "é", "tab\t");
const textArb = fc.tuple(fc.array(lineArb, { maxLength: 30 }), fc.boolean()).map(([lines, newline]) =>
  lines.length === 0 ? "" : lines.join("\n") + (newline ? "\n" : "")
);

test("lineCounts counts what changed, not what stayed", () => {
  assert.deepEqual(lineCounts("a\nb\nc\n", "a\nc\nd\n"), { added: 1, removed: 1 });
  assert.deepEqual(lineCounts(null, "x\ny\n"), { added: 2, removed: 0 });
  assert.deepEqual(lineCounts("x\ny", null), { added: 0, removed: 2 });
  assert.deepEqual(lineCounts("same\n", "same\n"), { added: 0, removed: 0 });
});

test(
  "git apply takes every patch unifiedDiff writes and gives back the new files (property)",
  { skip: !hasGit },
  () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.option(textArb, { nil: null }), fc.option(textArb, { nil: null }), fc.boolean()), {
          minLength: 1,
          maxLength: 4,
        }),
        (pairs) => {
          const root = mkdtempSync(join(tmpdir(), "loom-diff-prop-"));
          try {
            const dir = join(root, "ws");
            mkdirSync(dir);
            const files = pairs.map(([before, after, executable], i) => ({
              path: i % 3 === 2 ? `ü \"q\"${i}.txt` : i % 2 ? `sub dir/f${i}.txt` : `f${i}.txt`,
              before,
              after,
              executableBefore: false,
              executableAfter: executable && after !== null,
            }));
            for (const f of files) {
              if (f.before === null) continue;
              mkdirSync(join(dir, f.path, ".."), { recursive: true });
              writeFileSync(join(dir, f.path), f.before);
            }
            const patch = unifiedDiff(files);
            if (patch === "") return;
            const r = gitApply(dir, patch);
            assert.equal(r.status, 0, `${r.stderr}\n${patch}`);
            for (const f of files) {
              if (f.after === null) assert.throws(() => statSync(join(dir, f.path)));
              else assert.equal(readFileSync(join(dir, f.path), "utf8"), f.after, patch);
            }
          } finally {
            rmSync(root, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 40 },
    );
  },
);

// ---- a run through the CLI, from the project folder ----

const START = {
  "src/slug.mjs": "export function slug(s) {\n  return s.toLowerCase();\n}\n",
  "test.mjs": "import { slug } from './src/slug.mjs';\nprocess.exit(slug('A B') === 'a-b' ? 0 : 1);\n",
  "notes.txt": "one\ntwo\nthree\n",
  "old.txt": "to be removed\n",
};

const EDIT = {
  path: "src/slug.mjs",
  old_text: "  return s.toLowerCase();\n",
  new_text: "  return s.toLowerCase().split(' ').join('-');\n",
};

test("a run's steps and changes reach step-executed, the report and the text; --diff applies with git on the start", async (t) => {
  const root = mkdtempSync(join(tmpdir(), "loom-changes-"));
  const ws = join(root, "ws");
  for (const [path, text] of Object.entries(START)) {
    mkdirSync(join(ws, path, ".."), { recursive: true });
    writeFileSync(join(ws, path), text);
  }
  const start = join(root, "start");
  cpSync(ws, start, { recursive: true });
  const answers = [
    { action: "edit_file", reason: "fix" },
    EDIT,
    { action: "write_file", reason: "doc" },
    { path: "docs/CHANGES.md", content: "slug joins words with '-'\n" },
    { action: "run_command", reason: "tidy" },
    { argv: ["rm", "old.txt"] },
    { action: "run_tests", reason: "check" },
    { action: "finish" },
    { status: "success", summary: "Fixed." },
  ];
  const server = await startAnthropicServer((_r, i) => anthropicAnswer(answers[Math.min(i, answers.length - 1)]));
  t.after(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });
  const env = { ANTHROPIC_API_KEY: "sk-ant-changes-0123456789", ANTHROPIC_BASE_URL: server.baseUrl };
  const { io, out } = fakeIo({ cwd: ws, env });
  const code = await main([
    "run",
    "Make slug join words with a hyphen",
    "--model",
    "anthropic/claude-test",
    "--test-command",
    "node test.mjs",
    "--allow-command",
    "rm",
    "--context-report",
    "report.json",
    "--diff",
    "changes.diff",
    "--record",
    "report.jsonl",
    "--trace",
    "report.trace.jsonl",
    "--output-format",
    "stream-json",
    "--quiet",
  ], io);
  assert.equal(code, 0, out.stderr);
  const events = out.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const steps = events.filter((e) => e.type === "step-executed");
  assert.deepEqual(
    steps.map((s) => [s.action, s.target, s.status, s.revision, s.lines_added, s.lines_removed]),
    [
      ["edit_file", "src/slug.mjs", "ok", "r1", 1, 1],
      ["write_file", "docs/CHANGES.md", "ok", "r2", 1, 0],
      ["run_command", "rm old.txt", "ok", "r3", 0, 1],
      ["run_tests", null, "ok", "r3", 0, 0],
      ["finish", null, "ok", "r3", 0, 0],
    ],
  );
  const report = JSON.parse(readFileSync(join(ws, "report.json"), "utf8"));
  assert.deepEqual(report.step_log.map((s: { action: string; exit_code: number | null }) => [s.action, s.exit_code]), [
    ["edit_file", null],
    ["write_file", null],
    ["run_command", 0],
    ["run_tests", 0],
    ["finish", null],
  ]);
  assert.deepEqual(report.changes, {
    files: [
      { path: "docs/CHANGES.md", change: "added", lines_added: 1, lines_removed: 0 },
      { path: "old.txt", change: "deleted", lines_added: 0, lines_removed: 1 },
      { path: "src/slug.mjs", change: "modified", lines_added: 1, lines_removed: 1 },
    ],
    lines_added: 2,
    lines_removed: 2,
  });
  assert.equal(report.verified, true, "Loom's own report and diff in the workspace are not the agent's changes");
  // Never contents: the report names paths, never the text written.
  assert.ok(!JSON.stringify(report).includes("joins words"));

  const patch = readFileSync(join(ws, "changes.diff"), "utf8");
  assert.match(patch, /^diff --git a\/docs\/CHANGES\.md b\/docs\/CHANGES\.md\nnew file mode 100644\n/);
  if (hasGit) {
    const r = gitApply(start, patch);
    assert.equal(r.status, 0, r.stderr);
    for (const path of ["src/slug.mjs", "docs/CHANGES.md"]) {
      assert.equal(readFileSync(join(start, path), "utf8"), readFileSync(join(ws, path), "utf8"), path);
    }
    assert.throws(() => statSync(join(start, "old.txt")), "the deleted file is deleted");
    assert.equal(readFileSync(join(start, "notes.txt"), "utf8"), START["notes.txt"]);
  }

  // The recording keeps what the report shows: a replay (no workspace) has the same step lines and changed files.
  {
    const { io: pio, out: pout } = fakeIo({ cwd: root });
    assert.equal(
      await main(["replay", join(ws, "report.jsonl"), "--context-report", "replay.json", "--quiet"], pio),
      0,
      pout.stderr,
    );
    const replayed = JSON.parse(readFileSync(join(root, "replay.json"), "utf8"));
    assert.deepEqual(replayed.changes, report.changes);
    assert.deepEqual(replayed.step_log, report.step_log);
  }

  // loom report: a step table and the changed files in text; in HTML the facts first, a timeline, a transcript.
  const loomReport = async (args: string[]) => {
    const { io: rio, out: rout } = fakeIo({ cwd: ws });
    const status = await main(["report", "report.json", ...args], rio);
    assert.equal(status, 0, rout.stderr);
    return rout.stdout;
  };
  const text = await loomReport([]);
  assert.match(text, /^step +action +target +status +exit +rev +\+ +-$/m);
  assert.match(text, /^ +1 +edit_file +src\/slug\.mjs +ok +r1 +\+1 +-1$/m);
  assert.match(text, /^ +4 +run_tests +ok +0 +r3 +\+0 +-0$/m);
  assert.match(text, /^changed files: 3 \(\+2 -2 lines\)$/m);
  assert.match(text, /^ +deleted +old\.txt +\+0 +-1$/m);
  await loomReport(["--html", "page.html"]);
  const page = readFileSync(join(ws, "page.html"), "utf8");
  const at = (what: string) => {
    const i = page.indexOf(what);
    assert.ok(i >= 0, what);
    return i;
  };
  assert.ok(at(">verified<") < at('id="changes"') && at('id="changes"') < at('id="steps"'), "facts, files, steps");
  assert.ok(at('id="steps"') < at('id="transcript"'), "the transcript (found beside the report) after the steps");
  assert.ok(at("Content is left out") > 0);
  assert.ok(!page.includes("joins words") && !page.includes("Make slug join"), "no content without --show-content");
  await loomReport([
    "--html",
    "content.html",
    "--show-content",
    "--transcript",
    "report.jsonl",
    "--transcript",
    "report.trace.jsonl",
  ]);
  const content = readFileSync(join(ws, "content.html"), "utf8");
  assert.ok(content.includes("Content is shown (--show-content)"));
  assert.ok(content.includes("joins words") && content.includes("Make slug join words"), "answers and the intent");
});
