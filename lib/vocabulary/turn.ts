// Provider-neutral types we own: TurnRequest, ModelAnswer, Usage, Provider.
import { z } from "zod";

export const Phase = z.enum(["classification", "selection", "arguments"]);
export type Phase = z.infer<typeof Phase>;
/** The phases of a step (classification happens once, before the loop). */
export type StepPhase = Exclude<Phase, "classification">;

export type JsonSchema = Record<string, unknown>;

export type Section =
  | { section: "instructions"; text: string }
  | { section: "intent"; text: string }
  /**
   * What each phase asks and the actions with what they may run: the same on every call of a run, so it sits in the
   * stable prefix, cached, instead of after the events.
   */
  | {
    section: "tasks";
    /** What a selection request asks (or, in a single-call run, what every request asks). */
    selection: string;
    /** What an arguments request asks; absent in a single-call run, which has none. */
    arguments?: string;
    /** How either phase may look things up instead of answering. */
    lookups: string;
    actions: { name: string; description: string; allowed?: string[][]; command?: string[] }[];
  }
  | { section: "checkpoint"; checkpoint: unknown }
  | { section: "events"; events: unknown[] }
  /**
   * The newest event's view (bounded): for each output, argument or reason its preview cuts, keyed as in the event,
   * the part the preview left out (bytes `from`-`to`), so preview and view show up to 8 KiB and no byte twice. It sits
   * after the events, so the events keep their bytes while it changes every step.
   */
  | { section: "newest"; step: number; view: Record<string, unknown> }
  | { section: "working_state"; state: unknown }
  | {
    section: "candidates";
    /** What to answer, in one paragraph (the request describes itself; nothing is sent outside it). */
    task?: string;
    actions?: { name: string; description: string; allowed?: string[][]; command?: string[] }[];
    action?: string;
    /** The reason given when the action was selected. */
    reason?: string;
    /**
     * The counters that move on every call (step of max_steps, lookups used in this stage): here, after the events,
     * so the working state keeps its bytes until an execution report changes it.
     */
    step?: number;
    max_steps?: number;
    lookups_used?: number;
    slices?: { name: string; description: string }[];
  }
  | { section: "lookups"; responses: unknown[] };

export type SectionName = Section["section"];

/** Every section name, in the order a request holds them. */
export const SECTION_NAMES = [
  "instructions",
  "intent",
  "tasks",
  "checkpoint",
  "events",
  "newest",
  "working_state",
  "candidates",
  "lookups",
] as const satisfies readonly SectionName[];

/** Sections that form the stable prefix (cacheable until the next checkpoint). */
export const PREFIX_SECTIONS: ReadonlySet<SectionName> = new Set(["instructions", "intent", "tasks", "checkpoint"]);

/**
 * One model call. Request bytes = UTF-8 length of JSON.stringify(turnRequest).
 * Sections always come in this order: instructions, intent, [tasks], [checkpoint], events, [newest], [working_state], candidates,
 * [lookups].
 */
export type TurnRequest = {
  phase: Phase;
  response_schema: JsonSchema;
  sections: Section[];
};

export const Usage = z.strictObject({
  input: z.number().int().nonnegative().nullable().describe(
    "Input tokens not read from or written to the prompt cache (the four counters never overlap); null when not reported",
  ),
  cache_read: z.number().int().nonnegative().nullable().describe("Input tokens read from the provider's prompt cache"),
  cache_write: z.number().int().nonnegative().nullable().describe(
    "Input tokens written to the provider's prompt cache",
  ),
  output: z.number().int().nonnegative().nullable().describe("Output tokens"),
  cache_write_1h: z.number().int().nonnegative().optional().describe(
    "Of cache_write, the tokens written to a 1-hour cache (Anthropic, billed at 2x input instead of 1.25x); absent " +
      "when none were",
  ),
});
export type Usage = z.infer<typeof Usage>;

export const NULL_USAGE: Usage = { input: null, cache_read: null, cache_write: null, output: null };

