// Batch replay's pure rules: the settings a resumed per-recording report must have been made under, and the name
// each recording's report gets. The batch itself (child processes, files) is commands/replay-batch.ts.
import {
  CONTEXT_POLICIES,
  type ContextPolicyName,
  DEFAULT_PREVIEW_MODE,
  DEFAULT_STEP_PROTOCOL,
  type PreviewMode,
  type StepProtocol,
} from "../policy.ts";
import type { ContextReport } from "../report/context-report.ts";
import { digestOf } from "../text/digest.ts";
import { parseRecording } from "./recording.ts";
import { recordingProtocol } from "./replay.ts";

/** What a batch is replayed under, as a resumed report must match it. */
export type BatchSettings = {
  policy: ContextPolicyName;
  version: string;
  recording: string;
  /** The protocol and previews a replay of this recording runs under: the flag's, else the recording's own. */
  protocol: StepProtocol;
  previews: PreviewMode;
};

/**
 * The settings --resume compares, in the order it reports them: a report made under any other value is refused, so
 * an aggregate never mixes runs made under different settings. A new setting of a run is one entry here.
 */
const RESUMED_SETTINGS: readonly {
  /** How the refusal names the setting's value: "--context-policy bounded", "loom 0.4.0". */
  describe: (value: string | null) => string;
  of: (report: ContextReport) => string | null;
  wanted: (batch: BatchSettings) => string | null;
}[] = [
  {
    describe: (value) => `--context-policy ${value}`,
    of: (report) => report.policy,
    wanted: (batch) => batch.policy,
  },
  { describe: (value) => `loom ${value}`, of: (report) => report.loom_version, wanted: (batch) => batch.version },
  {
    describe: (value) => value === null ? "an unnamed recording" : `recording ${value.slice(0, 19)}…`,
    of: (report) => report.recording ?? null,
    wanted: (batch) => batch.recording,
  },
  {
    describe: (value) => `--step-protocol ${value ?? DEFAULT_STEP_PROTOCOL}`,
    of: (report) => report.step_protocol ?? DEFAULT_STEP_PROTOCOL,
    wanted: (batch) => batch.protocol,
  },
  {
    // Previews shape the requests of a policy that cuts outputs to previews only.
    describe: (value) => `--previews ${value}`,
    of: (report) => CONTEXT_POLICIES[report.policy].previews ? report.previews ?? DEFAULT_PREVIEW_MODE : null,
    wanted: (batch) => CONTEXT_POLICIES[batch.policy].previews ? batch.previews : null,
  },
];

/** The first setting a report was made under that differs from the batch's, as words; null when all match. */
export function settingsMismatch(report: ContextReport, batch: BatchSettings): string | null {
  for (const setting of RESUMED_SETTINGS) {
    const found = setting.of(report), wanted = setting.wanted(batch);
    if (found !== wanted) return `made under ${setting.describe(found)}, not ${setting.describe(wanted)}`;
  }
  return null;
}

/**
 * What a replay of a recording's text (null: unreadable) is made under besides the policy and version: the text's
 * sha256 ("unreadable" matches no report), and the protocol and previews the flags ask for, else the recording's own
 * (an imported trajectory is a two-call recording with balanced previews).
 */
export function recordingSettings(
  text: string | null,
  { stepProtocol, previewMode }: { stepProtocol?: StepProtocol; previewMode?: PreviewMode },
): Pick<BatchSettings, "recording" | "protocol" | "previews"> {
  if (text === null) {
    return {
      recording: "unreadable",
      protocol: stepProtocol ?? DEFAULT_STEP_PROTOCOL,
      previews: previewMode ?? DEFAULT_PREVIEW_MODE,
    };
  }
  let own: { protocol: StepProtocol; previews: PreviewMode } = {
    protocol: DEFAULT_STEP_PROTOCOL,
    previews: DEFAULT_PREVIEW_MODE,
  };
  try {
    const recording = parseRecording(text);
    own = { protocol: recordingProtocol(recording), previews: recording.header.slice.previews ?? DEFAULT_PREVIEW_MODE };
  } catch {
    // another agent's trajectory: imported as two-call
  }
  return {
    recording: digestOf(text),
    protocol: stepProtocol ?? own.protocol,
    previews: previewMode ?? own.previews,
  };
}

/**
 * The per-recording report's file name: its position in the batch, then the recording's name, so recordings with the
 * same name in different folders keep one report each ("01-fix-bug.json", "02-fix-bug.json").
 */
export function reportName(file: string, { index, count }: { index: number; count: number }): string {
  const position = String(index + 1).padStart(String(count).length, "0");
  return `${position}-${file.replace(/\.[^.]+$/, "")}.json`;
}
