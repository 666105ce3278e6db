// loom replay: drive the loop from recorded workflows (Loom's own, or imported from another agent's format).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { startRun } from "../lib/run/start-run.ts";
import { runPlan } from "../lib/run/run-plan.ts";
import { describeFsError, UsageError } from "../lib/errors.ts";
import { digestOf } from "../lib/text/digest.ts";
import { parseRecordingText } from "../lib/recording/format.ts";
import type { Io } from "./io.ts";
import { parseCommand } from "./cli-spec.ts";
import { settingFlags, startupFiles, userSettings } from "./config.ts";
import { outputFormatOption, outputPathOption } from "./options.ts";
import { REPLAY_SPEC } from "./specs.ts";
import { defaultJobs, replayBatch } from "./replay-batch.ts";
import { traceWriter } from "./trace-file.ts";
import { Reporter } from "./reporter.ts";
import { type NamedPath, realPathOf, refuseCollisions, refuseWorkspaceFiles } from "./output-paths.ts";
import { replayCompare } from "./replay-compare.ts";

export async function replayCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(REPLAY_SPEC, argv, { command: "replay" });
  const from = values.from ?? "auto";
  if (values.html !== undefined && !values.compare) throw new UsageError("--html is only used with --compare");
  if (values.compare) return compare(values, positionals, io);
  const notice = (message: string) => io.stderr(`loom replay: ${message}\n`);
  // Every setting by lib/settings/settings.ts's one precedence (flag > environment > config file > built-in for the
  // policy).
  const flags = settingFlags(values);
  const user = userSettings(io, flags);
  const policy = user.plan.settings.context_policy.value;
  const stepProtocol = flags.step_protocol;
  const previewMode = flags.previews;
  const format = outputFormatOption({ json: values.json, format: values["output-format"] });
  if (values.execute && !values.workspace) throw new UsageError("--execute needs --workspace DIR");
  if (values.workspace && !values.execute) throw new UsageError("--workspace is only used with --execute");
  if (flags.sandbox && !values.execute) throw new UsageError("--sandbox is only used with --execute");
  const jobs = values.jobs === undefined ? defaultJobs() : Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) {
    throw new UsageError(`--jobs ${JSON.stringify(values.jobs)}: expected a positive integer`);
  }
  if (positionals.length === 0) throw new UsageError("No recording given (loom replay RECORDING…)");
  // Where reports go is checked before anything runs: a replay must not end in an unwritable path.
  const reportPath = values["context-report"]
    ? outputPathOption("--context-report", values["context-report"], { cwd: io.cwd, notice })
    : undefined;
  const reportsDir = values["reports-dir"]
    ? outputPathOption("--reports-dir", values["reports-dir"], { cwd: io.cwd, folder: true, notice })
    : undefined;
  if (positionals.includes("-") && positionals.length > 1) {
    throw new UsageError("- (stdin) is one recording: give it alone, not with other recordings");
  }
  const tracePath = values.trace ? outputPathOption("--trace", values.trace, { cwd: io.cwd, notice }) : undefined;
  const diffPath = values.diff ? outputPathOption("--diff", values.diff, { cwd: io.cwd, notice }) : undefined;
  if (diffPath && !values.execute) {
    throw new UsageError("--diff needs --execute: a replay without it changes no workspace");
  }
  const files = positionals[0] === "-" ? ["-"] : expandRecordings(positionals.map((p) => resolve(io.cwd, p)), from);
  // Every output checked together before anything is written: no two name one file, none names a recording replayed,
  // none overwrites a file of the workspace that Loom did not write.
  const outputs: NamedPath[] = [
    ...(reportPath ? [{ flag: "--context-report", path: reportPath, kind: "report" as const }] : []),
    ...(tracePath ? [{ flag: "--trace", path: tracePath, kind: "trace" as const }] : []),
    ...(diffPath ? [{ flag: "--diff", path: diffPath, kind: "diff" as const }] : []),
  ];
  const workspaces = [io.cwd, ...(values.workspace ? [resolve(io.cwd, values.workspace)] : [])];
  const startup = startupFiles(io.env, workspaces);
  refuseCollisions(outputs, {
    inputs: [...files.filter((f) => f !== "-").map((path) => ({ flag: "RECORDING", path })), ...startup],
  });
  // A batch's reports are named after its recordings (models.jsonl -> models.json): never in the folders of the files
  // read at start.
  if (reportsDir) {
    const folders = new Map<string, string[]>();
    for (const file of startup) folders.set(dirname(file.path), [...folders.get(dirname(file.path)) ?? [], file.flag]);
    const real = realPathOf(reportsDir);
    for (const [folder, what] of folders) {
      if (real === realPathOf(folder) || real.startsWith(realPathOf(folder) + sep)) {
        throw new UsageError(
          `--reports-dir ${JSON.stringify(reportsDir)} lies inside the folder of ${what.join(" and ")} ` +
            `${JSON.stringify(folder)}: a report named after a recording (models.jsonl -> models.json) would replace ` +
            "what Loom reads at start; choose another folder",
        );
      }
    }
  }
  if (values.workspace) refuseWorkspaceFiles(outputs, { workspaces: [resolve(io.cwd, values.workspace)] });

  const folder = positionals.some((p) => isDirectory(resolve(io.cwd, p)));
  if (files.length > 1 || (values.jobs !== undefined || values.resume) && folder) {
    if (values.execute) {
      throw new UsageError("--execute replays one recording at a time (each needs its own workspace)");
    }
    if (tracePath) throw new UsageError("--trace traces one recording at a time (one trace file per run)");
    if (format === "stream-json") {
      throw new UsageError("--output-format stream-json follows one recording; a batch prints json (one summary)");
    }
    const reporter = new Reporter(io, { command: "replay", format, quiet: values.quiet });
    return replayBatch(files, {
      io,
      reporter,
      jobs,
      from,
      policy,
      reportPath,
      reportsDir,
      resume: values.resume,
      stepProtocol,
      previewMode,
      requirePassingTests: values["require-passing-tests"],
    });
  }

  if (values.resume) throw new UsageError("--resume continues a batch (several recordings or a folder)");
  const [file] = files;
  if (file === undefined) throw new UsageError("No recording found (loom replay RECORDING…)");
  const text = file === "-" ? await io.readStdin() : readRecordingText(file);
  // Its digest goes into the report: batches resume and pair runs by the recording, not its name or position.
  const recording = parseRecordingText(text, { name: file === "-" ? "stdin" : basename(file), from });
  const reporter = new Reporter(io, { command: "replay", format, quiet: values.quiet });
  const workspace = values.workspace ? resolve(io.cwd, values.workspace) : ".";
  // The command's one resolution (LOOM_CONTEXT_POLICY, LOOM_SANDBOX, the config files), as loom config shows it.
  const plan = runPlan(user.plan, {
    contextReport: reportPath,
    trace: tracePath,
    // The recording replayed with --execute may sit in the workspace it runs in: like the trace, not the agent's.
    ownFiles: file === "-" ? [] : [resolve(io.cwd, file)],
    diff: diffPath,
  });
  const result = await startRun({ request: { ...recording.header.slice, workspace }, file: basename(file) }, plan, {
    env: io.env,
    replay: { recording, execute: values.execute === true, digest: digestOf(text) },
    // --quiet: the result and the report say whether the run was sandboxed (sandbox.active).
    warn: values.quiet ? () => {} : (message) => io.stderr(`loom replay: ${message}\n`),
    signal: io.signal,
    onProgress: reporter.progress,
    onEvent: reporter.onEvent,
    trace: tracePath ? traceWriter(tracePath, { shown: values.trace ?? tracePath }) : undefined,
  });
  // A recording missing some execution reports is compared on the steps it has reports of; the others are said.
  const reported = new Set(recording.executions.map((execution) => execution.step));
  const uncompared = result.replay
    ? (result.report.step_log ?? []).filter((s) => s.action !== null && !reported.has(s.step)).map((s) => s.step)
    : [];
  return reporter.run(result, { label: `replay ${file === "-" ? "stdin" : basename(file)}`, uncompared });
}