/** Adds usage counters; a counter stays null only while no call reported it. */
export function addUsage(a: Usage, b: Usage): Usage {
  const add = (x: number | null, y: number | null) => (x === null && y === null ? null : (x ?? 0) + (y ?? 0));
  return {
    input: add(a.input, b.input),
    cache_read: add(a.cache_read, b.cache_read),
    cache_write: add(a.cache_write, b.cache_write),
    output: add(a.output, b.output),
    ...(a.cache_write_1h === undefined && b.cache_write_1h === undefined
      ? {}
      : { cache_write_1h: (a.cache_write_1h ?? 0) + (b.cache_write_1h ?? 0) }),
  };
}

const tokens = z.number().int().nonnegative();
const ms = z.number().nonnegative();

/**
 * What a local server (llama.cpp's llama-server) says a call cost in tokens and seconds, from its `timings` block: the
 * prompt tokens it evaluated and the ones it reused from its cache, the tokens it generated, and the time each took.
 * On a local server the uncached prompt is paid in seconds, not dollars.
 */
export const ServerTimings = z.strictObject({
  prompt_n: tokens.describe("Prompt tokens the server evaluated (not reused from its cache)"),
  cache_n: tokens.describe("Prompt tokens reused from the server's prompt cache"),
  prompt_ms: ms.describe("Milliseconds spent evaluating the prompt"),
  predicted_n: tokens.describe("Tokens generated"),
  predicted_ms: ms.describe("Milliseconds spent generating"),
}).describe("The server's own timings of a call (llama.cpp's timings block), when it sends them");
export type ServerTimings = z.infer<typeof ServerTimings>;

/** What a local server says of its context: the tokens one call may hold, and what Loom keeps of them for answers. */
export type ServerContext = {
  /** The server's context size in tokens (llama.cpp's n_ctx, per slot). */
  context_tokens: number;
  /** The most output tokens the adapter lets any call produce (its largest output cap). */
  output_tokens: number;
  /** Where the size was read: "/props" or "/v1/models". */
  source: string;
};

export const StopReason = z.enum(["end", "max_tokens", "tool_use", "refusal", "other"]);
export type StopReason = z.infer<typeof StopReason>;

/** A block of a provider body as a prompt cache sees it: its section (or the tools / response format), size, a short
 * digest (never its text) and whether it carries a cache breakpoint. */
export type CacheBlock = { section: SectionName | "tools"; bytes: number; digest: string; breakpoint: boolean };

/** What a body looks like to the provider's prompt cache (lib/providers/cache-layout.ts makes them). */
export type CacheLayout = {
  /** breakpoints: only prefixes ending at a marked block are written (Anthropic); automatic: every prefix (OpenAI). */
  mode: "breakpoints" | "automatic";
  /** The model's minimum cacheable prompt, in tokens. */
  min_tokens: number;
  /** How long an entry lives after its last use. */
  ttl_ms: number;
  /** How many blocks before a breakpoint a read may end (breakpoints mode). */
  lookback: number;
  blocks: CacheBlock[];
};

export type ModelAnswer = {
  /** The answer as parsed JSON; a string when the model's text was not JSON (validation then fails). */
  value: unknown;
  usage: Usage;
  stop_reason?: StopReason;
  /** The provider's own response body, kept beside the normalised answer (never written to reports). */
  raw?: unknown;
  /** The layout of the body sent, for the run report's cache explanation (adapters with a prompt cache). */
  cache?: CacheLayout;
  /** The server's timings of the call, when it sends them (llama.cpp). */
  timings?: ServerTimings;
};

export type ProviderCapabilities = {
  /** The adapter marks the end of the stable prefix as a cache breakpoint. */
  prompt_caching: boolean;
  /** The API constrains the answer to the response schema. */
  schema_enforcement: boolean;
};

/** `model` is the slice's model name; an adapter configured with a model id sends its own (the call may say "PROVIDER/MODEL"). */
export type CompleteOptions = {
  model: string;
  signal?: AbortSignal;
  /** The loop step the call belongs to (absent for classification), for recordings. */
  step?: number;
  /** The most output tokens this call's answer needs (doctor's check); below any cap the adapter derives itself. */
  maxOutputTokens?: number;
};

export interface Provider {
  readonly name: string;
  readonly capabilities: ProviderCapabilities;
  complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer>;
  /**
   * A local server's context, asked of the server (llama.cpp: GET /props, else /v1/models); null when it does not
   * say or cannot be asked. Absent for providers whose context is the model table's.
   */
  serverContext?(options?: { signal?: AbortSignal }): Promise<ServerContext | null>;
}
