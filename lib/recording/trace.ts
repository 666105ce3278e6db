// Request traces (--trace FILE): one JSON line per model call with the provider-neutral TurnRequest exactly as it was
// measured and, for live runs, the provider request body exactly as sent. A trace holds prompts and payloads by
// design (it is opt-in); context reports never do. Credentials travel in headers, which a trace never records.
import { utf8Length } from "../text/digest.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest, Usage } from "../vocabulary/turn.ts";

const TRACE_VERSION = 1;

export type TraceLine = {
  trace_version: typeof TRACE_VERSION;
  /** 1-based, in the order the calls were made (the order of the report's `calls`). */
  call: number;
  phase: TurnRequest["phase"];
  /** UTF-8 length of JSON.stringify(turn_request): the report's request bytes for this call. */
  request_bytes: number;
  turn_request: TurnRequest;
  /** The body of each HTTP attempt as sent (retries add attempts); empty for replay, which sends nothing. */
  provider_requests: unknown[];
  usage: Usage | null;
  /** Why the call failed, when it did (the run's error says the rest). */
  error: string | null;
};

/** Numbers the calls of every provider it wraps in one sequence (a catalog run's classification, then its slice). */
export function createTracer({ write }: { write: (line: TraceLine) => void }): {
  wrap: (inner: Provider, options?: { takeBodies?: () => unknown[] }) => Provider;
} {
  let call = 0;
  return {
    wrap: (inner, { takeBodies = () => [] } = {}) => ({
      name: inner.name,
      capabilities: inner.capabilities,
      ...(inner.serverContext ? { serverContext: inner.serverContext.bind(inner) } : {}),
      async complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
        call += 1;
        const number = call;
        // Serialised before the call, as the loop measured it: nothing the provider does changes what is traced.
        const text = JSON.stringify(request);
        const line = (usage: Usage | null, error: string | null): TraceLine => ({
          trace_version: TRACE_VERSION,
          call: number,
          phase: request.phase,
          request_bytes: utf8Length(text),
          turn_request: JSON.parse(text),
          provider_requests: takeBodies(),
          usage,
          error,
        });
        takeBodies(); // bodies of an earlier, untraced call are not this call's
        try {
          const answer = await inner.complete(request, options);
          write(line(answer.usage, null));
          return answer;
        } catch (error) {
          write(line(null, error instanceof Error ? error.message : String(error)));
          throw error;
        }
      },
    }),
  };
}
