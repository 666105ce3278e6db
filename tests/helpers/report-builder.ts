// Builds a context report by hand, measurement by measurement: for tests and fixtures only. A run's report is never
// built this way: it is the fold of its events (lib/report/fold.ts), the one accumulator in product code.
import type { ContextPolicyName, PreviewMode, StepProtocol } from "../../lib/policy.ts";
import type { LookupKind } from "../../lib/vocabulary/answer.ts";
import { NORMAL_OUTCOMES } from "../../lib/outcome.ts";
import { addUsage, NULL_USAGE } from "../../lib/vocabulary/turn.ts";
import {
  type CallRecord,
  type ContextReport,
  type PhaseStats,
  REPORT_SCHEMA_VERSION,
} from "../../lib/report/context-report.ts";

const emptyPhase = (): PhaseStats => ({ requests: 0, request_bytes: { total: 0, max: 0 }, elapsed_ms: 0 });

/** Accumulates measurements into a report directly. */
export class ReportBuilder {
  readonly #report: ContextReport;

  constructor(
    { policy, version, slice = null }: { policy: ContextPolicyName; version: string; slice?: string | null },
  ) {
    this.#report = {
      schema_version: REPORT_SCHEMA_VERSION,
      loom_version: version,
      policy,
      slice,
      outcome: "failed",
      error: null,
      phases: {
        classification: emptyPhase(),
        selection: emptyPhase(),
        arguments: emptyPhase(),
        execution: emptyPhase(),
      },
      steps: 0,
      model_calls: 0,
      checkpoints: 0,
      prefix_changes: 0,
      retired_events: 0,
      archive: { events: 0, bytes: 0 },
      retrievals: { result: 0, list_history: 0, read_history: 0, omitted: 0, errors: 0 },
      refusals: 0,
      total_elapsed_ms: 0,
      usage: { ...NULL_USAGE },
      final_usage: null,
      partial_usage: null,
      calls: [],
    };
  }

  /** The step protocol the loop runs under. */
  setStepProtocol(protocol: StepProtocol): void {
    this.#report.step_protocol = protocol;
  }

  /** The previews a bounded loop shows retained outputs with. */
  setPreviews(mode: PreviewMode): void {
    this.#report.previews = mode;
  }

  get report(): Readonly<ContextReport> {
    return this.#report;
  }

  recordCall(call: CallRecord): void {
    const phase = this.#report.phases[call.phase];
    phase.requests += 1;
    phase.request_bytes.total += call.request_bytes;
    phase.request_bytes.max = Math.max(phase.request_bytes.max, call.request_bytes);
    phase.elapsed_ms += call.elapsed_ms;
    this.#report.model_calls += 1;
    this.#report.usage = addUsage(this.#report.usage, call.usage);
    this.#report.calls.push(call);
  }

  recordExecution(elapsedMs: number): void {
    const phase = this.#report.phases.execution;
    phase.requests += 1;
    phase.elapsed_ms += elapsedMs;
  }

  recordStep(step: number): void {
    this.#report.steps = Math.max(this.#report.steps, step);
  }

  /** A checkpoint was made: it retired events and changed the cacheable prefix (so prefix_changes == checkpoints). */
  recordCheckpoint({ retired }: { retired: number }): void {
    this.#report.checkpoints += 1;
    this.#report.retired_events += retired;
    this.#report.prefix_changes = this.#report.checkpoints;
  }

  /** A lookup answered; `kind` null for an answer that was not a valid lookup at all. */
  recordRetrieval(
    kind: LookupKind | null,
    { error = false, omitted = false } = {},
  ): void {
    if (kind) this.#report.retrievals[kind] += 1;
    if (error) this.#report.retrievals.errors += 1;
    if (omitted) this.#report.retrievals.omitted += 1;
  }

  recordRefusal(): void {
    this.#report.refusals += 1;
  }

  setArchive(archive: { events: number; bytes: number }): void {
    this.#report.archive = { ...archive };
  }

  /** Seals the report with its outcome; usage goes to final_usage or partial_usage accordingly. */
  finish({ outcome, error = null, totalElapsedMs }: {
    outcome: ContextReport["outcome"];
    error?: { code: string; message: string } | null;
    totalElapsedMs: number;
  }): ContextReport {
    const r = this.#report;
    r.outcome = outcome;
    r.error = error;
    r.total_elapsed_ms = totalElapsedMs;
    const normal = NORMAL_OUTCOMES.has(outcome);
    r.final_usage = normal ? { ...r.usage } : null;
    r.partial_usage = normal ? null : { ...r.usage };
    return structuredClone(r);
  }
}
