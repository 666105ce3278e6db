import { test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import type { ActionName } from "../lib/vocabulary/actions.ts";
import { InterruptedError } from "../lib/errors.ts";
import { digestOf } from "../lib/text/digest.ts";
import { ExecutionReport } from "../lib/vocabulary/reports.ts";
import { ResultStore } from "../lib/context/store.ts";
import { outsidePathArgument, resolveInside } from "../lib/workspace/workspace-paths.ts";
import {
  countOccurrences,
  WorkspaceExecutor,
  type WorkspaceExecutorConfig,
} from "../lib/workspace/workspace-executor.ts";
import { MAX_TEXT_FILE_BYTES } from "../lib/workspace/workspace-target.ts";

type Fixture = {
  root: string;
  /** A directory beside the workspace, for symlinks that lead out. */
  outside: string;
  store: ResultStore;
  executor: WorkspaceExecutor;
  /** Executes with step 1 and checks the report against the schema. */
  run: (action: ActionName, args: Record<string, unknown>, signal?: AbortSignal) => Promise<ExecutionReport>;
  text: (digest: string) => string;
};

async function withWorkspace(
  files: Record<string, string>,
  fn: (fx: Fixture) => void | Promise<void>,
  config: Partial<Omit<WorkspaceExecutorConfig, "root" | "store">> & { env?: Record<string, string | undefined> } = {},
): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), "loom-executor-"));
  const root = join(base, "workspace");
  const outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "outside content\n");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  const store = new ResultStore();
  const { env, ...rest } = config;
  const executor = new WorkspaceExecutor(
    {
      root,
      store,
      test: { command: ["sh", "-c", "exit 0"], timeout_ms: 30_000 },
      commands: [],
      commandTimeoutMs: 30_000,
      ...rest,
    },
    env ? { env } : {},
  );
  const run = async (action: ActionName, args: Record<string, unknown>, signal?: AbortSignal) =>
    ExecutionReport.parse(await executor.execute(action, args, { step: 1, signal }));
  const text = (digest: string) => {
    const content = store.get(digest);
    assert.notEqual(content, undefined, `${digest} is in the store`);
    return content!;
  };
  try {
    await fn({ root, outside, store, executor, run, text });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A file of `size` bytes without writing them: sparse, all NUL. */
function sparseFile(path: string, size: number): void {
  writeFileSync(path, "");
  truncateSync(path, size);
}

function assertRefusal(report: ExecutionReport, code: string, reason?: RegExp): void {
  assert.equal(report.kind, "refusal", JSON.stringify(report));
  if (report.kind !== "refusal") return;
  assert.equal(report.code, code, report.reason);
  assert.equal(report.step, 1);
  assert.doesNotMatch(report.reason, /\n/);
  if (reason) assert.match(report.reason, reason);
}

// read_file

test("read_file stores the content and reports a normalised workspace-relative path", async () => {
  await withWorkspace({ "src/a.txt": "héllo\n" }, async ({ run, text }) => {
    const report = await run("read_file", { path: "./src//a.txt" });
    assert.equal(report.kind, "read");
    if (report.kind !== "read") return;
    assert.equal(report.path, "src/a.txt");
    assert.equal(text(report.result), "héllo\n");
  });
});

test("read_file refuses absolute paths, escapes with .., NUL bytes, missing files and directories", async () => {
  await withWorkspace({ "src/a.txt": "a" }, async ({ run, outside }) => {
    assertRefusal(await run("read_file", { path: join(outside, "secret.txt") }), "path_outside_workspace", /absolute/);
    assertRefusal(
      await run("read_file", { path: "../outside/secret.txt" }),
      "path_outside_workspace",
      /"\.\.\/outside\/secret\.txt"/,
    );
    assertRefusal(await run("read_file", { path: "src/../../outside/secret.txt" }), "path_outside_workspace");
    assertRefusal(await run("read_file", { path: "src/a.txt\0.png" }), "invalid_path", /NUL/);
    assertRefusal(await run("read_file", { path: "src/missing.txt" }), "not_found", /"src\/missing\.txt"/);
    assertRefusal(await run("read_file", { path: "src" }), "not_a_file");
  });
});

test("read_file refuses a symlink that leads outside, directly or through a symlinked directory", async () => {
  await withWorkspace({}, async ({ run, root, outside }) => {
    symlinkSync(join(outside, "secret.txt"), join(root, "link.txt"));
    symlinkSync(outside, join(root, "outdir"));
    assertRefusal(await run("read_file", { path: "link.txt" }), "path_outside_workspace", /symlink/);
    assertRefusal(await run("read_file", { path: "outdir/secret.txt" }), "path_outside_workspace", /symlink/);
  });
});

test("read_file follows a symlink that stays inside the workspace", async () => {
  await withWorkspace({ "src/a.txt": "inside" }, async ({ run, root, text }) => {
    symlinkSync("src", join(root, "alias"));
    const report = await run("read_file", { path: "alias/a.txt" });
    assert.equal(report.kind, "read");
    if (report.kind === "read") assert.equal(text(report.result), "inside");
  });
});

test("read_file refuses a file over 16 MiB with too_large, naming its size and the cap", async () => {
  await withWorkspace({}, async ({ run, root, store }) => {
    sparseFile(join(root, "huge.bin"), MAX_TEXT_FILE_BYTES + 1);
    assertRefusal(
      await run("read_file", { path: "huge.bin" }),
      "too_large",
      /"huge\.bin" is 16777217 bytes.*16777216-byte \(16 MiB\)/,
    );
    assert.equal(store.count, 0);
  });
});

test("read_file reads a text file of exactly 16 MiB", async () => {
  await withWorkspace({}, async ({ run, root, text }) => {
    writeFileSync(join(root, "big.txt"), Buffer.alloc(MAX_TEXT_FILE_BYTES, "a"));
    const report = await run("read_file", { path: "big.txt" });
    assert.equal(report.kind, "read");
    if (report.kind === "read") assert.equal(text(report.result).length, MAX_TEXT_FILE_BYTES);
  });
});

test("read_file refuses files with NUL bytes or invalid UTF-8 as not_text, storing nothing", async () => {
  await withWorkspace({}, async ({ run, root, store }) => {
    writeFileSync(join(root, "nul.bin"), new Uint8Array([0x61, 0x00, 0x62]));
    writeFileSync(join(root, "latin1.txt"), new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    writeFileSync(join(root, "cut.txt"), new Uint8Array([0x61, 0xe2, 0x82]));
    assertRefusal(await run("read_file", { path: "nul.bin" }), "not_text", /"nul\.bin".*NUL/);
    assertRefusal(await run("read_file", { path: "latin1.txt" }), "not_text", /"latin1\.txt" is not UTF-8 text/);
    assertRefusal(await run("read_file", { path: "cut.txt" }), "not_text");
    assert.equal(store.count, 0);
  });
});

test("read_file stores a text file's exact bytes, a byte-order mark included, under their digest", async () => {
  await withWorkspace({}, async ({ run, root, text }) => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("h\u00e9llo \u{1f600}\r\n")]);
    writeFileSync(join(root, "bom.txt"), bytes);
    const report = await run("read_file", { path: "bom.txt" });
    assert.equal(report.kind, "read");
    if (report.kind !== "read") return;
    assert.equal(report.result, digestOf(bytes));
    assert.deepEqual(new TextEncoder().encode(text(report.result)), bytes);
  });
});

