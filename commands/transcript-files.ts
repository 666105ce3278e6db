// The files a run's transcript is read from (`loom report RUN --html --transcript FILE`, or found beside the report):
// its recording (answers and executions) and its request trace (the requests as measured). Each is told by its first
// line; anything else is a usage error naming the file.
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { describeFsError, UsageError } from "../lib/errors.ts";
import { parseRecording, type RecordedExecution } from "../lib/recording/recording.ts";
import { stepOutcome } from "../lib/run-events.ts";
import { buildTranscript, type Transcript, type TranscriptInput } from "../lib/report/transcript.ts";
import type { ContextReport } from "../lib/report/context-report.ts";
import type { Usage } from "../lib/vocabulary/turn.ts";
import { digestOf } from "../lib/text/digest.ts";
import { formatCount } from "../lib/text/numbers.ts";

/** Files beside `report` that may be its run's recording or trace (report.json -> report.jsonl, …). */
function besideReport(report: string): string[] {
  const stem = basename(report).replace(/\.json$/, "");
  return [`${stem}.jsonl`, `${stem}.recording.jsonl`, `${stem}.trace.jsonl`]
    .map((name) => join(dirname(report), name))
    .filter((path) => existsSync(path));
}

/** The transcript of one run's report from the given files, else the ones found beside it; null when there are none. */
export function readTranscript(
  { report, run, given, cwd, showContent }: {
    report: string;
    /** The report itself: a recording or trace of another run is refused, not shown under its step table. */
    run: ContextReport;
    given: string[];
    cwd: string;
    showContent: boolean;
  },
): Transcript | null {
  const found = given.length === 0;
  const files = found ? besideReport(resolve(cwd, report)) : given;
  if (files.length === 0) return null;
  const input: TranscriptInput = {};
  // One recording and one trace at most: --transcript names each once.
  const kinds = new Map<string, string>();
  const once = (kind: string, file: string): boolean => {
    const earlier = kinds.get(kind);
    if (earlier !== undefined && found) return false; // the first found beside the report is the one shown
    if (earlier !== undefined) {
      throw new UsageError(
        `--transcript ${JSON.stringify(file)} is a second ${kind} (after ${JSON.stringify(earlier)}): give one ` +
          `recording and/or one request trace of the run`,
      );
    }
    kinds.set(kind, file);
    return true;
  };
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
      // A replay's report names its recording by digest; a live run's recording holds the run's model calls.
      const theirs = recording.answers.map((a) => callKey(a.phase, a.step, a.usage));
      // Counters alone agree across two runs of one scripted model: each step's action and target must agree too.
      const foreign = run.recording !== digestOf(text) &&
        (foreignness(theirs, run.calls.map((c) => callKey(c.phase, c.step, c.usage))) ??
          stepMismatch(run, recording.executions));
      if (foreign && found) continue; // another run's file beside the report: not this run's transcript
      if (foreign) refuse(file, "recording", foreign);
      if (!once("recording", file)) continue;
      input.answers = recording.answers;
      input.executions = recording.executions;
    } else if (first.includes('"trace_version"')) {
      const trace: TranscriptInput["trace"] = text.split("\n").filter((line) => line.trim() !== "").map((line, i) => {
        try {
          return JSON.parse(line);
        } catch {
          throw new UsageError(`${file}:${i + 1}: not valid JSON (a request trace has one JSON object per line)`);
        }
      });
      const foreign = foreignness(
        (trace ?? []).map((line) => `${line.phase} ${line.request_bytes}`),
        run.calls.map((c) => `${c.phase} ${c.request_bytes}`),
      );
      if (foreign && found) continue;
      if (foreign) refuse(file, "request trace", foreign);
      if (!once("request trace", file)) continue;
      input.trace = trace;
    } else {
      throw new UsageError(
        `--transcript ${JSON.stringify(file)} is neither a recording (--record) nor a request trace (--trace)`,
      );
    }
  }
  if (found && kinds.size === 0) return null;
  return buildTranscript(input, { sources: [...kinds.values()].map((f) => basename(f)), showContent });
}

/** A model call as a recording and the report both hold it: its phase, step and counters. */
function callKey(phase: string, step: number, usage: Usage): string {
  const { input, cache_read, cache_write, output } = usage;
  return JSON.stringify([phase, step, input, cache_read, cache_write, output]);
}

/** How a transcript file's model calls differ from the report's (then it is another run's), or null when they agree. */
function foreignness(theirs: string[], ours: string[]): string | null {
  const first = theirs.findIndex((key, i) => key !== ours[i]);
  if (theirs.length === ours.length && first === -1) return null;
  return theirs.length !== ours.length
    ? `it holds ${formatCount(theirs.length)} model calls, the report ${formatCount(ours.length)}`
    : `its model call ${first + 1} differs from the report's`;
}

/**
 * The first step where the report's step log and the recording's execution reports disagree on the action or what it
 * worked on (the step event's target, from the recorded arguments by the same rule); null when every recorded step
 * agrees, or the report (of an older version) has no step log.
 */
function stepMismatch(run: ContextReport, executions: readonly RecordedExecution[]): string | null {
  if (run.step_log === undefined) return null;
  const logged = new Map(run.step_log.map((entry) => [entry.step, entry]));
  const said = (action: string | null, target: string | null) =>
    `${action ?? "no action"}${target === null ? "" : ` ${JSON.stringify(target)}`}`;
  for (const execution of executions) {
    const ours = logged.get(execution.step);
    const { target } = stepOutcome(execution.args, execution.report);
    const theirs = said(execution.action, target);
    if (ours === undefined) return `step ${execution.step}: the report has no such step, the recording says ${theirs}`;
    if (ours.action !== execution.action || ours.target !== target) {
      return `step ${execution.step}: the report says ${said(ours.action, ours.target)}, the recording says ${theirs}`;
    }
  }
  return null;
}

function refuse(file: string, kind: string, why: string): never {
  throw new UsageError(
    `--transcript ${JSON.stringify(file)} is not this report's run (${why}): give the ${kind} written with it`,
  );
}
