// changes.json round trip: what a run changed, saved and applied to a fresh copy (loom eval rescore), gives back the
// workspace the agent left — files, folders turned into files and back, links — and never reaches outside the copy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { applyChangesFile, changesSince, snapshot } from "../lib/eval/run/eval-workspace.ts";

const NAMES = ["a", "b", "src", "src/x", "src/y", "src/deep/z", "lib", "lib/w"];

type Op = { kind: "write" | "remove" | "link" | "dir"; path: string; text: string };

/** The agent's operation, done in its workspace; one whose parent is a link or a file fails, as it would for the agent. */
function apply(root: string, op: Op): void {
  const parts = op.path.split("/");
  for (let i = 1; i < parts.length; i++) {
    const info = lstatSync(join(root, ...parts.slice(0, i)), { throwIfNoEntry: false });
    if (info && !info.isDirectory()) return;
  }
  const path = join(root, op.path);
  rmSync(path, { recursive: true, force: true });
  if (op.kind === "remove") return;
  mkdirSync(dirname(path), { recursive: true });
  if (op.kind === "write") writeFileSync(path, op.text);
  else if (op.kind === "dir") mkdirSync(path);
  else symlinkSync(op.text === "" ? "../outside" : `/nonexistent/${op.text}`, path);
}

function seed(root: string): void {
  for (const path of ["a", "src/x", "src/y", "src/deep/z", "lib/w"]) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), `initial ${path}\n`);
  }
}

test("changes saved from any mix of writes, removals, links and folders re-create the agent's workspace", {
  timeout: 600_000,
}, () => {
  const base = mkdtempSync(join(tmpdir(), "loom-changes-"));
  try {
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            kind: fc.constantFrom("write", "remove", "link", "dir"),
            path: fc.constantFrom(...NAMES),
            text: fc.string({ maxLength: 8 }).map((s) => s.replace(/[^a-z]/g, "")),
          }),
          { maxLength: 10 },
        ),
        (ops) => {
          const dir = join(base, String(n++));
          const agent = join(dir, "agent");
          const copy = join(dir, "copy");
          seed(agent);
          seed(copy);
          const before = snapshot(agent);
          for (const op of ops) apply(agent, op as Op);
          writeFileSync(join(dir, "changes.json"), JSON.stringify(changesSince(before, agent)));
          applyChangesFile(copy, join(dir, "changes.json"));
          assert.deepEqual([...snapshot(copy)].sort(), [...snapshot(agent)].sort());
        },
      ),
      { numRuns: 100 },
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