// list_files

test("list_files lists files recursively, sorted, workspace-relative, without .git and node_modules", async () => {
  const files = {
    "b.txt": "",
    "a/z.ts": "",
    "a/b/c.ts": "",
    ".git/HEAD": "",
    "node_modules/x/i.js": "",
    "a/node_modules/y.js": "",
  };
  await withWorkspace(files, async ({ run, text }) => {
    const all = await run("list_files", { path: "." });
    assert.deepEqual(all.kind === "list" && [all.path, all.count, text(all.result)], [
      ".",
      3,
      "a/b/c.ts\na/z.ts\nb.txt\n",
    ]);
    const sub = await run("list_files", { path: "a/" });
    assert.deepEqual(sub.kind === "list" && [sub.path, sub.count, text(sub.result)], ["a", 2, "a/b/c.ts\na/z.ts\n"]);
  });
});

test("list_files shows at most 2,000 entries and says how many more there are", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 2_003; i++) files[`many/f${String(i).padStart(4, "0")}.txt`] = "";
  await withWorkspace(files, async ({ run, text }) => {
    const report = await run("list_files", { path: "many" });
    assert.equal(report.kind, "list");
    if (report.kind !== "list") return;
    const lines = text(report.result).trimEnd().split("\n");
    assert.equal(report.count, 2_000);
    assert.equal(lines.length, 2_001);
    assert.equal(lines[1_999], "many/f1999.txt");
    assert.match(lines[2_000], /\b3 more files\b/);
  });
});

