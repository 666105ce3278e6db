// The files a run's transcript is read from (`loom report RUN --html --transcript FILE`, or found beside the report):
// its recording (answers and executions) and its request trace (the requests as measured). Each is told by its first
// line; anything else is a usage error naming the file.
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { describeFsError, UsageError } from "../lib/errors.ts";
import { parseRecording } from "../lib/recording/recording.ts";
import { buildTranscript, type Transcript, type TranscriptInput } from "../lib/report/transcript.ts";

/** Files beside `report` that may be its run's recording or trace (report.json -> report.jsonl, …). */
function besideReport(report: string): string[] {
  const stem = basename(report).replace(/\.json$/, "");
  return [`${stem}.jsonl`, `${stem}.recording.jsonl`, `${stem}.trace.jsonl`]
    .map((name) => join(dirname(report), name))
    .filter((path) => existsSync(path));
}

/** The transcript of one run's report from the given files, else the ones found beside it; null when there are none. */
export function readTranscript(
  { report, given, cwd, showContent }: { report: string; given: string[]; cwd: string; showContent: boolean },
): Transcript | null {
  const files = given.length > 0 ? given : besideReport(resolve(cwd, report));
  if (files.length === 0) return null;
  const input: TranscriptInput = {};
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(resolve(cwd, file), "utf8");
    } catch (error) {
      throw new UsageError(`--transcript ${JSON.stringify(file)}: ${describeFsError(error)}`);
    }
    const first = text.slice(0, text.indexOf("\n") === -1 ? undefined : text.indexOf("\n"));
    if (first.includes('"loom-recording"')) {
      const recording = parseRecording(text, { name: file });
      input.answers = recording.answers;
      input.executions = recording.executions;
    } else if (first.includes('"trace_version"')) {
      input.trace = text.split("\n").filter((line) => line.trim() !== "").map((line, i) => {
        try {
          return JSON.parse(line);
        } catch {
          throw new UsageError(`${file}:${i + 1}: not valid JSON (a request trace has one JSON object per line)`);
        }
      });
    } else {
      throw new UsageError(
        `--transcript ${JSON.stringify(file)} is neither a recording (--record) nor a request trace (--trace)`,
      );
    }
  }
  return buildTranscript(input, { sources: files.map((f) => basename(f)), showContent });
}
