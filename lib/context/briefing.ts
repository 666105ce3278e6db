// The working state, derived only from typed execution reports — never from file contents or model text.
import { clipText, MESSAGE_LIMIT } from "../text/clip.ts";
import type { ExecutionReport } from "../vocabulary/reports.ts";

const RECENT_ARTIFACTS = 3;

export type LastTest = {
  revision: string;
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  output: string;
};
export type Artifact = { kind: string; path?: string; digest: string; bytes: number; step: number };

/**
 * How an artifact appears in a request: a retired one with its digest and bytes. One whose event is still in the tail
 * is left out: the event right there shows its reference and size, and the working state, which follows the tail and
 * so is written anew on every step, must not repeat it (#37).
 */
export type ArtifactView = { kind: string; path?: string; digest: string; bytes: number };

function viewArtifacts(
  artifacts: readonly Artifact[],
  { retained, abbreviate = (d) => d }: { retained: (step: number) => boolean; abbreviate?: (digest: string) => string },
): ArtifactView[] {
  return artifacts.filter(({ step }) => !retained(step)).map(({ kind, path, digest, bytes }) => {
    const base = path === undefined ? { kind } : { kind, path };
    return { ...base, digest: abbreviate(digest), bytes };
  });
}

export type Briefing = {
  latest_revision: string;
  last_test: LastTest | null;
  /** The step of the last test run (null before the first). */
  last_test_step: number | null;
  tests_current: boolean;
  last_refusal: { step: number; code: string; reason: string } | null;
  recent_artifacts: Artifact[];
};

/**
 * The last test and refusal as a request shows them: while their event is in the tail it shows the revision, exit
 * code, duration, output reference and reason, so the working state names the step instead of repeating them.
 */
export type LastTestView = LastTest | { step: number };
export type RefusalView = { step: number; code: string; reason?: string };

/**
 * The working state as a request carries it: a field with nothing to say (no test yet, no refusal, no retired
 * artifact) is left out rather than sent as null or [] — it follows the tail, so every byte of it is written anew on
 * every step, where legacy pays nothing (#37; docs/architecture.md, "The working state").
 */
export type WorkingState = {
  latest_revision: string;
  last_test?: LastTestView;
  tests_current: boolean;
  last_refusal?: RefusalView;
  recent_artifacts?: ArtifactView[];
  /**
   * Present only while the tests are current: the one plain sentence that they passed on the latest revision and the
   * run may finish. A small model reading `tests_current: true` beside `last_test: {step}` kept editing to the step
   * limit where legacy, showing the passing output last, finished (issue 44).
   */
  next?: string;
};

/** What the working state says while the tests pass on the latest revision. */
export function finishableLine(revision: string): string {
  return `Tests passed on ${revision}, the current revision: you can finish (action finish, status success).`;
}

export function initialBriefing(revision = "r0"): Briefing {
  return {
    latest_revision: revision,
    last_test: null,
    last_test_step: null,
    tests_current: false,
    last_refusal: null,
    recent_artifacts: [],
  };
}

/**
 * The briefing's part of the working state for a request whose tail holds the steps `retained` says; digests in the
 * short form requests show (`abbreviate`, the result store's).
 */
export function viewBriefing(
  briefing: Briefing,
  { retained, abbreviate = (d) => d }: { retained: (step: number) => boolean; abbreviate?: (digest: string) => string },
): WorkingState {
  const { last_test, last_test_step, last_refusal } = briefing;
  const state: WorkingState = { latest_revision: briefing.latest_revision, tests_current: briefing.tests_current };
  if (last_test) {
    state.last_test = last_test_step !== null && retained(last_test_step)
      ? { step: last_test_step }
      : { ...last_test, output: abbreviate(last_test.output) };
  }
  if (last_refusal) {
    state.last_refusal = retained(last_refusal.step)
      ? { step: last_refusal.step, code: last_refusal.code }
      : last_refusal;
  }
  const artifacts = viewArtifacts(briefing.recent_artifacts, { retained, abbreviate });
  if (artifacts.length > 0) state.recent_artifacts = artifacts;
  // tests_current after latest_revision and last_test, as before: the key order is part of the bytes a cache keeps.
  const { latest_revision, last_test: test, tests_current, ...rest } = state;
  // Last, so it is the line nearest the question the request asks.
  const next = tests_current ? { next: finishableLine(latest_revision) } : {};
  return { latest_revision, ...(test ? { last_test: test } : {}), tests_current, ...rest, ...next };
}