test("list_files shows a name with a newline, a tab or a leading quote as a JSON string on one line", async () => {
  const files = { "a\nb.txt": "", "plain.txt": "", "tab\there.txt": "", '"quoted.txt': "", "sub/x\u2028y": "" };
  await withWorkspace(files, async ({ run, text }) => {
    const report = await run("list_files", { path: "." });
    assert.equal(report.kind, "list");
    if (report.kind !== "list") return;
    const lines = text(report.result).trimEnd().split("\n");
    assert.deepEqual(lines, ['"\\"quoted.txt"', '"a\\nb.txt"', "plain.txt", '"sub/x\\u2028y"', '"tab\\there.txt"']);
    assert.equal(report.count, 5);
    assert.deepEqual(lines.map((line) => (line.startsWith('"') ? JSON.parse(line) : line)), Object.keys(files).sort());
  });
});

test("list_files refuses a file, a missing directory and a directory outside", async () => {
  await withWorkspace({ "a.txt": "" }, async ({ run, root, outside }) => {
    symlinkSync(outside, join(root, "outdir"));
    assertRefusal(await run("list_files", { path: "a.txt" }), "not_a_directory");
    assertRefusal(await run("list_files", { path: "nope" }), "not_found");
    assertRefusal(await run("list_files", { path: "outdir" }), "path_outside_workspace");
    assertRefusal(await run("list_files", { path: ".." }), "path_outside_workspace");
  });
});

// search

test("search finds literal text as path:line:text and skips binary, large and ignored files", async () => {
  const files = {
    "src/a.ts": "const x = 1;\nfind (me) here\nnot this\nfind (me) twice find (me)\r\n",
    "src/b.txt": "nothing\n",
    "bin.dat": "find (me)\0binary",
    "big.txt": `find (me)\n${"x".repeat(1024 * 1024)}`,
    "node_modules/m.js": "find (me)\n",
    "top.md": "find (me)",
  };
  await withWorkspace(files, async ({ run, text }) => {
    const report = await run("search", { query: "find (me)", path: "." });
    assert.equal(report.kind, "search");
    if (report.kind !== "search") return;
    assert.equal(report.matches, 3);
    assert.equal(
      text(report.result),
      "src/a.ts:2:find (me) here\nsrc/a.ts:4:find (me) twice find (me)\ntop.md:1:find (me)\n",
    );
    const one = await run("search", { query: "me", path: "top.md" });
    assert.deepEqual(one.kind === "search" && [one.path, one.matches, text(one.result)], [
      "top.md",
      1,
      "top.md:1:find (me)\n",
    ]);
  });
});

test("search clips long lines to 300 characters and stops listing after 200 matches", async () => {
  const many = Array.from({ length: 205 }, (_, i) => `hit ${i}`).join("\n");
  await withWorkspace({ "long.txt": `hit ${"y".repeat(1_000)}\n`, "many.txt": many }, async ({ run, text }) => {
    const long = await run("search", { query: "hit", path: "long.txt" });
    const line = long.kind === "search" ? text(long.result).trimEnd() : "";
    assert.equal(line.slice("long.txt:1:".length).length, 300);
    assert.ok(line.endsWith("…"));
    const report = await run("search", { query: "hit", path: "many.txt" });
    assert.equal(report.kind === "search" && report.matches, 205);
    const lines = report.kind === "search" ? text(report.result).trimEnd().split("\n") : [];
    assert.equal(lines.length, 201);
    assert.equal(lines[199], "many.txt:200:hit 199");
    assert.match(lines[200], /\b5 more matches\b/);
  });
});

