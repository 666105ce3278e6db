// Issue 42, "the revision cannot be forged or blinded": what a sandboxed command does to the workspace is a new revision,
// listed in the changes and carried by the patch, whatever names it uses, whatever it writes into git's index, and
// whether it makes files or links. Each case runs with bubblewrap (skipped with a line where it is not installed) and
// without it (LOOM_BWRAP=/nonexistent), through the executor `loom run` builds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { Buffer } from "node:buffer";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import fc from "fast-check";
import { createWorkspaceExecutor } from "../lib/workspace/create-workspace-executor.ts";
import { ResultStore } from "../lib/context/store.ts";
import { ExecutionReport } from "../lib/vocabulary/reports.ts";
import { decodeName, encodeName, quotedName } from "../lib/text/file-names.ts";
import { WorkspaceFingerprint } from "../lib/workspace/workspace-fingerprint.ts";
import { WorkspaceSnapshot } from "../lib/workspace/workspace-snapshot.ts";
import { sandboxMissing } from "./helpers/attacks.ts";

const missing = sandboxMissing();
if (missing) console.log(`attacks-revision.test.ts: skipping the cases with bubblewrap: ${missing}`);
/** Deno's file system calls take names as UTF-8 only: a name that is not can be seen there, not read. */
const namesAsBytes = !("Deno" in globalThis);

type Variant = { name: string; env: Record<string, string | undefined>; skip: string | null };
const VARIANTS: Variant[] = [
  { name: "with bubblewrap", env: process.env, skip: missing },
  { name: "without bubblewrap", env: { ...process.env, LOOM_BWRAP: "/nonexistent/bwrap" }, skip: null },
];

type Workspace = {
  root: string;
  /** A copy of the workspace as it was before the first action (what `git apply` of the patch starts from). */
  start: string;
  run: (script: string) => Promise<ExecutionReport>;
  executor: ReturnType<typeof createWorkspaceExecutor>;
};

function git(root: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root, encoding: "utf8" });
}

/** A committed git work tree with `files`, settled (older than its index: git vouches for it), and its executor. */
async function workspace(variant: Variant, files: Record<string, string>): Promise<Workspace & { dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "loom-attack-revision-"));
  const root = join(dir, "ws");
  for (const [path, content] of Object.entries(files)) {
    execFileSync("mkdir", ["-p", join(root, path, "..")]);
    writeFileSync(join(root, path), content);
  }
  git(root, "init", "-q");
  git(root, "add", ".");
  git(root, "commit", "-qm", "start");
  await new Promise((resolve) => setTimeout(resolve, 1_100)); // no entry within git's racy second of the index
  const start = join(dir, "start");
  cpSync(root, start, { recursive: true, verbatimSymlinks: true });
  const executor = createWorkspaceExecutor(
    {
      workspace: root,
      intent: "Attack",
      instructions: "Attack",
      actions: ["run_command", "run_tests", "finish"],
      test: { command: ["sh", "-c", "exit 0"], timeout_ms: 60_000 },
      model: "test/model",
      limits: { max_steps: 100 },
      commands: [["sh", "-c"]],
      sandbox: { mode: "auto" },
    },
    new ResultStore(),
    { root, secretEnvNames: [], settingsEnv: variant.env, warn: () => {} },
  );
  assert.equal(executor.sandboxState.active, variant.skip === null && variant.name === "with bubblewrap");
  let step = 0;
  const run = async (script: string) =>
    ExecutionReport.parse(await executor.execute("run_command", { argv: ["sh", "-c", script] }, { step: ++step }));
  return { dir, root, start, run, executor };
}

function revisions(report: ExecutionReport): [string | undefined, string | undefined] {
  assert.equal(report.kind, "command", JSON.stringify(report));
  return report.kind === "command" ? [report.revision_before, report.revision_after] : [undefined, undefined];
}

