// Recorded workflows: versioned JSONL. Line 1 is the header; then answers and executions in the order they happened.
import { tooDeep } from "../text/json-depth.ts";
import { z } from "zod";
import { ActionName } from "../vocabulary/actions.ts";
import { RecordingError } from "../errors.ts";
import { ExecutionReport, reportRefs, WorkspaceChanges } from "../vocabulary/reports.ts";
import { SliceRequest } from "../slice.ts";
import { Phase, StopReason, Usage } from "../vocabulary/turn.ts";
import { readJson } from "../text/json-text.ts";
import { formatZodError } from "../text/zod-error.ts";

export const RECORDING_FORMAT = "loom-recording";
export const RECORDING_VERSION = 1;

export const RecordingHeader = z.strictObject({
  type: z.literal("header"),
  format: z.literal(RECORDING_FORMAT),
  version: z.literal(RECORDING_VERSION),
  slice: SliceRequest.extend({ workspace: z.string().optional() }).describe(
    "The slice as run; workspace is informative",
  ),
  slice_name: z.string().optional().describe("The catalog slice the run was routed to, when it came from a catalog"),
  source: z
    .strictObject({
      format: z.string().describe("loom, or the agent format it was imported from"),
      name: z.string().describe("File name of the original recording"),
    })
    .optional(),
});
export type RecordingHeader = z.infer<typeof RecordingHeader>;

export const RecordedAnswer = z.strictObject({
  type: z.literal("answer"),
  phase: Phase,
  step: z.number().int().nonnegative(),
  value: z.unknown().describe("The model's answer as parsed JSON"),
  usage: Usage,
  stop_reason: StopReason.optional().describe("Why the answer ended, when not at its natural end"),
  request_bytes: z.number().int().nonnegative().optional().describe(
    "Size of the request (classification answers: a replay cannot rebuild it without the catalog)",
  ),
});
export type RecordedAnswer = z.infer<typeof RecordedAnswer>;

export const RecordedExecution = z.strictObject({
  type: z.literal("execution"),
  step: z.number().int().positive(),
  action: ActionName,
  args: z.record(z.string(), z.unknown()),
  report: ExecutionReport,
  results: z.record(z.string(), z.string()).describe("Bulk content of the report's references, by digest"),
  lines: z.strictObject({ added: z.number().int().nonnegative(), removed: z.number().int().nonnegative() }).nullable()
    .optional().describe(
      "Lines the step added to and removed from the workspace's text files (null: unknown); shown again on replay " +
        "(since loom 0.6.0)",
    ),
});
export type RecordedExecution = z.infer<typeof RecordedExecution>;

/** The last line of a recording of a real workspace: what the run changed, so a replay shows the same files. */
const RecordedChanges = z.strictObject({
  type: z.literal("changes"),
  changes: WorkspaceChanges,
}).describe("The files the run changed against its starting revision, with lines (since loom 0.6.0)");
type RecordedChanges = z.infer<typeof RecordedChanges>;

export const RecordingEntry = z.discriminatedUnion("type", [RecordedAnswer, RecordedExecution, RecordedChanges]);
export type RecordingEntry = z.infer<typeof RecordingEntry>;

export type Recording = {
  header: RecordingHeader;
  answers: RecordedAnswer[];
  executions: RecordedExecution[];
  /** What the recorded run changed (absent in recordings before 0.6.0, and of runs without a real workspace). */
  changes?: WorkspaceChanges;
};

/** Parses a recording; any bad line is reported with the file name and its line number. */
export function parseRecording(text: string, { name = "recording" }: { name?: string } = {}): Recording {
  const lines = text.split("\n");
  let header: RecordingHeader | undefined;
  const answers: RecordedAnswer[] = [];
  const executions: RecordedExecution[] = [];
  let changes: WorkspaceChanges | undefined;
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "") continue;
    const where = `${name}:${i + 1}`;
    const deep = tooDeep(line);
    if (deep) throw new RecordingError(`${where}: ${deep}`);
    const read = readJson(line);
    if (!read.ok) throw new RecordingError(`${name}:${i + 1}:${read.column}: not valid JSON: ${read.message}`);
    const json = read.value;
    if (!header) {
      const parsed = RecordingHeader.safeParse(json);
      if (!parsed.success) {
        throw new RecordingError(
          `${where}: not a Loom recording header: ${formatZodError(parsed.error, { schema: RecordingHeader })}`,
        );
      }
      header = parsed.data;
      continue;
    }
    const parsed = RecordingEntry.safeParse(json);
    if (!parsed.success) {
      throw new RecordingError(`${where}: ${formatZodError(parsed.error, { schema: RecordingEntry })}`);
    }
    const entry = parsed.data;
    if (entry.type === "answer") answers.push(entry);
    else if (entry.type === "execution") {
      for (const ref of reportRefs(entry.report)) {
        if (!(ref in entry.results)) {
          throw new RecordingError(`${where}: report references ${ref} but its content is missing`);
        }
      }
      executions.push(entry);
    } else changes = entry.changes;
  }
  if (!header) throw new RecordingError(`${name}: empty recording (no header line)`);
  return { header, answers, executions, ...(changes ? { changes } : {}) };
}

export function recordingLine(entry: RecordingHeader | RecordingEntry): string {
  return `${JSON.stringify(entry)}\n`;
}