test("search shows a file name with a newline as a JSON string, keeping one match per line", async () => {
  await withWorkspace({ "dir/x\ny.txt": "a needle\n", "z.txt": "needle too\n" }, async ({ run, text }) => {
    const report = await run("search", { query: "needle", path: "." });
    assert.equal(report.kind === "search" && report.matches, 2);
    assert.equal(report.kind === "search" && text(report.result), '"dir/x\\ny.txt":1:a needle\nz.txt:1:needle too\n');
  });
});

test("search does not follow a symlink out of the workspace", async () => {
  await withWorkspace({ "in.txt": "outside content" }, async ({ run, root, outside, text }) => {
    symlinkSync(join(outside, "secret.txt"), join(root, "leak.txt"));
    const report = await run("search", { query: "outside content", path: "." });
    assert.deepEqual(report.kind === "search" && text(report.result), "in.txt:1:outside content\n");
    assertRefusal(await run("search", { query: "x", path: "leak.txt" }), "path_outside_workspace");
  });
});

// edit_file and write_file

test("edit_file replaces one exact occurrence and advances the revision", async () => {
  await withWorkspace({ "a.js": "let total = price * qty;\n" }, async ({ run, root, executor }) => {
    assert.equal(executor.revision, "r0");
    const report = await run("edit_file", { path: "a.js", old_text: "price * qty", new_text: "price * qty + $& $1" });
    assert.deepEqual(report, { kind: "edit", paths: ["a.js"], revision_before: "r0", revision_after: "r1" });
    assert.equal(readFileSync(join(root, "a.js"), "utf8"), "let total = price * qty + $& $1;\n");
    assert.equal(executor.revision, "r1");
  });
});

test("edit_file refuses absent and ambiguous old text without changing the file or the revision", async () => {
  await withWorkspace({ "a.txt": "x = 1\nx = 1\naaa\n" }, async ({ run, root, executor }) => {
    assertRefusal(
      await run("edit_file", { path: "a.txt", old_text: "y = 2", new_text: "" }),
      "edit_text_not_found",
      /"a\.txt"/,
    );
    assertRefusal(
      await run("edit_file", { path: "a.txt", old_text: "x = 1", new_text: "" }),
      "edit_text_ambiguous",
      /more than once/,
    );
    assertRefusal(
      await run("edit_file", { path: "a.txt", old_text: "aa", new_text: "" }),
      "edit_text_ambiguous",
      /more than once/,
    );
    assertRefusal(await run("edit_file", { path: "b.txt", old_text: "x", new_text: "" }), "not_found");
    assert.equal(readFileSync(join(root, "a.txt"), "utf8"), "x = 1\nx = 1\naaa\n");
    assert.equal(executor.revision, "r0");
  });
});

test("edit_file refuses a file that is not UTF-8 text, keeping its bytes", async () => {
  await withWorkspace({}, async ({ run, root }) => {
    const bytes = new Uint8Array([0x61, 0xff, 0x62]);
    writeFileSync(join(root, "blob"), bytes);
    assertRefusal(await run("edit_file", { path: "blob", old_text: "a", new_text: "c" }), "not_text");
    assert.deepEqual(new Uint8Array(readFileSync(join(root, "blob"))), bytes);
  });
});

test("edit_file refuses files with NUL bytes and files over 16 MiB, like read_file", async () => {
  await withWorkspace({}, async ({ run, root, executor }) => {
    writeFileSync(join(root, "nul.bin"), new Uint8Array([0x61, 0x00, 0x62]));
    sparseFile(join(root, "huge.txt"), MAX_TEXT_FILE_BYTES + 1);
    assertRefusal(await run("edit_file", { path: "nul.bin", old_text: "a", new_text: "c" }), "not_text", /NUL/);
    assertRefusal(
      await run("edit_file", { path: "huge.txt", old_text: "a", new_text: "c" }),
      "too_large",
      /16777217 bytes/,
    );
    assert.deepEqual(new Uint8Array(readFileSync(join(root, "nul.bin"))), new Uint8Array([0x61, 0x00, 0x62]));
    assert.equal(executor.revision, "r0");
  });
});