/** Folds one report (of `step`) into the briefing. `sizeOf` gives the byte size of a stored result. */
export function applyReport(
  briefing: Briefing,
  report: ExecutionReport,
  { sizeOf, step }: { sizeOf: (digest: string) => number; step: number },
): Briefing {
  const next: Briefing = { ...briefing };
  const artifact = (kind: string, digest: string, path?: string) => {
    const bytes = sizeOf(digest);
    const entry: Artifact = path === undefined ? { kind, digest, bytes, step } : { kind, path, digest, bytes, step };
    next.recent_artifacts = [...briefing.recent_artifacts.filter((a) => a.digest !== digest), entry].slice(
      -RECENT_ARTIFACTS,
    );
  };
  switch (report.kind) {
    case "edit":
      next.latest_revision = report.revision_after;
      break;
    case "test": {
      const { kind: _, revision_after, ...test } = report;
      next.last_test = test;
      next.last_test_step = step;
      // Files the run changed make a new revision: the pass (or failure) was on the one before.
      if (revision_after !== undefined) next.latest_revision = revision_after;
      artifact("test", report.output);
      break;
    }
    case "refusal":
      // Reasons may quote what the model sent (a path, an argv); the working state must stay small.
      next.last_refusal = { step: report.step, code: report.code, reason: clipText(report.reason, MESSAGE_LIMIT) };
      break;
    case "read":
    case "list":
    case "search":
      artifact(report.kind, report.result, report.path);
      break;
    case "command":
      if (report.revision_after !== undefined) next.latest_revision = report.revision_after;
      artifact("command", report.output);
      break;
    case "print":
      artifact("print", report.text);
      break;
    case "finish":
      break;
  }
  return { ...next, tests_current: testsCurrent(next) };
}

/**
 * The briefing after the workspace became `revision` outside any action (a leftover writer after the last step): no
 * test ran on it, so the tests are not current. The same rule as every report's, decided here once.
 */
export function settleRevision(briefing: Briefing, revision: string): Briefing {
  const next = { ...briefing, latest_revision: revision };
  return { ...next, tests_current: testsCurrent(next) };
}

/** What decides whether the tests are current: the last test (if any) and the latest revision. */
type TestedRevision = {
  last_test: Pick<LastTest, "revision" | "exit_code" | "timed_out"> | null;
  latest_revision: string;
};

/** SPEC §4: the tests are current when the last test ran on the latest revision and passed. A pass on revision A
 * never validates a later revision B. */
function testsCurrent({ last_test, latest_revision }: TestedRevision): boolean {
  return last_test !== null && last_test.revision === latest_revision && last_test.exit_code === 0 &&
    !last_test.timed_out;
}

/**
 * Why the tests do not vouch for the latest revision, in words ("last test failed on r3"); null when they do. What a
 * refused finish tells the model and what a run's text line says after "NOT verified".
 */
export function unverifiedReason(briefing: TestedRevision): string | null {
  const { last_test: test, latest_revision: latest } = briefing;
  if (testsCurrent(briefing)) return null;
  if (test === null) return `no test ran (latest revision ${latest})`;
  if (test.revision !== latest) return `last test ran on ${test.revision}, the workspace is now ${latest}`;
  if (test.timed_out) return `last test timed out on ${test.revision}`;
  return `last test failed on ${test.revision} (exit code ${test.exit_code ?? "none: killed"})`;
}
