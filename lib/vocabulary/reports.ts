// Typed execution reports: the only source of the working state.
import { z } from "zod";

const Ref = z.string().regex(/^sha256:[0-9a-f]{64}$/).describe(
  "A result-store reference: sha256:<64 hex> of the bytes",
);
const Revision = z.string().regex(/^r\d+$/).describe(
  "Loom's workspace revision counter: r0 at start, +1 per change to the workspace (an edit, or files a command or a test run changed)",
);

const ReadReport = z.strictObject({
  kind: z.literal("read"),
  path: z.string().describe("Workspace-relative path that was read"),
  result: Ref.describe("The file's content"),
});
const ListReport = z.strictObject({
  kind: z.literal("list"),
  path: z.string(),
  count: z.number().int().nonnegative().describe("Number of entries listed"),
  result: Ref.describe("The listing, one path per line"),
});
const SearchReport = z.strictObject({
  kind: z.literal("search"),
  query: z.string(),
  path: z.string(),
  matches: z.number().int().nonnegative(),
  result: Ref.describe("Matching lines as path:line:text"),
});
const EditReport = z.strictObject({
  kind: z.literal("edit"),
  paths: z.array(z.string()).describe("Workspace-relative paths changed"),
  revision_before: Revision,
  revision_after: Revision,
});
const TestReport = z.strictObject({
  kind: z.literal("test"),
  revision: Revision.describe("The workspace revision the tests ran on"),
  exit_code: z.number().int().nullable().describe("Exit status; null when killed or unknown"),
  timed_out: z.boolean(),
  duration_ms: z.number().nonnegative(),
  output: Ref.describe("Combined stdout and stderr"),
  revision_after: Revision.optional().describe(
    "Present when the test run changed the workspace: the new revision (the tests ran on `revision`)",
  ),
});
const CommandReport = z.strictObject({
  kind: z.literal("command"),
  argv: z.array(z.string()),
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  output: Ref.describe("Combined stdout and stderr"),
  revision_before: Revision.optional().describe("Present when the command changed the workspace: the revision before"),
  revision_after: Revision.optional().describe("Present when the command changed the workspace: the new revision"),
});
const PrintReport = z.strictObject({
  kind: z.literal("print"),
  text: Ref.describe("The printed text"),
});
const RefusalReport = z.strictObject({
  kind: z.literal("refusal"),
  step: z.number().int().positive(),
  code: z.string().describe("Machine-readable reason, e.g. path_outside_workspace"),
  reason: z.string().describe("One line for the model and the user"),
  nearest_lines: z.array(z.strictObject({
    line: z.number().int().positive().describe("Line number, from 1"),
    text: z.string().describe("The line, clipped"),
  })).max(6).optional().describe(
    "edit_text_not_found: the file's lines nearest the old text (where it occurs with whitespace ignored, else the " +
      "most alike); a bounded excerpt, absent when nothing is near",
  ),
  existing_paths: z.array(z.string()).max(12).optional().describe(
    "not_found: existing paths nearest the one asked for (the same name elsewhere, then the entries of the nearest " +
      "existing folder on its way, folders ending in /); absent when the workspace holds none",
  ),
});
/** How the model says a slice ended when it finishes: the one list of finish statuses. */
export const FinishStatus = z.enum(["success", "failure"]);
export type FinishStatus = z.infer<typeof FinishStatus>;

/** How the model finished a run: its status and its summary (what the run's reports and pages show). */
export const RunFinish = z.strictObject({
  status: FinishStatus,
  summary: z.string().describe("The model's finish summary"),
});
export type RunFinish = z.infer<typeof RunFinish>;

const FinishReport = z.strictObject({
  kind: z.literal("finish"),
  status: FinishStatus,
  summary: z.string(),
});

export const ExecutionReport = z.discriminatedUnion("kind", [
  ReadReport,
  ListReport,
  SearchReport,
  EditReport,
  TestReport,
  CommandReport,
  PrintReport,
  RefusalReport,
  FinishReport,
]);
export type ExecutionReport = z.infer<typeof ExecutionReport>;
export type ReportOf<K extends ExecutionReport["kind"]> = Extract<ExecutionReport, { kind: K }>;

/** The bulk references a report carries (each is a result-store digest). */
export function reportRefs(report: ExecutionReport): string[] {
  switch (report.kind) {
    case "read":
    case "list":
    case "search":
      return [report.result];
    case "test":
    case "command":
      return [report.output];
    case "print":
      return [report.text];
    default:
      return [];
  }
}

/** Reports compared across record and re-execution: wall-clock durations are not behaviour. */
export function comparableReport(report: ExecutionReport): ExecutionReport {
  if (report.kind === "test") return { ...report, duration_ms: 0 };
  // A refusal's hints are advice drawn from the workspace, not an effect; recordings made before them have none.
  if (report.kind === "refusal") {
    const { nearest_lines: _lines, existing_paths: _paths, ...rest } = report;
    return rest;
  }
  return report;
}

/** One file that differs from the start of the run; lines null when its text is not kept (binary, too large). */
export const FileChange = z.strictObject({
  path: z.string().describe(
    "The path relative to the workspace; in double quotes with C-style escapes, as git shows it, when it holds a " +
      'quote, a backslash, a control character or a byte that is not UTF-8 ("test_\\377.py")',
  ),
  change: z.enum(["added", "modified", "deleted", "type_changed"]).describe(
    "type_changed: a file that became a symbolic link or the other way (git's type change)",
  ),
  lines_added: z.number().int().nonnegative().nullable(),
  lines_removed: z.number().int().nonnegative().nullable(),
});
export type FileChange = z.infer<typeof FileChange>;

/** What the run changed in the workspace against its starting revision (never file contents). */
export const WorkspaceChanges = z.strictObject({
  files: z.array(FileChange).describe("Every file that differs from the start, in path order"),
  lines_added: z.number().int().nonnegative().nullable().describe("Sum over the files; null when one is unknown"),
  lines_removed: z.number().int().nonnegative().nullable().describe("Sum over the files; null when one is unknown"),
});
export type WorkspaceChanges = z.infer<typeof WorkspaceChanges>;

/** The changes of a list of files, with their sums. */
export function workspaceChanges(files: FileChange[]): WorkspaceChanges {
  const sum = (key: "lines_added" | "lines_removed") =>
    files.some((f) => f[key] === null) ? null : files.reduce((total, f) => total + (f[key] ?? 0), 0);
  return { files, lines_added: sum("lines_added"), lines_removed: sum("lines_removed") };
}