test("countOccurrences tells none, one and several apart, counting overlaps and stopping at two", () => {
  assert.equal(countOccurrences("abc", "x"), 0);
  assert.equal(countOccurrences("abc", "b"), 1);
  assert.equal(countOccurrences("aaa", "aa"), 2);
  assert.equal(countOccurrences("a".repeat(2 * 1024 * 1024), "a".repeat(1_000)), 2);
  fc.assert(
    fc.property(
      fc.string({ unit: fc.constantFrom("a", "b") }),
      fc.string({ unit: fc.constantFrom("a", "b"), minLength: 1, maxLength: 3 }),
      (text, part) => {
        let naive = 0;
        for (let i = 0; i + part.length <= text.length; i++) if (text.startsWith(part, i)) naive++;
        assert.equal(countOccurrences(text, part), Math.min(naive, 2));
      },
    ),
  );
});

test("edit_file on a 2 MB file of repeated text refuses an ambiguous edit and applies a unique one", async () => {
  const big = `${"a".repeat(2 * 1024 * 1024)}\nend\n`;
  await withWorkspace({ "big.txt": big }, async ({ run, root }) => {
    assertRefusal(
      await run("edit_file", { path: "big.txt", old_text: "a".repeat(1_000), new_text: "" }),
      "edit_text_ambiguous",
    );
    const report = await run("edit_file", { path: "big.txt", old_text: "a\nend", new_text: "a\nEND" });
    assert.equal(report.kind, "edit");
    assert.equal(readFileSync(join(root, "big.txt"), "utf8"), big.replace("end", "END"));
  });
});

test("write_file creates parent directories and each applied write advances the revision", async () => {
  await withWorkspace({}, async ({ run, root, executor }) => {
    assert.deepEqual(await run("write_file", { path: "new/deep/f.txt", content: "one" }), {
      kind: "edit",
      paths: ["new/deep/f.txt"],
      revision_before: "r0",
      revision_after: "r1",
    });
    const second = await run("write_file", { path: "new/deep/f.txt", content: "two" });
    assert.equal(second.kind === "edit" && second.revision_after, "r2");
    assert.equal(readFileSync(join(root, "new/deep/f.txt"), "utf8"), "two");
    assert.equal(executor.revision, "r2");
  });
});

test("write_file refuses paths outside, through a symlinked directory or a dangling symlink, and directories", async () => {
  await withWorkspace({ "dir/keep.txt": "", "file.txt": "" }, async ({ run, root, outside, executor }) => {
    symlinkSync(outside, join(root, "outdir"));
    symlinkSync(join(outside, "created-by-link.txt"), join(root, "dangling.txt"));
    assertRefusal(await run("write_file", { path: "/tmp/x.txt", content: "x" }), "path_outside_workspace");
    assertRefusal(await run("write_file", { path: "../outside/x.txt", content: "x" }), "path_outside_workspace");
    assertRefusal(await run("write_file", { path: "outdir/x.txt", content: "x" }), "path_outside_workspace");
    assertRefusal(await run("write_file", { path: "outdir/sub/x.txt", content: "x" }), "path_outside_workspace");
    assertRefusal(await run("write_file", { path: "dangling.txt", content: "x" }), "path_outside_workspace");
    assertRefusal(await run("write_file", { path: "dir", content: "x" }), "not_a_file");
    assertRefusal(await run("write_file", { path: "file.txt/x.txt", content: "x" }), "not_a_directory");
    assert.equal(existsSync(join(outside, "x.txt")), false);
    assert.equal(existsSync(join(outside, "sub")), false);
    assert.equal(existsSync(join(outside, "created-by-link.txt")), false);
    assert.equal(executor.revision, "r0");
  });
});

