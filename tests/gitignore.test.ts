// list_files and search follow .gitignore (nested files, negations, .git/info/exclude) unless asked to include ignored
// files; the matcher follows git's rules, checked here against git itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isIgnored, parseIgnore } from "../lib/text/ignore-rules.ts";
import { WorkspaceExecutor } from "../lib/workspace/workspace-executor.ts";
import { ExecutionReport } from "../lib/vocabulary/reports.ts";
import { ResultStore } from "../lib/context/store.ts";

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "loom-gitignore-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const PROJECT = {
  ".gitignore": "dist/\n*.log\n!keep.log\n/build\nnode_modules/\n**/tmp/**\ndocs/*.html\n",
  ".git/info/exclude": "secret-notes.md\n",
  "src/a.ts": "needle\n",
  "src/b.log": "needle\n",
  "src/keep.log": "needle\n",
  "src/build/x.ts": "needle\n",
  "build/out.js": "needle\n",
  "dist/bundle.js": "needle\n",
  "node_modules/pkg/index.js": "needle\n",
  "lib/.gitignore": "generated.ts\n!important.log\n",
  "lib/generated.ts": "needle\n",
  "lib/important.log": "needle\n",
  "lib/real.ts": "needle\n",
  "lib/tmp/a/b.txt": "needle\n",
  "docs/index.html": "needle\n",
  "docs/sub/page.html": "needle\n",
  "secret-notes.md": "needle\n",
  "README.md": "needle\n",
};

function executor(root: string) {
  const store = new ResultStore();
  const ex = new WorkspaceExecutor({
    root,
    store,
    test: { command: ["true"], timeout_ms: 10_000 },
    commands: [],
    commandTimeoutMs: 10_000,
  });
  let step = 0;
  const run = async (action: string, args: Record<string, unknown>) => {
    const report = ExecutionReport.parse(await ex.execute(action as never, args, { step: ++step }));
    const text = "result" in report && typeof report.result === "string" ? store.get(report.result) ?? "" : "";
    return text.trim().split("\n").filter((line) => line !== "");
  };
  return run;
}

test("list_files leaves out what .gitignore, nested .gitignore files and .git/info/exclude exclude", async () => {
  const root = tree(PROJECT);
  try {
    const run = executor(root);
    const visible = [
      ".gitignore",
      "README.md",
      "docs/sub/page.html",
      "lib/.gitignore",
      "lib/important.log",
      "lib/real.ts",
      "src/a.ts",
      "src/build/x.ts",
      "src/keep.log",
    ];
    assert.deepEqual(await run("list_files", { path: "." }), visible);
    // git agrees on every file (git is run here by the test, on a tree it made).
    execFileSync("git", ["init", "-q"], { cwd: root });
    const gitListed = execFileSync("git", ["ls-files", "--others", "--exclude-standard"], {
      cwd: root,
      encoding: "utf8",
    })
      .trim().split("\n").sort();
    assert.deepEqual(gitListed, visible);
    const all = await run("list_files", { path: ".", include_ignored: true });
    assert.equal(all.length, Object.keys(PROJECT).length - 1, "everything but .git/");
    assert.deepEqual(await run("list_files", { path: "lib" }), ["lib/.gitignore", "lib/important.log", "lib/real.ts"]);
    const hits = await run("search", { query: "needle", path: "." });
    assert.deepEqual(hits.map((line) => line.split(":")[0]), visible.filter((f) => !f.endsWith(".gitignore")));
    const everywhere = await run("search", { query: "needle", path: ".", include_ignored: true });
    assert.ok(everywhere.some((line) => line.startsWith("node_modules/pkg/index.js:")));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the matcher agrees with git check-ignore on patterns of every kind", () => {
  const patterns = "*.o\n!keep.o\n/root-only\ndir/\na/**/z\n**/deep\nx?y\n[ab]c\n\\#hash\ntrailing\\ \n# comment\n";
  const paths = [
    "m.o",
    "sub/m.o",
    "keep.o",
    "root-only",
    "sub/root-only",
    "dir",
    "sub/dir",
    "a/z",
    "a/b/c/z",
    "b/a/z",
    "deep",
    "p/q/deep",
    "xzy",
    "xy",
    "ac",
    "cc",
    "#hash",
    "trailing ",
  ];
  const root = tree({ ".gitignore": patterns });
  try {
    execFileSync("git", ["init", "-q"], { cwd: root });
    const rules = [{ base: "", rules: parseIgnore(patterns) }];
    for (const path of paths) {
      const isDir = path.endsWith("dir");
      if (isDir) mkdirSync(join(root, path), { recursive: true });
      else {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), "");
      }
      let git = false;
      try {
        execFileSync("git", ["check-ignore", "-q", "--no-index", path], { cwd: root });
        git = true;
      } catch { /* exit 1: not ignored */ }
      assert.equal(isIgnored(rules, path, isDir), git, path);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test(
  "list_files and search on a tree 30,000 folders deep end without a stack overflow",
  { timeout: 600_000 },
  async () => {
    const root = mkdtempSync(join(tmpdir(), "loom-deep-"));
    try {
      execFileSync("python3", [
        "-c",
        `import os\nos.chdir(${
          JSON.stringify(root)
        })\nfor _ in range(30000):\n  os.mkdir("d")\n  os.chdir("d")\nopen("f.txt","w").write("needle")`,
      ]);
      const run = executor(root);
      const listed = await run("list_files", { path: "." });
      assert.equal(listed.length, 1);
      assert.equal(listed[0], `${"d/".repeat(30_000)}f.txt`);
      // The file is too deep to be named by a path, so search skips it; what matters is that it ends.
      assert.deepEqual(await run("search", { query: "needle", path: "." }), []);
    } finally {
      removeDeep(root);
    }
  },
);

/** Removes a very deep chain of "d" folders without recursion (rmSync and shutil.rmtree both recurse). */
function removeDeep(root: string): void {
  execFileSync("python3", [
    "-c",
    `import os, shutil\nos.chdir(${
      JSON.stringify(root)
    })\ndepth = 0\nwhile os.path.isdir("d"):\n  os.chdir("d")\n  depth += 1\n` +
    `for f in os.listdir("."):\n  os.remove(f)\nfor _ in range(depth):\n  os.chdir("..")\n  os.rmdir("d")\n` +
    `os.chdir("/")\nshutil.rmtree(${JSON.stringify(root)})`,
  ]);
}
