// The governed loop: selection -> arguments -> execution, until finish, a limit, a failure or a suspension.
// Pure orchestration: the provider, executor, clock and recorder are passed in.
import { ACTION_DESCRIPTIONS, ActionArguments, type ActionName, takesArguments } from "./actions.ts";
import {
  argumentsResponseSchema,
  asLookup,
  lookupKind,
  LOOKUPS_PER_STAGE,
  parseDecision,
  selectionDecision,
  selectionResponseSchema,
  TASKS,
} from "./answer.ts";
import { Archive } from "./archive.ts";
import {
  applyReport,
  type Briefing,
  initialBriefing,
  type LastTest,
  viewArtifacts,
  type WorkingState,
} from "./briefing.ts";
import { CEILING_BYTES } from "./budget.ts";
import { type ContextPolicyName, createContext, type RequestParts, type TailView } from "./context.ts";
import { type CallRecord, type ContextReport, ReportBuilder } from "./context-report.ts";
import { utf8Length } from "./digest.ts";
import { errorMessage, InterruptedError, LoomError } from "./errors.ts";
import type { Outcome } from "./outcome.ts";
import { createEvent } from "./events.ts";
import type { Executor } from "./executor.ts";
import { answerLookup } from "./lookups.ts";
import type { RecordedAnswer, RecordedExecution } from "./recording.ts";
import { type ExecutionReport, reportRefs } from "./reports.ts";
import { availableActions, type SliceRequest } from "./slice.ts";
import type { ResultStore } from "./store.ts";
import type { Phase, Provider, Section } from "./turn.ts";
import { formatZodError } from "./zod-error.ts";
import { clipText, echo, MESSAGE_LIMIT } from "./clip.ts";

export type Progress = { step: number; phase: Phase; request_bytes: number; checkpoint: boolean; max_steps: number };

export type Recorder = {
  answer(entry: RecordedAnswer): void;
  execution(entry: RecordedExecution): void;
};

export type LoopOptions = {
  policy: ContextPolicyName;
  provider: Provider;
  executor: Executor;
  store: ResultStore;
  now: () => number;
  version: string;
  signal?: AbortSignal;
  slice?: string | null;
  archiveLimits?: { maxEvents?: number; maxBytes?: number };
  onProgress?: (progress: Progress) => void;
  recorder?: Recorder;
  /** Model calls made before the loop for this run (catalog classification), measured into its report. */
  priorCalls?: CallRecord[];
};

export type LoopResult = {
  outcome: Outcome;
  error: { code: string; message: string } | null;
  finish: { status: "success" | "failure"; summary: string } | null;
  steps: number;
  revision: string;
  last_test: LastTest | null;
  tests_current: boolean;
  printed: string[];
  reports: ExecutionReport[];
  report: ContextReport;
};

type StageResult =
  | { kind: "decision"; value: Record<string, unknown> }
  | { kind: "refuse"; code: string; reason: string }
  | { kind: "suspend"; reason: string };