// run_tests and run_command

test("run_tests records the revision it tested, its exit status and its output", async () => {
  const test = { command: ["sh", "-c", "cat status.txt; exit $(cat code.txt)"], timeout_ms: 30_000 };
  await withWorkspace({ "status.txt": "failing\n", "code.txt": "1" }, async ({ run, text }) => {
    const before = await run("run_tests", {});
    assert.equal(before.kind, "test");
    if (before.kind !== "test") return;
    assert.deepEqual([before.revision, before.exit_code, before.timed_out, text(before.output)], [
      "r0",
      1,
      false,
      "failing\n",
    ]);
    await run("write_file", { path: "code.txt", content: "0" });
    const after = await run("run_tests", {});
    assert.deepEqual(after.kind === "test" && [after.revision, after.exit_code], ["r1", 0]);
  }, { test });
});

test("run_tests reports a timeout with no exit code", async () => {
  await withWorkspace({}, async ({ run }) => {
    const report = await run("run_tests", {});
    assert.deepEqual(report.kind === "test" && [report.timed_out, report.exit_code], [true, null]);
  }, { test: { command: ["sh", "-c", "sleep 100 & wait"], timeout_ms: 200 } });
});

test("run_tests passes only the allow-list and the slice's named variables to the test process", async () => {
  await withWorkspace({}, async ({ run, text }) => {
    const report = await run("run_tests", {});
    const output = report.kind === "test" ? text(report.output) : "";
    assert.match(output, /^LOOM_VISIBLE=1$/m);
    assert.doesNotMatch(output, /LOOM_TEST_API_KEY|do-not-leak/);
  }, {
    test: { command: ["env"], timeout_ms: 30_000 },
    env: { PATH: process.env.PATH, LOOM_TEST_API_KEY: "do-not-leak", LOOM_VISIBLE: "1", SENTRY_DSN: "do-not-leak" },
    passEnv: ["LOOM_VISIBLE"],
  });
});

test("run_tests and run_command never pass secretEnvNames, even named, nor anything unnamed", async () => {
  const env = {
    PATH: process.env.PATH,
    LOOM_MODEL_ACCESS: "leak-1",
    LLM_CREDS: "leak-2",
    DATABASE_URL: "postgres://app:leak-3@db/app",
    LOOM_VISIBLE: "1",
    GIT_AUTHOR_NAME: "Loom",
  };
  await withWorkspace({}, async ({ run, text }) => {
    const tested = await run("run_tests", {});
    const commanded = await run("run_command", { argv: ["env"] });
    for (const report of [tested, commanded]) {
      const output = report.kind === "test"
        ? text(report.output)
        : report.kind === "command"
        ? text(report.output)
        : "";
      assert.match(output, /^LOOM_VISIBLE=1$/m);
      assert.match(output, /^GIT_AUTHOR_NAME=Loom$/m);
      assert.doesNotMatch(output, /LOOM_MODEL_ACCESS|LLM_CREDS|DATABASE_URL|leak-/);
    }
  }, {
    test: { command: ["env"], timeout_ms: 30_000 },
    commands: [["env"]],
    secretEnvNames: ["LOOM_MODEL_ACCESS"],
    passEnv: ["LOOM_VISIBLE", "GIT_AUTHOR_NAME", "LOOM_MODEL_ACCESS"],
    env,
  });
});

