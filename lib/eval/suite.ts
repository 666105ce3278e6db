// An evaluation suite (SPEC §12): tasks, each a workspace source, what the agent is asked and shown, and the hidden
// check that decides whether the run solved it. Parsed once here; every error names the file, the task and the field.
import { z } from "zod";
import { ActionName } from "../vocabulary/actions.ts";
import { describeJsonFailure, parseJsonc } from "../text/json-text.ts";
import { fieldOf, UsageError } from "../errors.ts";
import { describeIssues, MISSING_FIELDS } from "../text/zod-error.ts";

const Argv = z.array(z.string().min(1).refine((arg) => !arg.includes("\0"), { error: "contains a NUL byte" })).min(1);
/** A path in a suite: a NUL byte would reach the file system as an internal error, so it is the suite's error. */
const Path = z.string().min(1).refine((path) => !path.includes("\0"), { error: "contains a NUL byte" });
const Timeout = z.number().int().positive();

const TaskId = z.string().regex(
  /^[a-z0-9][a-z0-9._-]{0,63}$/,
  "expected lowercase letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)",
);

export const Check = z.strictObject({
  command: Argv.describe(
    "argv of the hidden check, run in a fresh sandbox on the resulting workspace after the run ends; exit 0 = " +
      "solved. {check} is replaced by the absolute path of the check folder (also in $LOOM_CHECK_DIR)",
  ),
  timeout_ms: Timeout.describe("Kill the check after this many milliseconds (a timeout counts as unsolved)"),
  files: Path.optional().describe(
    "Folder of the check's own files, relative to the suite file, mounted read-only; never inside the workspace",
  ),
});
export type Check = z.infer<typeof Check>;

const VisibleTest = z.strictObject({
  command: Argv.describe("argv of the agent-visible test (run_tests), run in the workspace"),
  timeout_ms: Timeout.describe("Kill the test after this many milliseconds"),
});

const Shared = {
  instructions: z.string().optional().describe("How to work; sent verbatim (after the eval's per-run marker)"),
  actions: z.array(ActionName).min(1).optional().describe("Actions the agent may choose; finish is always offered"),
  max_steps: z.number().int().positive().optional().describe("At most this many executed actions"),
  require_passing_tests: z.boolean().optional().describe(
    "Refuse a finish with status success unless the latest revision's tests ran and passed (the model is told why)",
  ),
  allow_commands: z.array(Argv).optional().describe('argv prefixes run_command may run, e.g. [["node"]]'),
  test: VisibleTest.optional().describe("The agent-visible test"),
  tags: z.array(z.string().min(1)).optional().describe("Labels for grouping results"),
};

const SuiteTask = z.strictObject({
  id: TaskId.describe("Unique task id (names the run folders)"),
  intent: z.string().min(1).describe("What the agent is asked to do"),
  workspace: Path.optional().describe("Folder copied fresh for every run, relative to the suite file"),
  git: z.strictObject({
    repo: Path.describe("A local git repository, relative to the suite file"),
    commit: z.string().regex(/^[0-9a-f]{7,40}$/, "expected a commit id (hex)").describe("The commit to check out"),
  }).optional().describe("Instead of workspace: a commit checked out into a fresh folder, without network"),
  slice: z.strictObject({
    catalog: Path.describe("Catalog file, relative to the suite file"),
    name: z.string().min(1).describe("Slice name in that catalog"),
  }).optional().describe("Take instructions, actions, test, limits and commands from a catalog slice"),
  solution: Path.optional().describe(
    "Reference solution: a folder whose files replace or add workspace files (for loom eval validate)",
  ),
  check: Check,
  ...Shared,
}).superRefine((task, ctx) => {
  if ((task.workspace === undefined) === (task.git === undefined)) {
    ctx.addIssue({ code: "custom", path: ["workspace"], message: "expected exactly one of workspace or git" });
  }
});
export type SuiteTask = z.infer<typeof SuiteTask>;