/** Applies the run's patch with real git to the copy of the start; the copy then holds what the workspace holds. */
function applyPatch(ws: Workspace): void {
  const file = join(ws.start, "..", "run.patch");
  writeFileSync(file, ws.executor.patch());
  const applied = spawnSync("git", ["apply", "--whitespace=nowarn", file], { cwd: ws.start, encoding: "utf8" });
  assert.equal(applied.status, 0, `git apply: ${applied.stderr}\n${ws.executor.patch()}`);
}

function attack(name: string, fn: (variant: Variant) => Promise<void>) {
  for (const variant of VARIANTS) {
    test(`${name} (${variant.name})`, { timeout: 600_000 }, async (t) => {
      if (variant.skip !== null) {
        process.stderr.write(`attacks-revision.test.ts: skipped, ${variant.skip}: ${name}\n`);
        return t.skip(variant.skip);
      }
      await fn(variant);
    });
  }
}

attack(
  "a command that changes a tracked file and writes the old blob id with the new stat into .git/index: a new revision, listed and diffed",
  async (variant) => {
    const ws = await workspace(variant, { "app.py": "print('one')\n", "other.py": "x = 1\n" });
    try {
      assert.deepEqual(revisions(await ws.run("cat app.py")), [undefined, undefined]); // the baseline
      const old = git(ws.root, "rev-parse", ":app.py").trim();
      // The forger: stage the new content a second after writing it (not racy: the index gets its stat), then put
      // the old blob id back in the entry and the index's checksum right, so `git status` shows nothing. In the
      // sandbox the file's owner reads as another user: the forger writes the one git sees outside (here told; an
      // attacker guesses it).
      const forge = [
        "import hashlib, struct, sys",
        "data = bytearray(open('.git/index', 'rb').read())",
        "at = data.index(b'app.py\\0') - 62",
        "data[at + 28:at + 36] = struct.pack('>II', int(sys.argv[2]), int(sys.argv[3]))",
        "data[at + 40:at + 60] = bytes.fromhex(sys.argv[1])",
        "body = bytes(data[:-20])",
        "open('.git/index', 'wb').write(body + hashlib.sha1(body).digest())",
      ].join("\n");
      const owner = `${process.getuid?.() ?? 0} ${process.getgid?.() ?? 0}`;
      const report = await ws.run(
        `printf "print('two')\\n" > app.py && sleep 1.1 && git add app.py && python3 - ${old} ${owner} <<'EOF'\n${forge}\nEOF`,
      );
      assert.equal(report.kind, "command", JSON.stringify(report));
      // The forgery took: git itself sees nothing.
      assert.equal(git(ws.root, "rev-parse", ":app.py").trim(), old, "the index holds the old blob id");
      assert.equal(git(ws.root, "status", "--porcelain"), "", "git status is clean after the forgery");
      assert.deepEqual(report.kind === "command" && [report.revision_before, report.revision_after], ["r0", "r1"]);
      assert.deepEqual(ws.executor.changes(), [
        { path: "app.py", change: "modified", lines_added: 1, lines_removed: 1 },
      ]);
      assert.match(ws.executor.patch(), /^-print\('one'\)$/m);
      assert.match(ws.executor.patch(), /^\+print\('two'\)$/m);
      // The forged index, kept by the next command, still hides nothing: a second change is a second revision.
      assert.deepEqual(revisions(await ws.run("printf 'x = 2\\n' > other.py")), ["r1", "r2"]);
      applyPatch(ws);
      assert.equal(readFileSync(join(ws.start, "app.py"), "utf8"), "print('two')\n");
      assert.equal(readFileSync(join(ws.start, "other.py"), "utf8"), "x = 2\n");
    } finally {
      rmSync(ws.dir, { recursive: true, force: true });
    }
  },
);