test("an interrupted run_tests rejects with InterruptedError", async () => {
  await withWorkspace({}, async ({ executor }) => {
    const controller = new AbortController();
    const running = executor.execute("run_tests", {}, { step: 1, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(running, InterruptedError);
  }, { test: { command: ["sleep", "100"], timeout_ms: 60_000 } });
});

test("run_command runs only argv that start with an allowed prefix", async () => {
  await withWorkspace({}, async ({ run, text }) => {
    const ok = await run("run_command", { argv: ["echo", "hello", "world"] });
    assert.equal(ok.kind, "command");
    if (ok.kind !== "command") return;
    assert.deepEqual([ok.argv, ok.exit_code, ok.timed_out, text(ok.output)], [
      ["echo", "hello", "world"],
      0,
      false,
      "hello world\n",
    ]);
    assertRefusal(await run("run_command", { argv: ["rm", "-rf", "."] }), "command_not_allowed", /\["rm","-rf","\."\]/);
    assertRefusal(await run("run_command", { argv: ["sh", "-c", "echo hi"] }), "command_not_allowed");
    assertRefusal(await run("run_command", { argv: ["sh"] }), "command_not_allowed");
    assertRefusal(await run("run_command", { argv: ["echoo", "hello"] }), "command_not_allowed");
  }, { commands: [["echo"], ["sh", "-c", "exit 0"]] });
});

test("run_command refuses arguments after the allowed prefix that name paths outside the workspace", async () => {
  await withWorkspace({ "a.txt": "", "sub/b.txt": "" }, async ({ run, text }) => {
    for (
      const arg of [
        "/",
        "/etc/passwd",
        "~",
        "~/.ssh",
        "..",
        "../outside",
        "sub/../..",
        "./../x",
        "..\\x",
        "--file=/etc/passwd",
        "DIR=../x",
      ]
    ) {
      const report = await run("run_command", { argv: ["ls", "sub", arg] });
      assertRefusal(report, "command_not_allowed", /names a path outside the workspace/);
      if (report.kind === "refusal") assert.ok(report.reason.includes(JSON.stringify(arg)), report.reason);
    }
    const listed = await run("run_command", { argv: ["ls", "sub/../sub", "."] });
    assert.equal(listed.kind === "command" && listed.exit_code, 0);
    const echoed = await run("run_command", {
      argv: ["echo", "...", "x..y", "--color=auto", "a/./b/..", "https://example.com/a/../b"],
    });
    assert.equal(
      echoed.kind === "command" && text(echoed.output),
      "... x..y --color=auto a/./b/.. https://example.com/a/../b\n",
    );
    // Text with whitespace may be a script: every word of it is checked too, and one naming outside is refused.
    const script = await run("run_command", { argv: ["echo", "PATH=/usr/bin:$PATH && ls ../x"] });
    assert.equal(script.kind === "refusal" && script.code, "command_not_allowed");
    const inside = await run("run_command", { argv: ["echo", "make test && ls src/x"] });
    assert.equal(inside.kind === "command" && text(inside.output), "make test && ls src/x\n");
  }, { commands: [["ls"], ["echo"]] });
});

test("run_command does not second-guess paths the allowed prefix itself spells out", async () => {
  await withWorkspace({}, async ({ run, text }) => {
    const report = await run("run_command", { argv: ["echo", "/", "x"] });
    assert.equal(report.kind === "command" && text(report.output), "/ x\n");
    assertRefusal(await run("run_command", { argv: ["echo", "x", "/"] }), "command_not_allowed");
    assertRefusal(await run("run_command", { argv: ["echo", "/", "/"] }), "command_not_allowed");
  }, { commands: [["echo"], ["echo", "/"]] });
});

test("outsidePathArgument finds exactly the relative paths that climb above the working directory", () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom("a", ".", "..", ""), { minLength: 1, maxLength: 6 }), (segments) => {
      const arg = segments.join("/");
      let depth = 0;
      let escaped = false;
      for (const segment of segments) {
        if (segment === "..") escaped ||= --depth < 0;
        else if (segment === "a") depth++;
      }
      escaped ||= arg.startsWith("/");
      assert.equal(outsidePathArgument(["ok", arg]), escaped ? arg : undefined, arg);
    }),
  );
});

test("run_command refuses everything when no commands are allowed", async () => {
  await withWorkspace({}, async ({ run }) => {
    assertRefusal(await run("run_command", { argv: ["true"] }), "command_not_allowed", /no commands are allowed/);
  });
});

test("run_command times out with commandTimeoutMs", async () => {
  await withWorkspace({}, async ({ run }) => {
    const report = await run("run_command", { argv: ["sleep", "100"] });
    assert.deepEqual(report.kind === "command" && [report.timed_out, report.exit_code], [true, null]);
  }, { commands: [["sleep"]], commandTimeoutMs: 200 });
});

