// loom replay: drive the loop from recorded workflows (Loom's own, or imported from another agent's format).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { startRun } from "../lib/adapters/start-run.ts";
import { UsageError } from "../lib/errors.ts";
import { detectFormat, IMPORT_FORMATS, type ImportFormat, importTrajectory } from "../lib/importers/index.ts";
import { parseRecording, type Recording } from "../lib/recording.ts";
import type { Io } from "./io.ts";
import { outputPathOption, parseCommandArgs, policyOption, sandboxOption } from "./options.ts";
import { replayBatch } from "./replay-batch.ts";
import { Reporter } from "./reporter.ts";

const HELP = `loom replay RECORDING… [options]

Drives the governed loop from recorded workflows: the recorded model answers in order, and the recorded execution
reports (no workspace needed) or, with --execute, real execution against --workspace.

Options:
  --from FORMAT           loom (default), mini-swe-agent, swe-agent, openai-messages, or auto (detect per file)
  --context-policy NAME   legacy (default) or bounded
  --context-report PATH   write the context report (for several recordings: the aggregate report)
  --reports-dir DIR       per-recording reports when replaying several (default: beside the aggregate)
  --workspace DIR         with --execute: the workspace to execute in
  --execute               execute for real and compare each report with the recorded one
  --sandbox MODE          with --execute: auto (default), required or off (docs/sandbox.md)
  --jobs N                replay several recordings in N parallel workers (default 1)
  --json                  print the result as one JSON object on stdout
  --quiet                 no progress on stderr

Exit codes: one recording exits as a run does (0 completed, 1 failed or executed differently, 3 startup failure,
4 suspended, 5 archive capacity exceeded, 6 step limit, 7 no valid answer). Several recordings: 0 when every one completed, 1 when any
did not complete or could not be replayed, 130 when interrupted. 2 is a usage error.
`;

const REPLAY_OPTIONS = {
  from: { type: "string", default: "loom" },
  "context-policy": { type: "string", default: "legacy" },
  "context-report": { type: "string" },
  "reports-dir": { type: "string" },
  workspace: { type: "string" },
  execute: { type: "boolean", default: false },
  sandbox: { type: "string" },
  jobs: { type: "string" },
  json: { type: "boolean", default: false },
  quiet: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

export const FORMATS = ["loom", ...IMPORT_FORMATS, "auto"] as const;

export async function replayCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, REPLAY_OPTIONS, { command: "replay" });
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  const from = values.from as string;
  if (!(FORMATS as readonly string[]).includes(from)) {
    throw new UsageError(`--from ${JSON.stringify(from)}: expected one of ${FORMATS.join(", ")}`);
  }
  const policy = policyOption(values["context-policy"]);
  if (values.execute && !values.workspace) throw new UsageError("--execute needs --workspace DIR");
  if (values.workspace && !values.execute) throw new UsageError("--workspace is only used with --execute");
  const sandbox = sandboxOption(values.sandbox);
  if (sandbox && !values.execute) throw new UsageError("--sandbox is only used with --execute");
  const jobs = values.jobs === undefined ? 1 : Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) {
    throw new UsageError(`--jobs ${JSON.stringify(values.jobs)}: expected a positive integer`);
  }
  if (positionals.length === 0) throw new UsageError("No recording given (loom replay RECORDING…)");
  // Where reports go is checked before anything runs: a replay must not end in an unwritable path.
  const reportPath = values["context-report"]
    ? outputPathOption("--context-report", values["context-report"], { cwd: io.cwd })
    : undefined;
  const reportsDir = values["reports-dir"]
    ? outputPathOption("--reports-dir", values["reports-dir"], { cwd: io.cwd, folder: true })
    : undefined;
  const reporter = new Reporter(io, { command: "replay", format: values.json ? "json" : "text", quiet: values.quiet });
  const files = expandRecordings(positionals.map((p) => resolve(io.cwd, p)), from);

  if (files.length > 1 || values.jobs !== undefined && positionals.some((p) => isDirectory(resolve(io.cwd, p)))) {
    if (values.execute) {
      throw new UsageError("--execute replays one recording at a time (each needs its own workspace)");
    }
    return replayBatch(files, { io, reporter, jobs, from, policy, reportPath, reportsDir });
  }

  const file = files[0];
  const recording = loadRecording(file, from);
  const workspace = values.workspace ? resolve(io.cwd, values.workspace) : ".";
  const result = await startRun({ request: { ...recording.header.slice, workspace } }, {
    contextPolicy: policy,
    contextReport: reportPath,
    replay: { recording, execute: values.execute },
    sandbox,
    warn: (message) => io.stderr(`loom replay: ${message}\n`),
    signal: io.signal,
    onProgress: reporter.progress,
  });
  return reporter.run(result, { label: `replay ${basename(file)}` });
}

export function loadRecording(file: string, from: string): Recording {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(
      `Cannot read recording ${JSON.stringify(file)}: ${
        (error as NodeJS.ErrnoException).code ?? (error as Error).message
      }`,
    );
  }
  const name = basename(file);
  const format = from === "auto" ? detectFileFormat(text, name) : from;
  return format === "loom"
    ? parseRecording(text, { name })
    : importTrajectory(text, { format: format as ImportFormat, name });
}

/** --from auto: a Loom recording by its header line, else whichever importer recognises the JSON (or JSONL). */
function detectFileFormat(text: string, name: string): string {
  const firstLine = text.slice(0, text.indexOf("\n") === -1 ? text.length : text.indexOf("\n"));
  if (firstLine.includes('"loom-recording"')) return "loom";
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSONL chat logs: one message per line
    try {
      json = text.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line));
    } catch {
      throw new UsageError(`${name}: not JSON or JSONL, so no format could be detected (use --from)`);
    }
  }
  const found = detectFormat(json);
  if (!found) {
    throw new UsageError(
      `${name}: not a recognised trajectory (expected ${FORMATS.filter((f) => f !== "auto").join(", ")}; use --from)`,
    );
  }
  return found;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const EXTENSIONS: Record<string, RegExp> = {
  loom: /\.jsonl$/,
  "mini-swe-agent": /\.(traj\.)?json$/,
  "swe-agent": /\.traj(\.json)?$/,
  "openai-messages": /\.jsonl?$/,
  auto: /\.(jsonl?|traj)$/,
};

/** Files in a folder that are never trajectories (batch runs write predictions beside them). */
const NOT_RECORDINGS = new Set(["preds.json", "results.json"]);

/** Files as given; folders expand to their recordings of the chosen format, sorted. */
export function expandRecordings(paths: string[], from: string): string[] {
  const out: string[] = [];
  for (const path of paths) {
    if (isDirectory(path)) {
      const pattern = EXTENSIONS[from] ?? /$/;
      const entries = readdirSync(path, { withFileTypes: true });
      const wanted = (name: string) => pattern.test(name) && !NOT_RECORDINGS.has(name);
      const found = [
        ...entries.filter((e) => e.isFile() && wanted(e.name)).map((e) => join(path, e.name)),
        // batch runs keep each trajectory in a folder named after its instance
        ...entries.filter((e) => e.isDirectory()).flatMap((d) =>
          readdirSync(join(path, d.name)).filter(wanted).map((f) => join(path, d.name, f))
        ),
      ].sort();
      if (found.length === 0) throw new UsageError(`Folder ${JSON.stringify(path)} holds no ${from} recordings`);
      out.push(...found);
    } else out.push(path);
  }
  return out;
}
