// loom replay FOLDER… --compare: every session under the folders (Claude Code projects, Codex session trees, or any
// recordings) replayed in-process under legacy and bounded, one table row per session and a total (lib/report/
// session-comparison.ts). Files are read, never run; a file that cannot be compared is a row with one line saying why.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describeFsError, UsageError } from "../lib/errors.ts";
import { detectRecordingFormat, parseRecordingText } from "../lib/recording/format.ts";
import { importSession, SESSION_FORMATS, type SessionFormat } from "../lib/recording/importers/index.ts";
import type { SessionFacts } from "../lib/recording/importers/session-facts.ts";
import type { Recording } from "../lib/recording/recording.ts";
import { RecordedExecutor, ScriptedProvider } from "../lib/recording/replay.ts";
import {
  type BlockRendering,
  type PolicyFigures,
  refusedRow,
  RequestMeter,
  type SessionComparison,
  sessionComparison,
  sessionModel,
  sessionRow,
} from "../lib/recording/session-comparison.ts";
import { renderSessionComparisonHtml, renderSessionComparisonText } from "../lib/recording/session-comparison-table.ts";
import { startRun } from "../lib/run/start-run.ts";
import { planRun } from "../lib/run/run-plan.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import type { Provider } from "../lib/vocabulary/turn.ts";
import { writeFileAtomic } from "../lib/io/files.ts";
import { escapeControl } from "../lib/text/safe-text.ts";
import type { Io } from "./io.ts";
import { refuseCollisions } from "./output-paths.ts";
import { startupFiles } from "./config.ts";

/** Folders deeper than this are not searched (Codex keeps sessions at YYYY/MM/DD, Claude Code subagents at 3). */
const MAX_DEPTH = 6;

/** Every .jsonl/.json file under the paths (files as given), sorted within each folder. */
export function sessionFiles(paths: string[]): { root: string; file: string }[] {
  const out: { root: string; file: string }[] = [];
  const walk = (root: string, dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      throw new UsageError(`Cannot read folder ${JSON.stringify(dir)}: ${describeFsError(error)}`);
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, e.name);
      if (e.isFile() && /\.jsonl?$/.test(e.name)) out.push({ root, file: path });
      else if (e.isDirectory() && depth < MAX_DEPTH && !e.name.startsWith(".")) walk(root, path, depth + 1);
    }
  };
  for (const path of paths) {
    let folder = false;
    try {
      folder = statSync(path).isDirectory();
    } catch (error) {
      throw new UsageError(`Cannot read ${JSON.stringify(path)}: ${describeFsError(error)}`);
    }
    if (folder) walk(path, path, 0);
    else out.push({ root: resolve(path, ".."), file: path });
  }
  if (out.length === 0) {
    throw new UsageError(`No session files (.jsonl, .json) under ${paths.map((p) => JSON.stringify(p)).join(", ")}`);
  }
  return out;
}

/** Replays one recording under one policy, measuring every request as it is sent. */
async function replayMeasured(
  recording: Recording,
  policy: ContextPolicyName,
  meter: RequestMeter,
): Promise<PolicyFigures> {
  const scripted = new ScriptedProvider(recording.answers);
  const measured: Provider = {
    name: scripted.name,
    capabilities: scripted.capabilities,
    complete(request, options) {
      meter.cache(request);
      return scripted.complete(request, options);
    },
  };
  // Planned as a library run under the policy (the process's environment, no config file).
  const plan = planRun({ contextPolicy: policy }, { env: process.env });
  const result = await startRun({ request: { ...recording.header.slice, workspace: "." } }, plan, {
    provider: measured,
    executor: (store) => new RecordedExecutor(recording.executions, { store }),
  });
  if (result.outcome !== "completed" && result.outcome !== "step_limit") {
    throw new UsageError(
      `the ${policy} replay ended ${result.outcome}${result.error ? `: ${result.error.message}` : ""}`,
    );
  }
  for (const call of result.report.calls) meter.size(call.request_bytes);
  return meter.figures();
}

/** One file: imported, replayed under both policies, and its row; any failure is the row's one-line reason. */
export async function compareFile(
  text: string,
  { name, from }: { name: string; from: string },
  { rendering }: { rendering?: BlockRendering } = {},
) {
  try {
    const format = from === "auto" ? detectRecordingFormat(text, name) : from;
    let recording: Recording;
    let facts: SessionFacts | null = null;
    if ((SESSION_FORMATS as readonly string[]).includes(format)) {
      ({ recording, facts } = importSession(text, { format: format as SessionFormat, name }));
    } else recording = parseRecordingText(text, { name, from: format });
    const model = facts?.model ?? recording.header.slice.model;
    const priced = sessionModel({ format: facts?.format ?? format, model });
    const legacy = await replayMeasured(recording, "legacy", new RequestMeter(priced, { rendering }));
    const bounded = await replayMeasured(recording, "bounded", new RequestMeter(priced, { rendering }));
    return sessionRow({ file: name, format, facts, events: recording.executions.length, legacy, bounded }, { model });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // The importers' errors begin with the file's name: the row already says it.
    return refusedRow(name, message.startsWith(`${name}:`) ? message.slice(name.length + 1).trim() : message);
  }
}

export async function replayCompare(
  paths: string[],
  { io, from, json, html, quiet }: { io: Io; from: string; json: boolean; html: string | undefined; quiet: boolean },
): Promise<number> {
  const files = sessionFiles(paths.map((p) => resolve(io.cwd, p)));
  // Every session compared is an input, like the files read at start: the page must not be written over one.
  if (html !== undefined) {
    refuseCollisions([{ flag: "--html", path: resolve(io.cwd, html) }], {
      inputs: [
        ...files.map(({ file }) => ({ flag: "the session", path: file })),
        ...startupFiles(io.env, [io.cwd]),
      ],
    });
  }
  const rows = [];
  const progress = io.isTTY && !quiet;
  for (const [i, { root, file }] of files.entries()) {
    if (io.signal.aborted) break;
    const name = relative(root, file) || file;
    if (progress) {
      io.stderr(
        `\rloom replay: comparing ${i + 1}/${files.length} ${escapeControl(name)}`.slice(0, (io.columns ?? 100) - 1) +
          "\x1b[K",
      );
    }
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      rows.push(refusedRow(name, `cannot read: ${describeFsError(error)}`));
      continue;
    }
    rows.push(await compareFile(text, { name, from }));
  }
  if (progress) io.stderr("\r\x1b[K");
  const comparison: SessionComparison = sessionComparison(paths.join(", "), rows);
  if (html !== undefined) {
    const path = resolve(io.cwd, html);
    writeFileAtomic(path, renderSessionComparisonHtml(comparison));
    io.stdout(`${escapeControl(path)}\n`);
  } else if (json) io.stdout(`${JSON.stringify(comparison, null, 2)}\n`);
  else io.stdout(renderSessionComparisonText(comparison));
  if (io.signal.aborted) return 130;
  return comparison.total.refused > 0 ? 1 : 0;
}
