// Regenerates the bundled recorded workflows under testdata/workflows/ by running the example slice for real
// (real executors on a temporary copy of testdata/example-project) with scripted model answers.
// Usage: bun scripts/record-examples.ts
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runWithOptions } from "../api.ts";
import { digestOf } from "../lib/text/digest.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import type { SliceRequest } from "../lib/slice.ts";
import { NULL_USAGE, type Phase } from "../lib/vocabulary/turn.ts";

const root = new URL("..", import.meta.url).pathname;
const { $schema: _, ...request } = JSON.parse(
  readFileSync(join(root, "testdata/example-request.json"), "utf8"),
) as SliceRequest & { $schema?: string };
const source = readFileSync(join(root, "testdata/example-project/src/slug.mjs"), "utf8");

const ask = (phase: Phase, value: unknown) => ({ phase, value, usage: NULL_USAGE });
const select = (action: string, reason: string) => ask("selection", { action, reason });
const args = (value: unknown) => ask("arguments", value);

const fixBug = [
  select("read_file", "See how slugify builds the slug"),
  args({ path: "src/slug.mjs" }),
  select("run_tests", "See which tests fail before changing anything"),
  ask("selection", { $result: `${digestOf(source)}#lines=2-6` }),
  select("edit_file", "Collapse runs of separators into one hyphen"),
  args({ path: "src/slug.mjs", old_text: '.replace(/[^a-z0-9]/g, "-");', new_text: '.replace(/[^a-z0-9]+/g, "-");' }),
  select("run_tests", "Check the first fix"),
  ask("selection", { $list_history: 0 }),
  select("edit_file", "Also trim separators at both ends"),
  args({
    path: "src/slug.mjs",
    old_text: '.replace(/[^a-z0-9]+/g, "-");',
    new_text: '.replace(/[^a-z0-9]+/g, "-")\n    .replace(/^-+|-+$/g, "");',
  }),
  select("run_tests", "Check that every test passes on the new revision"),
  select("print", "Tell the user what changed"),
  args({ text: "slugify now collapses separators and trims them at both ends." }),
  select("finish", "The tests pass on the latest revision"),
  args({
    status: "success",
    summary: "Fixed slugify: runs of separators collapse to one hyphen, and leading/trailing hyphens are trimmed.",
  }),
];

const escapeAndSuspend = [
  select("read_file", "Look at the system password file"),
  args({ path: "../../../etc/passwd" }),
  select("run_command", "Clean the workspace"),
  args({ argv: ["rm", "-rf", "."] }),
  ...Array.from({ length: 9 }, (_, i) => ask("selection", { $list_history: i })),
];

async function record(name: string, answers: ReturnType<typeof ask>[]) {
  const workspace = mkdtempSync(join(tmpdir(), "loom-example-"));
  try {
    cpSync(join(root, "testdata/example-project"), workspace, { recursive: true });
    const result = await runWithOptions({ ...request, workspace }, {
      provider: new ScriptedProvider(answers),
      record: join(root, "testdata/workflows", name),
    });
    console.log(`${name}: ${result.outcome} after ${result.steps} steps (exit ${result.exit_code})`);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

await record("fix-bug.jsonl", fixBug);
await record("escape-and-suspend.jsonl", escapeAndSuspend);
