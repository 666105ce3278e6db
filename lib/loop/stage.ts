// One stage of a step: ask the model, validate its answer, answer its lookups, re-ask once after an invalid answer.
// Every call that was sent is an event (the report's measurement of it), also when it failed.
import { asLookup, lookupKind, LOOKUPS_PER_STAGE } from "../vocabulary/answer.ts";
import type { Archive } from "../context/archive.ts";
import { clipText, echo, MESSAGE_LIMIT } from "../text/clip.ts";
import type { ContextPolicy, RequestParts } from "../context/context.ts";
import { errorMessage, InterruptedError, LoomError, ProviderError } from "../errors.ts";
import { answerLookup } from "../context/lookups.ts";
import type { LoopEvent } from "../run-events.ts";
import type { ResultStore } from "../context/store.ts";
import { type ModelAnswer, NULL_USAGE, type Provider, type StepPhase } from "../vocabulary/turn.ts";
import type { CacheLedger } from "../cache-explanation.ts";

/** What every stage of a run shares. */
export type StageRun = {
  context: ContextPolicy;
  provider: Provider;
  store: ResultStore;
  archive: Archive;
  model: string;
  now: () => number;
  signal?: AbortSignal;
  /** Model calls, checkpoints and lookups as they happen: the run report is their fold. */
  onEvent: (event: LoopEvent) => void;
  /** Checked before each model call is built and announced; throws to make no further call (the run's cost cap). */
  beforeCall?: () => void;
  /** The run's prompt cache as Loom expects it: each call whose adapter describes its body is explained. */
  cache?: CacheLedger;
};

/** One stage: its phase and step, what it asks for, and how an answer is checked. */
export type Stage = {
  phase: StepPhase;
  step: number;
  schema: RequestParts["responseSchema"];
  /** The candidates, given the lookups answered so far in this stage (they carry the counters). */
  candidates: (lookupsUsed: number) => RequestParts["candidates"];
  /** The working state: it changes only with the execution reports, never between the calls of a stage. */
  state: RequestParts["state"];
  validate: (
    value: unknown,
  ) => { ok: true; value: Record<string, unknown> } | { ok: false; error: string; part?: StepPhase };
  /** What a valid answer looks like, for the re-ask. */
  expected: string;
};

export type StageResult =
  | { kind: "decision"; value: Record<string, unknown> }
  | { kind: "refuse"; code: string; reason: string }
  | { kind: "suspend"; reason: string };

/** Asks until the model gives a valid decision, spends its lookups, fails validation twice or is cut off. */
export async function runStage(run: StageRun, stage: Stage): Promise<StageResult> {
  const { context, store, archive } = run;
  const { phase, step } = stage;
  const lookups: unknown[] = [];
  let used = 0;
  // One re-ask per part: a stage's answer, or each of the two parts of a single-call answer (the action, its
  // arguments), as the two stages of a two-call step would have had.
  const reasked = new Set<string>();
  for (;;) {
    const parts: RequestParts = {
      phase,
      responseSchema: stage.schema,
      candidates: stage.candidates(used),
      state: stage.state,
      lookups,
    };
    const answer = await ask(run, parts, step);
    const lookup = asLookup(answer.value);
    /** Adds an entry to this stage's lookups, as the policy lets the next request carry it; false when omitted. */
    const add = (entry: Record<string, unknown>): boolean => {
      const fitted = context.fitLookup({ ...parts, candidates: stage.candidates(used) }, entry);
      lookups.push(fitted.entry);
      return !fitted.omitted;
    };

    if (lookup) {
      used += 1;
      if (used > LOOKUPS_PER_STAGE) {
        const reason = `Lookup ${used} in the ${phase} phase of step ${step}: each stage permits ${LOOKUPS_PER_STAGE}`;
        return phase === "selection" ? { kind: "suspend", reason } : { kind: "refuse", code: "lookup_limit", reason };
      }
      // A lookup that fails (malformed, or naming nothing there is) is an invalid answer too: it shares the stage's one
      // re-ask, so a model that answers bad lookups forever stops like one that answers out of the schema.
      if (!lookup.ok) {
        const omitted = !add({ lookup: echo(answer.value), error: lookup.error });
        run.onEvent({ type: "lookup-answered", step, phase, kind: null, error: true, omitted });
        if (reasked.has(phase)) return invalidTwice(phase, lookup.error);
        reasked.add(phase);
        continue;
      }
      const response = answerLookup(lookup.lookup, { store, archive });
      const omitted = !add({ ...response, lookup: echo(lookup.lookup) });
      const kind = lookupKind(lookup.lookup);
      run.onEvent({ type: "lookup-answered", step, phase, kind, error: "error" in response, omitted });
      if ("error" in response) {
        if (reasked.has(phase)) {
          return invalidTwice(phase, `lookup failed: ${clipText(String(response.error), MESSAGE_LIMIT)}`);
        }
        reasked.add(phase);
      }
      continue;
    }

    // A refusal (Anthropic stop_reason "refusal", OpenAI message.refusal) is the model's decision, not a malformed
    // answer: asking the same question again would be a paid call for the same refusal.
    if (answer.stop_reason === "refusal") {
      return {
        kind: "refuse",
        code: "model_refused",
        reason: `The model refused to give the ${phase} answer of step ${step}; not asked again`,
      };
    }
    const decision = stage.validate(answer.value);
    if (decision.ok) return { kind: "decision", value: decision.value };
    const error = clipText(decision.error, MESSAGE_LIMIT);
    // An answer cut at the output limit is not the model's mistake to repeat: asking again would cut it again.
    if (answer.stop_reason === "max_tokens") {
      return {
        kind: "refuse",
        code: "answer_truncated",
        reason: `The ${phase} answer of step ${step} was cut off at the model's output token limit (max_tokens) ` +
          `and is incomplete (${error}); answer with less text, e.g. a smaller edit (thinking counts toward the limit)`,
      };
    }
    const part = decision.part ?? phase;
    if (reasked.has(part)) return invalidTwice(part, error);
    reasked.add(part);
    add({
      invalid_answer:
        `Your answer did not match the response schema (${error}); expected ${stage.expected}, or a lookup. Answer again.`,
    });
  }
}

