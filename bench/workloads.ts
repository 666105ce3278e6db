// The shipped workloads (real trajectories in a workloads folder, ../shared/workloads unless `--workloads DIR` or
// LOOM_WORKLOADS says otherwise; Loom's own recorded workflows in testdata/) and an in-process replay of one recording
// under one context policy: the same path `loom replay` takes through startRun, with the scripted provider and the
// recorded executor, minus the process and the report file.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type RunResult, startRun } from "../lib/run/start-run.ts";
import { planRun } from "../lib/run/run-plan.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { canonicalJson, utf8Length } from "../lib/text/digest.ts";
import { importTrajectory } from "../lib/recording/importers/index.ts";
import { textOf } from "../lib/recording/importers/source.ts";
import { parseRecording, type Recording } from "../lib/recording/recording.ts";
import { convertRecording, RecordedExecutor, ScriptedProvider } from "../lib/recording/replay.ts";
import type { StepProtocol } from "../lib/policy.ts";
import type { Provider } from "../lib/vocabulary/turn.ts";
import type { PreviewSizes } from "../lib/context/render-event.ts";
import { OPENHANDS_CALIBRATED_SEEDS, openhandsCalibratedRecording } from "../tests/fixtures/openhands-calibrated.ts";

export const SYSTEMS = [
  "mini-swe-agent",
  "swe-agent",
  "swe-agent-long",
  "openhands (format samples)",
  "loom testdata",
  "synthetic openhands-calibrated",
] as const;
export type System = (typeof SYSTEMS)[number];

export type Workload = {
  system: System;
  name: string;
  path: string;
  format: "loom" | "mini-swe-agent" | "swe-agent" | "openai-messages" | "synthetic";
};

/** Where the real trajectories live unless `--workloads DIR` or LOOM_WORKLOADS names another folder. */
export const SHARED_WORKLOADS = new URL("../../shared/workloads/", import.meta.url);
export const TESTDATA_WORKFLOWS = new URL("../testdata/workflows/", import.meta.url);

/** The workloads folder: `--workloads DIR` in argv, else LOOM_WORKLOADS, else ../shared/workloads. */
export function workloadsDir(
  { argv = [], env = process.env }: { argv?: string[]; env?: Record<string, string | undefined> } = {},
): string {
  const at = argv.findIndex((a) => a === "--workloads" || a.startsWith("--workloads="));
  if (at >= 0) {
    const value = argv[at].includes("=") ? argv[at].slice("--workloads=".length) : argv[at + 1];
    if (!value) throw new Error("--workloads needs a folder");
    return resolve(value);
  }
  if (env.LOOM_WORKLOADS) return resolve(env.LOOM_WORKLOADS);
  return resolve(fileURLToPath(SHARED_WORKLOADS));
}

/** One line saying the workloads folder is missing and how to get it, or null when it is there. */
export function missingWorkloads(dir: string): string | null {
  if (existsSync(join(dir, "mini-swe-agent")) && existsSync(join(dir, "swe-agent"))) return null;
  return `no workloads folder at ${dir} (get it with \`bash scripts/fetch-workloads.sh [DIR]\`; name another ` +
    "folder with LOOM_WORKLOADS=DIR or bench's --workloads DIR)";
}

function sources(dir: string | null): { system: System; dir: URL; pattern: RegExp; format: Workload["format"] }[] {
  const shared = dir === null ? null : pathToFileURL(join(dir, "/"));
  return [
    ...(shared === null ? [] : [
      {
        system: "mini-swe-agent" as const,
        dir: new URL("mini-swe-agent/", shared),
        pattern: /\.json$/,
        format: "mini-swe-agent" as const,
      },
      {
        system: "swe-agent" as const,
        dir: new URL("swe-agent/", shared),
        pattern: /\.traj$/,
        format: "swe-agent" as const,
      },
      // Read in place when the folder has them (scripts/fetch-workloads.sh pins both): longer SWE-agent runs from
      // SWE-smith, and two short OpenHands completion logs (format samples, not a benchmark).
      {
        system: "swe-agent-long" as const,
        dir: new URL("swe-agent-long/", shared),
        pattern: /\.traj$/,
        format: "swe-agent" as const,
      },
      {
        system: "openhands (format samples)" as const,
        dir: new URL("openhands/", shared),
        pattern: /\.json$/,
        format: "openai-messages" as const,
      },
    ]),
    { system: "loom testdata", dir: TESTDATA_WORKFLOWS, pattern: /\.jsonl$/, format: "loom" },
  ];
}