attack(
  "files whose names are not UTF-8 (test_\\377.py, sub\\377/conftest.py) are a new revision, listed quoted and diffed",
  async (variant) => {
    const ws = await workspace(variant, { "app.py": "x = 1\n" });
    try {
      assert.deepEqual(revisions(await ws.run("cat app.py")), [undefined, undefined]);
      const made = await ws.run(
        `printf 'def test_x():\\n    pass\\n' > "$(printf 'test_\\377.py')"`,
      );
      assert.deepEqual(revisions(made), ["r0", "r1"]);
      if (!namesAsBytes) {
        // Deno: the name is seen (a new revision, listed) but cannot be read, so nothing carries over while it is
        // there: every look is a new revision. Loom's binary runs on Bun.
        assert.equal(ws.executor.changes().length, 1);
        assert.deepEqual(revisions(await ws.run("true")), ["r1", "r2"]);
        return;
      }
      const planted = await ws.run(
        `mkdir "$(printf 'sub\\377')" && printf 'import os\\n' > "$(printf 'sub\\377')/conftest.py"`,
      );
      assert.deepEqual(revisions(planted), ["r1", "r2"]);
      // Changed again: the folder whose name is not UTF-8 is walked like any other.
      assert.deepEqual(revisions(await ws.run(`printf 'import sys\\n' >> "$(printf 'sub\\377')/conftest.py"`)), [
        "r2",
        "r3",
      ]);
      assert.deepEqual(ws.executor.changes(), [
        { path: '"sub\\377/conftest.py"', change: "added", lines_added: 2, lines_removed: 0 },
        { path: '"test_\\377.py"', change: "added", lines_added: 2, lines_removed: 0 },
      ]);
      const patch = ws.executor.patch();
      assert.match(patch, /^diff --git "a\/test_\\377\.py" "b\/test_\\377\.py"$/m);
      assert.match(patch, /^diff --git "a\/sub\\377\/conftest\.py" "b\/sub\\377\/conftest\.py"$/m);
      applyPatch(ws);
      const raw = (name: string) => Buffer.concat([Buffer.from(`${ws.start}/`), Buffer.from(encodeName(name))]);
      assert.equal(readFileSync(raw("test_\udcff.py"), "utf8"), "def test_x():\n    pass\n");
      assert.equal(readFileSync(raw("sub\udcff/conftest.py"), "utf8"), "import os\nimport sys\n");
    } finally {
      rmSync(ws.dir, { recursive: true, force: true });
    }
  },
);

attack(
  "links a command makes are changes: a new link is added, a tracked file replaced by a link is a type change; both diffed as git does",
  async (variant) => {
    const ws = await workspace(variant, { "a.txt": "one\n", "b.txt": "two\n" });
    try {
      assert.deepEqual(revisions(await ws.run("cat a.txt")), [undefined, undefined]);
      assert.deepEqual(revisions(await ws.run("ln -s a.txt link.txt && rm b.txt && ln -s a.txt b.txt")), [
        "r0",
        "r1",
      ]);
      assert.deepEqual(ws.executor.changes(), [
        { path: "b.txt", change: "type_changed", lines_added: 1, lines_removed: 1 },
        { path: "link.txt", change: "added", lines_added: 1, lines_removed: 0 },
      ]);
      const patch = ws.executor.patch();
      assert.match(patch, /^diff --git a\/link\.txt b\/link\.txt\nnew file mode 120000\n/m);
      assert.match(patch, /^deleted file mode 100644\n--- a\/b\.txt\n\+\+\+ \/dev\/null\n@@ -1 \+0,0 @@\n-two\n/m);
      assert.match(patch, /new file mode 120000\n--- \/dev\/null\n\+\+\+ b\/b\.txt\n@@ -0,0 \+1 @@\n\+a\.txt\n\\ No/);
      // A link's target changed is a modification of the link.
      assert.deepEqual(revisions(await ws.run("ln -sfn b.txt link.txt")), ["r1", "r2"]);
      assert.deepEqual(ws.executor.changes()[1], {
        path: "link.txt",
        change: "added",
        lines_added: 1,
        lines_removed: 0,
      });
      applyPatch(ws);
      assert.ok(lstatSync(join(ws.start, "b.txt")).isSymbolicLink());
      assert.equal(readlinkSync(join(ws.start, "b.txt")), "a.txt");
      assert.equal(readlinkSync(join(ws.start, "link.txt")), "b.txt");
    } finally {
      rmSync(ws.dir, { recursive: true, force: true });
    }
  },
);