function invalidTwice(part: string, error: string): StageResult {
  return { kind: "refuse", code: "invalid_answer", reason: `Invalid ${part} answer twice: ${error}` };
}

/** One model call: build the request, announce it (call-started), and measure it — a failed call that was sent too. */
async function ask(run: StageRun, parts: RequestParts, step: number): Promise<ModelAnswer> {
  const { context, now, signal } = run;
  if (signal?.aborted) throw new InterruptedError();
  run.beforeCall?.();
  const built = context.build(parts);
  if (built.checkpointed) {
    run.onEvent({ type: "checkpoint-taken", step, phase: parts.phase, retired: built.retired });
  }
  const call = { phase: parts.phase, step, request_bytes: built.bytes, checkpoint: built.checkpointed };
  run.onEvent({ type: "call-started", ...call });
  const started = now();
  let answer: ModelAnswer;
  try {
    answer = await run.provider.complete(built.request, { model: run.model, signal, step });
  } catch (error) {
    // The request went out (and may be billed) though no answer came back: it counts, with null usage — whether an
    // HTTP provider failed, the run was interrupted, or a library caller's provider threw. (A recording that ran out
    // of answers sent nothing.)
    if (error instanceof ProviderError || error instanceof InterruptedError || !(error instanceof LoomError)) {
      const failed = { ...call, elapsed_ms: Math.max(0, now() - started), usage: NULL_USAGE, lookup: false };
      run.onEvent({ type: "model-called", ...failed });
    }
    if (error instanceof LoomError) throw error;
    // A library provider's own exception fails the run as a provider error, as an HTTP failure does; its text stays
    // out of the report (Loom did not write it).
    const name = error instanceof Error ? error.name : typeof error;
    throw new ProviderError(`Provider ${JSON.stringify(run.provider.name)} failed: ${errorMessage(error)}`, {
      reportMessage: `Provider ${JSON.stringify(run.provider.name)} threw ${name}; the message is on stderr`,
    });
  }
  const elapsed = Math.max(0, now() - started);
  const record = {
    ...call,
    elapsed_ms: elapsed,
    usage: answer.usage,
    lookup: asLookup(answer.value) !== null,
    ...(answer.timings ? { timings: answer.timings } : {}),
    ...(answer.cache && run.cache
      ? { cache: run.cache.explain({ layout: answer.cache, usage: answer.usage, at: started }) }
      : {}),
  };
  run.onEvent({ type: "model-called", ...record });
  return answer;
}