/**
 * Every shipped workload, by system, each folder sorted by file name (only Loom's own when `dir` is null); then the
 * SYNTHETIC OpenHands-style runs calibrated to 361 real ones' shape (generated in memory by
 * tests/fixtures/openhands-calibrated.ts).
 */
export function listWorkloads(dir: string | null = workloadsDir()): Workload[] {
  const shipped = sources(dir).flatMap(({ system, dir, pattern, format }) =>
    (system === "swe-agent-long" || system === "openhands (format samples)") && !existsSync(dir) ? [] : readdirSync(dir)
      .filter((file) => pattern.test(file))
      .sort()
      .map((name): Workload => ({ system, name, format, path: fileURLToPath(new URL(name, dir)) }))
  );
  const synthetic = OPENHANDS_CALIBRATED_SEEDS.map((seed): Workload => ({
    system: "synthetic openhands-calibrated",
    name: `openhands-calibrated-${seed} (SYNTHETIC)`,
    format: "synthetic",
    path: `synthetic:${seed}`,
  }));
  return [...shipped, ...synthetic];
}

export type LoadedWorkload = Workload & {
  recording: Recording;
  /**
   * UTF-8 bytes of the message texts the original agent sent in its last model call (every message before its last
   * answer, demonstrations left out), when the format keeps its messages.
   */
  historyBytes: number | null;
};

/** Reads and imports one workload as a recorded workflow. */
export function loadWorkload(workload: Workload): LoadedWorkload {
  if (workload.format === "synthetic") {
    const seed = Number(workload.path.split(":")[1]);
    return { ...workload, recording: openhandsCalibratedRecording(seed), historyBytes: null };
  }
  const text = readFileSync(workload.path, "utf8");
  const recording = workload.format === "loom"
    ? parseRecording(text, { name: workload.name })
    : importTrajectory(text, { format: workload.format, name: workload.name });
  return { ...workload, recording, historyBytes: historyBytes(text, workload.format) };
}

function historyBytes(text: string, format: Workload["format"]): number | null {
  if (format === "loom" || format === "synthetic") return null;
  const json = JSON.parse(text) as { messages?: unknown; history?: unknown };
  const messages = format === "swe-agent" ? json.history : json.messages;
  if (!Array.isArray(messages) || messages.length === 0) return null;
  const list = messages as { role?: unknown; content?: unknown; is_demo?: unknown }[];
  const lastAnswer = list.findLastIndex((m) => m.role === "assistant");
  if (lastAnswer < 0) return null;
  let bytes = 0;
  for (const message of list.slice(0, lastAnswer)) {
    if (message.is_demo === true) continue;
    bytes += utf8Length(textOf(message.content));
  }
  return bytes;
}

/**
 * Replays a recording in-process; `wrap` may wrap the scripted provider (to look at each request). `protocol`
 * converts the recorded answers to that step protocol first (default: the recording's own).
 */
export function replayRecording(
  original: Recording,
  policy: ContextPolicyName,
  { wrap, now = () => performance.now(), previews, protocol }: {
    wrap?: (provider: Provider) => Provider;
    now?: () => number;
    previews?: PreviewSizes;
    protocol?: StepProtocol;
  } = {},
): Promise<RunResult> {
  const recording = protocol ? convertRecording(original, protocol) : original;
  const scripted = new ScriptedProvider(recording.answers);
  const plan = planRun({ contextPolicy: policy, previews }, { env: process.env });
  return startRun({ request: { ...recording.header.slice, workspace: "." } }, plan, {
    provider: wrap ? wrap(scripted) : scripted,
    executor: (store) => new RecordedExecutor(recording.executions, { store }),
    now,
  });
}

/** What one run sent, reduced to the numbers the benchmark and the ceiling test need. */
export type RunNumbers = {
  outcome: string;
  error: string | null;
  calls: number;
  requestBytes: number;
  maxRequestBytes: number;
  checkpoints: number;
  prefixChanges: number;
  callBytes: number[];
  /** Canonical JSON of the execution reports, to compare the policies. */
  reports: string;
};

export function runNumbers(result: RunResult): RunNumbers {
  const callBytes = result.report.calls.map((c) => c.request_bytes);
  return {
    outcome: result.outcome,
    error: result.error?.message ?? null,
    calls: result.report.model_calls,
    requestBytes: callBytes.reduce((a, b) => a + b, 0),
    maxRequestBytes: callBytes.reduce((a, b) => Math.max(a, b), 0),
    checkpoints: result.report.checkpoints,
    prefixChanges: result.report.prefix_changes,
    callBytes,
    reports: canonicalJson(result.reports),
  };
}