export const Suite = z.strictObject({
  $schema: z.string().optional().describe("JSON Schema of this file (loom schema suite); ignored by Loom"),
  name: z.string().min(1).optional().describe("The suite's name, for reports"),
  defaults: z.strictObject(Shared).optional().describe("Settings for every task that does not set its own"),
  tasks: z.array(SuiteTask).min(1).describe("The tasks, in this order"),
}).superRefine((suite, ctx) => {
  const seen = new Set<string>();
  suite.tasks.forEach((task, i) => {
    if (seen.has(task.id)) ctx.addIssue({ code: "custom", path: ["tasks", i, "id"], message: "duplicate task id" });
    seen.add(task.id);
  });
}).describe("A Loom evaluation suite (loom eval SUITE); paths are relative to this file");
export type Suite = z.infer<typeof Suite>;

const DEFAULT_ACTIONS: ActionName[] = [
  "read_file",
  "list_files",
  "search",
  "edit_file",
  "write_file",
  "run_tests",
  "print",
  "finish",
];
const DEFAULT_MAX_STEPS = 40;
const DEFAULT_INSTRUCTIONS =
  "Work in small steps: read what you need, make the change, run the tests, and finish when they pass on the " +
  "latest revision.";

/** A task with the defaults applied: what a run and a check need. Paths are still relative to the suite file. */
export type ResolvedTask = {
  id: string;
  tags: string[];
  intent: string;
  instructions: string;
  actions: ActionName[];
  max_steps: number;
  /** A finish with status success needs passing tests on the latest revision (the request's require_passing_tests). */
  require_passing_tests: boolean;
  commands: string[][];
  test: { command: string[]; timeout_ms: number } | null;
  source: { kind: "folder"; path: string } | { kind: "git"; repo: string; commit: string };
  check: Check;
  solution: string | null;
  slice: { catalog: string; name: string } | null;
};

export function resolveTask(suite: Suite, task: SuiteTask): ResolvedTask {
  const d = suite.defaults ?? {};
  return {
    id: task.id,
    tags: task.tags ?? d.tags ?? [],
    intent: task.intent,
    instructions: task.instructions ?? d.instructions ?? DEFAULT_INSTRUCTIONS,
    actions: task.actions ?? d.actions ?? DEFAULT_ACTIONS,
    max_steps: task.max_steps ?? d.max_steps ?? DEFAULT_MAX_STEPS,
    require_passing_tests: task.require_passing_tests ?? d.require_passing_tests ?? false,
    commands: task.allow_commands ?? d.allow_commands ?? [],
    test: task.test ?? d.test ?? null,
    source: task.git
      ? { kind: "git", repo: task.git.repo, commit: task.git.commit }
      // "!": a task without a git source has a workspace (the suite schema requires one or the other)
      : { kind: "folder", path: task.workspace! },
    check: task.check,
    solution: task.solution ?? null,
    slice: task.slice ?? null,
  };
}

/**
 * Parses a suite's text. Throws a UsageError naming the file, the task (by id where it has one) and the field:
 * `Invalid suite "evals/suite.jsonc": task "log-scan" (tasks[3]).check.timeout_ms: expected number`.
 */
export function parseSuite(text: string, { file, limit = 3 }: { file: string; limit?: number }): Suite {
  const where = `Invalid suite ${JSON.stringify(file)}`;
  const json = parseJsonc(text);
  if (!json.ok) throw new UsageError(`${where}: ${describeJsonFailure(json)}`, "suite_invalid");
  const parsed = Suite.safeParse(json.value, { error: MISSING_FIELDS });
  if (parsed.success) return parsed.data;
  const tasks = fieldOf(json.value, "tasks");
  const issues = describeIssues(parsed.error, { schema: Suite }).map((line) => nameTask(line, tasks));
  const more = issues.length > limit ? ` (+${issues.length - limit} more)` : "";
  throw new UsageError(`${where}: ${issues.slice(0, limit).join("; ")}${more}`, "suite_invalid");
}

/** "tasks[3].check…" gains the task's id, when it has one, so a reader finds it without counting. */
function nameTask(line: string, tasks: unknown): string {
  const match = /^tasks\[(\d+)\]/.exec(line);
  if (!match || !Array.isArray(tasks)) return line;
  const id = (tasks[Number(match[1])] as { id?: unknown } | undefined)?.id;
  return typeof id === "string" ? `task ${JSON.stringify(id)} (${match[0]})${line.slice(match[0].length)}` : line;
}