// print, finish and arguments

test("print stores the text and finish echoes its status", async () => {
  await withWorkspace({}, async ({ run, text }) => {
    const printed = await run("print", { text: "done: 3 files" });
    assert.equal(printed.kind === "print" && text(printed.text), "done: 3 files");
    assert.deepEqual(await run("finish", { status: "success", summary: "Fixed it" }), {
      kind: "finish",
      status: "success",
      summary: "Fixed it",
    });
  });
});

test("invalid arguments and unknown actions are refused, not thrown", async () => {
  await withWorkspace({}, async ({ run }) => {
    assertRefusal(await run("read_file", { path: 3 }), "invalid_arguments", /path/);
    assertRefusal(await run("edit_file", { path: "a", old_text: "", new_text: "" }), "invalid_arguments");
    assertRefusal(await run("run_tests", { extra: true }), "invalid_arguments");
    assertRefusal(await run("delete_everything" as ActionName, {}), "unknown_action");
  });
});

test("a refusal quoting a 100 KB argv or path keeps its reason within 512 UTF-8 bytes, head and tail", async () => {
  await withWorkspace({}, async ({ run }) => {
    const command = await run("run_command", { argv: ["rm", "\u00e9\u{1f600}x".repeat(15_000)] });
    assertRefusal(command, "command_not_allowed");
    if (command.kind === "refusal") {
      assert.ok(utf8Bytes(command.reason) <= 512, `${utf8Bytes(command.reason)} bytes`);
      assert.ok(utf8Bytes(command.reason) >= 500, `${utf8Bytes(command.reason)} bytes`);
      assert.ok(command.reason.startsWith('Command ["rm","\u00e9\u{1f600}x'), command.reason);
      assert.ok(command.reason.endsWith('x"] is not allowed (no commands are allowed)'), command.reason);
      assert.match(command.reason, /…/);
      assert.doesNotMatch(command.reason, /\uFFFD/);
    }
    const path = await run("read_file", { path: `missing/${"p".repeat(100_000)}.txt` });
    assert.equal(path.kind, "refusal");
    if (path.kind === "refusal") assert.ok(utf8Bytes(path.reason) <= 512, `${utf8Bytes(path.reason)} bytes`);
  });
});

test("every refusal reason is at most 512 UTF-8 bytes and a short one is kept whole", async () => {
  await withWorkspace({}, async ({ run }) => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 400, size: "max" }), async (arg) => {
        const report = await run("run_command", { argv: ["rm", arg] });
        assert.equal(report.kind, "refusal");
        if (report.kind !== "refusal") return;
        const full = `Command ${JSON.stringify(["rm", arg])} is not allowed (no commands are allowed)`;
        assert.ok(utf8Bytes(report.reason) <= 512);
        if (utf8Bytes(full) <= 512) assert.equal(report.reason, full);
        else {assert.ok(
            report.reason.startsWith('Command ["rm",') && report.reason.endsWith("(no commands are allowed)"),
          );}
        assert.doesNotMatch(report.reason, LONE_SURROGATE);
      }),
      { numRuns: 200 },
    );
  });
});

// confinement as a property

test("resolveInside accepts exactly the paths that stay inside, lexically and through symlinks", async () => {
  await withWorkspace({ "a/file.txt": "" }, ({ root, outside }) => {
    symlinkSync(outside, join(root, "out"));
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "b", ".", "..", "out"), { minLength: 1, maxLength: 6 }), (segments) => {
        const stack: string[] = [];
        let escaped = false;
        for (const segment of segments) {
          if (segment === "..") {
            if (stack.length === 0) escaped = true;
            else stack.pop();
          } else if (segment !== ".") stack.push(segment);
        }
        const expectInside = !escaped && stack[0] !== "out";
        const resolved = resolveInside(root, segments.join("/"));
        assert.equal(resolved.ok, expectInside, segments.join("/"));
        if (resolved.ok) assert.equal(resolved.relative, stack.length === 0 ? "." : stack.join("/"));
      }),
    );
  });
});