type ReplayValues = ReturnType<typeof parseCommand<(typeof REPLAY_SPEC)["flags"]>>["values"];

/** --compare takes folders or files and prints one table: the flags of a single replay do not apply. */
function compare(values: ReplayValues, positionals: string[], io: Io): Promise<number> {
  const alone = [
    "execute",
    "workspace",
    "context-policy",
    "context-report",
    "reports-dir",
    "resume",
    "trace",
    "diff",
    "jobs",
  ]
    .filter((flag) =>
      (values as Record<string, unknown>)[flag] !== undefined && (values as Record<string, unknown>)[flag] !== false
    );
  if (alone.length > 0) {
    throw new UsageError(`--compare replays under both policies and prints one table; it takes no --${alone[0]}`);
  }
  if (positionals.length === 0) throw new UsageError("No folder given (loom replay FOLDER… --compare)");
  if (positionals.includes("-")) throw new UsageError("--compare reads folders and files, not stdin");
  if (values.json && values.html !== undefined) throw new UsageError("Choose one of --json and --html, not both");
  const format = outputFormatOption({ json: values.json, format: values["output-format"] });
  if (format === "stream-json") throw new UsageError("--compare prints text, --json or --html, not stream-json");
  if (values.html !== undefined) {
    outputPathOption("--html", values.html, { cwd: io.cwd, notice: (m) => io.stderr(`loom replay: ${m}\n`) });
  }
  return replayCompare(positionals, {
    io,
    from: values.from ?? "auto",
    json: format === "json",
    html: values.html,
    quiet: values.quiet === true,
  });
}

function readRecordingText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read recording ${JSON.stringify(file)}: ${describeFsError(error)}`);
  }
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
function expandRecordings(paths: string[], from: string): string[] {
  const out: string[] = [];
  for (const path of paths) {
    if (isDirectory(path)) {
      const pattern = EXTENSIONS[from] ?? /$/;
      const entries = readdirSync(path, { withFileTypes: true });
      const wanted = (name: string) => pattern.test(name) && !NOT_RECORDINGS.has(name);
      const found = [
        ...entries.filter((e) => e.isFile() && wanted(e.name)).map((e) => join(path, e.name)),
        // batch runs keep each trajectory in a folder named after its instance
        // (a batch's own per-recording reports folder, NAME.runs, is never a source of recordings)
        ...entries.filter((e) => e.isDirectory() && !e.name.endsWith(".runs")).flatMap((d) =>
          readdirSync(join(path, d.name)).filter(wanted).map((f) => join(path, d.name, f))
        ),
      ].sort();
      if (found.length === 0) throw new UsageError(`Folder ${JSON.stringify(path)} holds no ${from} recordings`);
      out.push(...found);
    } else out.push(path);
  }
  return out;
}