export async function runLoop(request: SliceRequest, options: LoopOptions): Promise<LoopResult> {
  const { policy, provider, executor, store, now, signal, recorder, onProgress } = options;
  const started = now();
  const actions = availableActions(request);
  const context = createContext(policy, { instructions: request.instructions, intent: request.intent, store });
  const archive = new Archive(options.archiveLimits);
  const builder = new ReportBuilder({ policy, version: options.version, slice: options.slice ?? null });
  for (const call of options.priorCalls ?? []) builder.recordCall(call);
  const reports: ExecutionReport[] = [];
  const printed: string[] = [];
  const sizeOf = (digest: string) => store.size(digest) ?? 0;
  let briefing: Briefing = initialBriefing(executor.revision);
  let finish: LoopResult["finish"] = null;
  let outcome: Outcome = "failed";
  let error: LoopResult["error"] = null;
  /** The report's error, when it must differ from the result's (text Loom did not write stays out of reports). */
  let reportError: LoopResult["error"] = null;
  let step = 0;

  // The model sees which commands run_command may run and what run_tests runs, instead of finding out by refusal.
  const selectionCandidates: Extract<Section, { section: "candidates" }> = {
    section: "candidates",
    task: TASKS.selection,
    actions: actions.map((name) => {
      const entry = { name, description: ACTION_DESCRIPTIONS[name] };
      if (name === "run_command") return { ...entry, allowed: request.commands ?? [] };
      if (name === "run_tests") return { ...entry, command: request.test.command };
      return entry;
    }),
  };

  const workingState = (lookupsUsed: number) => (view: TailView): WorkingState => ({
    ...briefing,
    recent_artifacts: viewArtifacts(briefing.recent_artifacts, { retained: view.retains }),
    step,
    max_steps: request.limits.max_steps,
    lookups_used: lookupsUsed,
    archive: { events: archive.length, retired: view.retired },
  });

  /**
   * Adds an entry to this stage's lookup section. Under the ceiling, an entry that does not fit is replaced whole by
   * an error entry with its size and the room left (the request then retires events if even that does not fit).
   * Returns false when the entry was omitted.
   */
  const addEntry = (entry: Record<string, unknown>, parts: RequestParts, used: number): boolean => {
    const lookups = parts.lookups;
    if (context.enforcesCeiling) {
      const next = { ...parts, state: workingState(used), lookups: [...lookups, entry] };
      if (context.measure(next) > CEILING_BYTES) {
        const without = context.measure({ ...next, lookups });
        const size = utf8Length(JSON.stringify(entry));
        lookups.push({
          ...("lookup" in entry ? { lookup: entry.lookup } : {}),
          error: `Response omitted whole: ${size} bytes do not fit the ${CEILING_BYTES}-byte ceiling ` +
            `(${
              Math.max(0, CEILING_BYTES - without)
            } bytes of room left); select a smaller part with #bytes=START-END or #lines=START-END`,
        });
        return false;
      }
    }
    lookups.push(entry);
    return true;
  };

  /** One stage: ask until the model gives a valid decision, spends its lookups, or fails validation twice. */
  const stage = async (
    phase: "selection" | "arguments",
    { schema, validate, candidates }: {
      schema: RequestParts["responseSchema"];
      validate: (value: unknown) => { ok: true; value: Record<string, unknown> } | { ok: false; error: string };
      candidates: RequestParts["candidates"];
    },
  ): Promise<StageResult> => {
    const lookups: unknown[] = [];
    let used = 0;
    let reasked = false;
    for (;;) {
      if (signal?.aborted) throw new InterruptedError();
      const parts: RequestParts = { phase, responseSchema: schema, candidates, state: workingState(used), lookups };
      const built = context.build(parts);
      if (built.checkpointed) builder.recordCheckpoint({ retired: built.retired, prefixChanged: true });
      onProgress?.({
        step,
        phase,
        request_bytes: built.bytes,
        checkpoint: built.checkpointed,
        max_steps: request.limits.max_steps,
      });
      const t0 = now();
      const answer = await provider.complete(built.request, { model: request.model, signal });
      const lookup = asLookup(answer.value);
      builder.recordCall({
        phase,
        step,
        request_bytes: built.bytes,
        elapsed_ms: Math.max(0, now() - t0),
        usage: answer.usage,
        checkpoint: built.checkpointed,
        lookup: lookup !== null,
      });
      recorder?.answer({ type: "answer", phase, step, value: answer.value, usage: answer.usage });

      if (lookup) {
        used += 1;
        if (used > LOOKUPS_PER_STAGE) {
          const reason =
            `Lookup ${used} in the ${phase} phase of step ${step}: each stage permits ${LOOKUPS_PER_STAGE}`;
          return phase === "selection" ? { kind: "suspend", reason } : { kind: "refuse", code: "lookup_limit", reason };
        }
        if (!lookup.ok) {
          builder.recordRetrieval(null, { error: true });
          addEntry({ lookup: echo(answer.value), error: lookup.error }, parts, used);
          continue;
        }
        const kind = lookupKind(lookup.lookup);
        const response = answerLookup(lookup.lookup, { store, archive });
        const omitted = !addEntry({ ...response, lookup: echo(lookup.lookup) }, parts, used);
        builder.recordRetrieval(kind, { error: "error" in response, omitted });
        continue;
      }

      const decision = validate(answer.value);
      if (decision.ok) return { kind: "decision", value: decision.value };
      const error = clipText(decision.error, MESSAGE_LIMIT);
      if (reasked) return { kind: "refuse", code: "invalid_answer", reason: `Invalid ${phase} answer twice: ${error}` };
      reasked = true;
      const expected = phase === "selection"
        ? `{"action": one of ${JSON.stringify(actions)}, "reason": optional text}`
        : `the arguments of ${(candidates as { action?: string }).action} as the response schema describes`;
      addEntry(
        {
          invalid_answer:
            `Your answer did not match the response schema (${error}); expected ${expected}, or a lookup. Answer again.`,
        },
        parts,
        used,
      );
    }
  };

  const capacityMessage = (at: number) =>
    `Archive capacity exceeded at step ${at}: it holds at most ${archive.limits.events} events and ${archive.limits.bytes} bytes ` +
    `(now ${archive.length} events, ${archive.bytes} bytes); no further model requests`;

  const zodError = { formatError: (e: Parameters<typeof formatZodError>[0]) => formatZodError(e) };
  const selectionSchema = selectionResponseSchema(actions);
  const selectionZod = selectionDecision(actions);

  try {
    for (;;) {
      if (signal?.aborted) throw new InterruptedError();
      if (step >= request.limits.max_steps) {
        outcome = "step_limit";
        error = {
          code: "step_limit",
          message: `Step limit reached: ${request.limits.max_steps} step${
            request.limits.max_steps === 1 ? "" : "s"
          } without finish`,
        };
        break;
      }
      if (archive.length >= archive.limits.events) {
        // A full archive could not keep the next step's event: ask the model nothing more.
        outcome = "archive_capacity_exceeded";
        error = { code: "archive_capacity_exceeded", message: capacityMessage(step + 1) };
        break;
      }
      step += 1;
      builder.recordStep(step);

      let action: ActionName | null = null;
      let args: Record<string, unknown> = {};
      let reason: string | undefined;
      let report: ExecutionReport | null = null;

      const selected = await stage("selection", {
        schema: selectionSchema,
        validate: (value) => parseDecision(selectionZod, value, zodError),
        candidates: selectionCandidates,
      });
      if (selected.kind === "suspend") {
        outcome = "suspended";
        error = { code: "lookup_limit", message: `Run suspended: ${selected.reason}` };
        break;
      }
      if (selected.kind === "refuse") {
        report = { kind: "refusal", step, code: selected.code, reason: selected.reason };
      } else {
        action = selected.value.action as ActionName;
        if (typeof selected.value.reason === "string" && selected.value.reason !== "") reason = selected.value.reason;
        if (takesArguments(action)) {
          const chosen = action;
          const given = await stage("arguments", {
            schema: argumentsResponseSchema(chosen),
            validate: (value) => parseDecision(ActionArguments[chosen], value, zodError),
            candidates: {
              section: "candidates",
              task: TASKS.arguments,
              action: chosen,
              ...(reason ? { reason: clipText(reason, MESSAGE_LIMIT) } : {}),
            },
          });
          if (given.kind === "decision") args = given.value;
          else {report = {
              kind: "refusal",
              step,
              code: given.kind === "refuse" ? given.code : "lookup_limit",
              reason: given.reason,
            };}
        }
      }

      if (!report && action) {
        const t0 = now();
        report = await executor.execute(action, args, { step, signal });
        builder.recordExecution(Math.max(0, now() - t0));
        const results: Record<string, string> = {};
        for (const ref of reportRefs(report)) results[ref] = store.get(ref) ?? "";
        recorder?.execution({ type: "execution", step, action, args, report, results });
      }
      const done = report!;
      reports.push(done);
      briefing = applyReport(briefing, done, { sizeOf, step });
      if (done.kind === "refusal") builder.recordRefusal();
      if (done.kind === "print") printed.push(store.get(done.text) ?? "");

      const sealed = createEvent({ seq: archive.length + 1, step, action, args, reason, report: done }, store);
      if (!archive.fits(sealed.bytes)) {
        outcome = "archive_capacity_exceeded";
        error = { code: "archive_capacity_exceeded", message: capacityMessage(step) };
        if (done.kind === "finish") finish = { status: done.status, summary: done.summary };
        break;
      }
      archive.append(sealed);
      context.append(sealed);
      if (done.kind === "finish") {
        finish = { status: done.status, summary: done.summary };
        outcome = "completed";
        break;
      }
    }
  } catch (caught) {
    if (caught instanceof InterruptedError || signal?.aborted) {
      outcome = "interrupted";
      error = { code: "interrupted", message: caught instanceof InterruptedError ? caught.message : "Interrupted" };
    } else if (caught instanceof LoomError) {
      outcome = "failed";
      error = { code: caught.code, message: caught.message };
      reportError = { code: caught.code, message: caught.reportMessage };
    } else {
      outcome = "failed";
      error = { code: "internal_error", message: errorMessage(caught) };
      reportError = {
        code: "internal_error",
        message: `Internal error (${caught instanceof Error ? caught.name : typeof caught}); the message is on stderr`,
      };
    }
  }

  builder.setArchive({ events: archive.length, bytes: archive.bytes });
  const report = builder.finish({ outcome, error: reportError ?? error, totalElapsedMs: Math.max(0, now() - started) });
  archive.clear();
  return {
    outcome,
    error,
    finish,
    steps: step,
    revision: briefing.latest_revision,
    last_test: briefing.last_test,
    tests_current: briefing.tests_current,
    printed,
    reports,
    report,
  };
}
