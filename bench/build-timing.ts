// Request-build cost of the bounded policy against one JSON.stringify of the same request, with 64, 1,024 and 4,096
// events in the archive. The context is driven directly, as the loop drives it (append the step's event, build the
// selection request, then the arguments request), with real events: the steps of the mini-swe-agent workloads.
import { ACTION_DESCRIPTIONS, type ActionName, takesArguments } from "../lib/vocabulary/actions.ts";
import { argumentsResponseSchema, selectionResponseSchema } from "../lib/vocabulary/answer.ts";
import { Archive, ARCHIVE_MAX_EVENTS } from "../lib/context/archive.ts";
import { applyReport, initialBriefing, viewBriefing } from "../lib/context/briefing.ts";
import { BoundedContext, type RequestParts, type TailView } from "../lib/context/context.ts";
import { utf8Length } from "../lib/text/digest.ts";
import { createEvent } from "../lib/context/events.ts";
import type { Recording } from "../lib/recording/recording.ts";
import type { ExecutionReport } from "../lib/vocabulary/reports.ts";
import { availableActions } from "../lib/slice.ts";
import { ResultStore } from "../lib/context/store.ts";

export type TimingStep = {
  action: ActionName;
  args: Record<string, unknown>;
  reason?: string;
  report: ExecutionReport;
  results: Record<string, string>;
};

/** The executed steps of the recordings, in order, with the reason each selection gave. */
export function stepsOf(recordings: readonly Recording[]): TimingStep[] {
  const steps: TimingStep[] = [];
  for (const recording of recordings) {
    const reasons = new Map<number, string>();
    for (const answer of recording.answers) {
      const value = answer.value as { reason?: unknown };
      if (answer.phase === "selection" && typeof value?.reason === "string") reasons.set(answer.step, value.reason);
    }
    for (const e of recording.executions) {
      steps.push({ action: e.action, args: e.args, reason: reasons.get(e.step), report: e.report, results: e.results });
    }
  }
  return steps;
}

export type SizeSamples = {
  /** Archived events when the measured requests were built (the window ending here). */
  archived: number;
  buildMs: number[];
  stringifyMs: number[];
  requestBytes: number[];
  /** Measured builds that retired a batch (made a checkpoint). */
  checkpoints: number;
};

export type BuildTimingOptions = {
  instructions: string;
  intent: string;
  steps: readonly TimingStep[];
  sizes?: readonly number[];
  /** Requests are measured while the archive holds (size - window, size] events. */
  window?: number;
  /** Measured rounds, after one warm-up round. */
  rounds?: number;
  now?: () => number;
};

export function measureBuildTimes(
  {
    instructions,
    intent,
    steps,
    sizes = [64, 1024, ARCHIVE_MAX_EVENTS],
    window = 32,
    rounds = 8,
    now = () => performance.now(),
  }: BuildTimingOptions,
): SizeSamples[] {
  const samples = sizes.map((
    archived,
  ) => ({ archived, buildMs: [], stringifyMs: [], requestBytes: [], checkpoints: 0 } as SizeSamples));
  for (let round = 0; round <= rounds; round++) {
    oneRound({ instructions, intent, steps, sizes, window, now, record: round > 0 ? samples : null });
  }
  return samples;
}

function oneRound(
  { instructions, intent, steps, sizes, window, now, record }: Required<Omit<BuildTimingOptions, "rounds">> & {
    record: SizeSamples[] | null;
  },
): void {
  const actions = availableActions({
    intent,
    instructions,
    workspace: ".",
    actions: ["run_command"],
    test: { command: ["true"], timeout_ms: 1000 },
    model: "bench",
    limits: { max_steps: ARCHIVE_MAX_EVENTS + 1 },
  });
  const selectionCandidates: RequestParts["candidates"] = {
    section: "candidates",
    actions: actions.map((name) => ({ name, description: ACTION_DESCRIPTIONS[name] })),
  };
  const store = new ResultStore();
  const archive = new Archive();
  const context = new BoundedContext({ instructions, intent, store });
  let briefing = initialBriefing();
  const last = Math.max(...sizes);

  const measure = (parts: RequestParts) => {
    const target = record?.find((s) => archive.length > s.archived - window && archive.length <= s.archived);
    if (!target) {
      context.build(parts);
      return;
    }
    const t0 = now();
    const built = context.build(parts);
    const t1 = now();
    const text = JSON.stringify(built.request);
    const t2 = now();
    if (utf8Length(text) !== built.bytes) {
      throw new Error(`Request bytes ${built.bytes} != ${utf8Length(text)} serialized`);
    }
    target.buildMs.push(t1 - t0);
    target.stringifyMs.push(t2 - t1);
    target.requestBytes.push(built.bytes);
    if (built.checkpointed) target.checkpoints += 1;
  };

  for (let step = 1; step <= last + 1; step++) {
    const source = steps[(step - 1) % steps.length];
    // The working state exactly as the loop assembles it.
    const state = (view: TailView) => viewBriefing(briefing, { retained: view.retains });
    // The counters ride on the candidates, as the loop sends them.
    const counters = { step, max_steps: ARCHIVE_MAX_EVENTS + 1, lookups_used: 0 };
    measure({
      phase: "selection",
      responseSchema: selectionResponseSchema(actions),
      candidates: { ...selectionCandidates, ...counters },
      state,
      lookups: [],
    });
    if (takesArguments(source.action)) {
      measure({
        phase: "arguments",
        responseSchema: argumentsResponseSchema(source.action),
        candidates: { section: "candidates", action: source.action, ...counters },
        state,
        lookups: [],
      });
    }
    if (archive.length >= last) break;
    for (const [digest, content] of Object.entries(source.results)) store.putVerified(digest, content);
    const sealed = createEvent(
      {
        seq: archive.length + 1,
        step,
        action: source.action,
        args: source.args,
        reason: source.reason,
        report: source.report,
      },
      store,
    );
    archive.append(sealed);
    context.append(sealed);
    briefing = applyReport(briefing, source.report, { sizeOf: (digest) => store.size(digest) ?? 0, step });
  }
  archive.clear();
  store.clear();
}
