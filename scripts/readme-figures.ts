// Regenerates every figure block of README.md from what produces it, so no figure can go stale: the usage lines and
// the exit-code table from the command specs, the bundled workflow's comparison by replaying it under both policies,
// and the long trajectory's comparison from the workloads folder (../shared/workloads or LOOM_WORKLOADS; that block
// is left as it is when the folder is missing). tests/readme-figures.test.ts fails when README.md differs.
// Usage: bun scripts/readme-figures.ts [--check]   (--check: exit 1 if README.md differs instead of writing it)
//
// A block is the fenced code between `<!-- figures: NAME -->` and `<!-- /figures -->`.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { renderExitCodes, usageLines } from "../commands/cli-spec.ts";
import { COMMAND_SPECS, EXIT_CODE_TEXT } from "../commands/specs.ts";
import { startRun } from "../lib/run/start-run.ts";
import { planRun } from "../lib/run/run-plan.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { parseRecordingText } from "../lib/recording/format.ts";
import { summarizeReports } from "../lib/report/summary.ts";
import { renderSummaryText } from "../lib/report/summary-text.ts";
import { digestOf } from "../lib/text/digest.ts";
import { renderResultText, Reporter } from "../commands/reporter.ts";
import type { Io } from "../commands/io.ts";
import { missingWorkloads, workloadsDir } from "../bench/workloads.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
export const README = join(ROOT, "README.md");

/** The long mini-swe-agent trajectory the README compares (from the benchmark's workloads). */
const TRAJECTORY = "mini-swe-agent/django__django-11138.json";

/**
 * What `loom run` prints at the end, as the bundled recording's run printed it (replayed: the same loop, the same
 * steps and tests), with the report where the Quick start writes it.
 */
async function quickStartResult(): Promise<string> {
  const text = readFileSync(join(ROOT, "testdata/workflows/fix-bug.jsonl"), "utf8");
  const recording = parseRecordingText(text, { name: "fix-bug.jsonl", from: "loom" });
  const plan = planRun({}, { env: process.env });
  const result = await startRun({ request: { ...recording.header.slice, workspace: "." } }, plan, {
    replay: { recording, execute: false, digest: digestOf(text) },
  });
  let json = "";
  const io: Io = {
    stdout: (t) => void (json += t),
    stderr: () => {},
    readStdin: () => Promise.resolve(""),
    env: {},
    cwd: ROOT,
    isTTY: false,
    signal: new AbortController().signal,
  };
  new Reporter(io, { command: "run", format: "json" }).run(result, { label: "run" });
  const summary = { ...JSON.parse(json), report_path: "/home/me/your-project/loom-report.json" };
  return renderResultText(summary, { label: "run" }).trimEnd();
}

/** A recording replayed under each policy, as `loom replay FILE --context-policy P` does; the reports by name. */
async function replayBoth(file: string, { from, names }: { from: string; names: [string, string] }) {
  const text = readFileSync(file, "utf8");
  const reports = [];
  for (const [i, policy] of (["legacy", "bounded"] as ContextPolicyName[]).entries()) {
    const recording = parseRecordingText(text, { name: file, from });
    const plan = planRun({ contextPolicy: policy }, { env: process.env });
    const result = await startRun({ request: { ...recording.header.slice, workspace: "." } }, plan, {
      replay: { recording, execute: false, digest: digestOf(text) },
    });
    reports.push({ file: names[i], kind: "run" as const, report: result.report });
  }
  return renderSummaryText(summarizeReports(reports)).split("\n");
}

/**
 * The header and the rows of a comparison that `wanted` names: a top-level label ("policy"), or "heading/row" for a
 * row under a heading ("request bytes/total"; the heading itself is kept when any of its rows is).
 */
function rowsOf(lines: string[], wanted: string[]): string[] {
  const header = lines.findIndex((l) => l.trimStart().startsWith("[1] "));
  const kept = [lines[header]];
  let heading = "";
  for (const line of lines.slice(header + 1)) {
    const label = line.trimStart().split(/ {2,}/)[0];
    if (!line.startsWith(" ")) {
      heading = label;
      if (wanted.includes(label) || wanted.some((w) => w.startsWith(`${label}/`))) kept.push(line);
    } else if (wanted.includes(`${heading}/${label}`)) kept.push(line);
  }
  return kept;
}

/** Each block's text by name; a block whose source is missing here is absent (and left as the README has it). */
export async function figureBlocks({ workloads = workloadsDir() }: { workloads?: string } = {}) {
  const blocks = new Map<string, string>();
  const usage = Object.entries(COMMAND_SPECS).flatMap(([name, spec]) => usageLines(name, spec));
  blocks.set("usage", usage.join("\n"));
  blocks.set("exit-codes", renderExitCodes(EXIT_CODE_TEXT).trimEnd());
  blocks.set("quick-start-result", await quickStartResult());
  const example = await replayBoth(join(ROOT, "testdata/workflows/fix-bug.jsonl"), {
    from: "loom",
    names: ["legacy.json", "bounded.json"],
  });
  // The comparison down to the largest request: the elapsed rows below it are the machine's, not the workflow's.
  blocks.set(
    "example-comparison",
    example.slice(0, example.findIndex((l) => l.startsWith("largest request")) + 1).join("\n"),
  );
  if (missingWorkloads(workloads) === null) {
    const long = await replayBoth(join(workloads, TRAJECTORY), {
      from: "mini-swe-agent",
      names: ["l2.json", "b2.json"],
    });
    const labels = [
      "policy",
      "model calls",
      "request bytes/selection",
      "request bytes/arguments",
      "request bytes/total",
      "largest request",
      "checkpoints",
      "retired events",
      "usage/input",
      "usage/cache read",
    ];
    blocks.set("trajectory-comparison", rowsOf(long, labels).join("\n"));
  }
  return blocks;
}

// The body (possibly empty) never reaches into another block.
const BLOCK = /(<!-- figures: ([a-z-]+) -->\n```[a-z]*\n)((?:(?!<!-- figures:)[\s\S])*?)(```\n<!-- \/figures -->)/g;

/** The README with every block it marks replaced by its generated text; throws on a block with no generator. */
export function withFigures(readme: string, blocks: Map<string, string>): string {
  return readme.replace(BLOCK, (whole, open: string, name: string, _body: string, close: string) => {
    if (!blocks.has(name)) {
      if (["trajectory-comparison"].includes(name)) return whole; // its source is not on this machine
      throw new Error(`README.md: no generator for the figures block "${name}"`);
    }
    return `${open}${blocks.get(name)}\n${close}`;
  });
}

if (import.meta.main) {
  const check = process.argv.includes("--check");
  const before = readFileSync(README, "utf8");
  const after = withFigures(before, await figureBlocks());
  if (after === before) console.log("README.md: every figure is current");
  else if (check) {
    console.error("README.md: figures differ from what produces them; run: bun scripts/readme-figures.ts");
    process.exit(1);
  } else {
    writeFileSync(README, after);
    console.log("README.md: figures regenerated");
  }
}
