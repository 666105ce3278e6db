// Recording as wrappers: a provider and an executor that pass every call through and append what went by (answers,
// execution reports with their bulk) to a recording. Pure: the sink that writes the lines is passed in.
import type { ActionName } from "../vocabulary/actions.ts";
import { utf8Length } from "../text/digest.ts";
import type { ExecuteContext, Executor, LineChange } from "../vocabulary/executor.ts";
import type { RecordingEntry } from "./recording.ts";
import { type ExecutionReport, reportRefs } from "../vocabulary/reports.ts";
import type { ResultStore } from "../context/store.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../vocabulary/turn.ts";

export type RecordingSink = (entry: RecordingEntry) => void;

export class RecordingProvider implements Provider {
  readonly #inner: Provider;
  readonly #sink: RecordingSink;

  constructor(inner: Provider, sink: RecordingSink) {
    this.#inner = inner;
    this.#sink = sink;
  }

  get name(): string {
    return this.#inner.name;
  }

  get capabilities() {
    return this.#inner.capabilities;
  }

  /** A local server's context, asked of the wrapped provider (null when it has none to ask). */
  serverContext(options?: { signal?: AbortSignal }) {
    return this.#inner.serverContext?.(options) ?? Promise.resolve(null);
  }

  async complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
    const answer = await this.#inner.complete(request, options);
    this.#sink({
      type: "answer",
      phase: request.phase,
      step: options.step ?? 0,
      value: answer.value,
      usage: answer.usage,
      ...(answer.stop_reason && answer.stop_reason !== "end" ? { stop_reason: answer.stop_reason } : {}),
      // A replay cannot rebuild the classification request (the catalog is not recorded), so its size is kept.
      ...(request.phase === "classification" ? { request_bytes: utf8Length(JSON.stringify(request)) } : {}),
    });
    return answer;
  }
}

export class RecordingExecutor implements Executor {
  readonly #inner: Executor;
  readonly #sink: RecordingSink;
  readonly #store: ResultStore;

  constructor(inner: Executor, sink: RecordingSink, { store }: { store: ResultStore }) {
    this.#inner = inner;
    this.#sink = sink;
    this.#store = store;
  }

  get revision(): string {
    return this.#inner.revision;
  }

  async execute(action: ActionName, args: Record<string, unknown>, context: ExecuteContext): Promise<ExecutionReport> {
    const report = await this.#inner.execute(action, args, context);
    const results: Record<string, string> = {};
    for (const ref of reportRefs(report)) results[ref] = this.#store.get(ref) ?? "";
    const lines = this.#inner.lines?.();
    this.#sink({
      type: "execution",
      step: context.step,
      action,
      args,
      report,
      results,
      ...(lines !== undefined ? { lines } : {}),
    });
    return report;
  }

  lines(): LineChange | null | undefined {
    return this.#inner.lines?.();
  }
}