test("a name's bytes round-trip through its string, and two different names never meet as one (property)", () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
      const name = decodeName(a);
      assert.deepEqual([...encodeName(name)], [...a]);
      if (Buffer.compare(Buffer.from(a), Buffer.from(b)) !== 0) assert.notEqual(decodeName(b), name);
    }),
  );
  assert.equal(quotedName(decodeName(Uint8Array.from([0x74, 0xff, 0x2e, 0x70, 0x79]))), '"t\\377.py"');
  assert.equal(quotedName("ü.txt"), "ü.txt");
  assert.equal(quotedName("ü.txt", { ascii: true }), '"\\303\\274.txt"');
  assert.equal(quotedName('a"b\x1b'), '"a\\"b\\033"');
});

test(
  "what the walk hands the snapshot (only what changed) adds up to what a full scan finds, after any steps (property)",
  { timeout: 600_000 },
  () => {
    const paths = ["a.txt", "d/b.txt", "d/e/c.txt", "d", "d/e", "l"];
    const step = fc.oneof(
      fc.record({ op: fc.constant("write"), path: fc.constantFrom(...paths), text: fc.constantFrom("x\n", "y\nz\n") }),
      fc.record({ op: fc.constant("remove"), path: fc.constantFrom(...paths) }),
      fc.record({ op: fc.constant("link"), path: fc.constantFrom(...paths), text: fc.constantFrom("a.txt", "d") }),
      fc.record({ op: fc.constant("chmod"), path: fc.constantFrom(...paths) }),
    );
    fc.assert(
      fc.property(fc.boolean(), fc.array(step, { minLength: 1, maxLength: 8 }), (committed, steps) => {
        const root = mkdtempSync(join(tmpdir(), "loom-delta-"));
        try {
          writeFileSync(join(root, "a.txt"), "one\n");
          execFileSync("mkdir", ["-p", join(root, "d/e")]);
          writeFileSync(join(root, "d/b.txt"), "two\n");
          if (committed) {
            git(root, "init", "-q");
            git(root, "add", ".");
            git(root, "commit", "-qm", "start");
          }
          const walked = new WorkspaceFingerprint(root);
          walked.changed();
          const start = walked.entries();
          const bySteps = new WorkspaceSnapshot(root);
          bySteps.start(start);
          const byScan = new WorkspaceSnapshot(root);
          byScan.start(start);
          for (const { op, path, text } of steps as { op: string; path: string; text?: string }[]) {
            const full = join(root, path);
            try {
              if (op === "write") writeFileSync(full, text ?? "");
              else if (op === "remove") rmSync(full, { recursive: true, force: true });
              else if (op === "link") rmSync(full, { recursive: true, force: true }), symlinkSync(text ?? "", full);
              else chmodSync(full, 0o755);
            } catch { /* a path through a file, or gone: the step does nothing */ }
            walked.changed();
            bySteps.apply(walked.delta());
          }
          const now = new WorkspaceFingerprint(root, { git: false });
          now.changed();
          const end = now.entries();
          const whole = new Map<string, string | null>([...start.keys()].map((path) => [path, null]));
          for (const [path, sig] of end) whole.set(path, sig);
          byScan.apply(whole);
          assert.deepEqual(bySteps.changes(), byScan.changes());
          assert.equal(bySteps.patch(), byScan.patch());
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 50 },
    );
  },
);
