// Routing a request to a catalog slice: pattern rules, then an optional classification call, then the default.
// Pure: the provider and the clock are passed in.
import { CONTEXT_POLICIES, type ContextPolicyName } from "../policy.ts";
import { z } from "zod";
import { CEILING_BYTES } from "../context/budget.ts";
import type { Catalog } from "./catalog.ts";
import type { ModelCall } from "../run-events.ts";
import { utf8Length } from "../text/digest.ts";
import { errorMessage, fieldOf, InterruptedError, LoomError, RoutingError, StartupError } from "../errors.ts";
import { NULL_USAGE, type Provider, type TurnRequest } from "../vocabulary/turn.ts";

export type RouteVia = "slice_flag" | "pattern" | "classification" | "default";

export type Routed = {
  slice: string;
  via: RouteVia; /** 0-based index of the matching pattern rule */
  rule: number | null;
};

/** Routing either chose a slice or failed; both carry the model calls made, for the run's report. */
export type RouteResult =
  | ({ ok: true; calls: ModelCall[] } & Routed)
  | { ok: false; error: LoomError; calls: ModelCall[] };

const CLASSIFICATION_INSTRUCTIONS =
  "Choose the one slice that should handle the request given as the intent. The candidates section lists the slices " +
  'with what each is for. Answer with the JSON object {"slice": NAME}, NAME being one of the candidates\' names.';

const DECLINE_INSTRUCTIONS = ' If none of them fits the request, answer {"slice": null}.';

/** The first pattern rule whose regular expression occurs in the request, or null. */
export function matchRule(catalog: Catalog, request: string): { slice: string; rule: number } | null {
  const rules = catalog.routes?.rules ?? [];
  for (const [i, { pattern, ignore_case, slice }] of rules.entries()) {
    if (new RegExp(pattern, ignore_case ? "i" : "").test(request)) return { slice, rule: i };
  }
  return null;
}

/** Candidate slices of the classification, in catalog order unless it lists its own. */
function classificationCandidates(catalog: Catalog): string[] {
  return catalog.routes?.classification?.slices ?? Object.keys(catalog.slices);
}

function answerSchema(candidates: string[], { canDecline }: { canDecline: boolean }) {
  const names = z.enum(candidates as [string, ...string[]]);
  return z.strictObject({
    slice: (canDecline ? names.nullable() : names).describe(
      canDecline
        ? "The slice that should handle the request, or null when none fits"
        : "The slice that should handle the request",
    ),
  });
}

/**
 * The classification TurnRequest: instructions, the request as the intent, the candidate slices, and the answer schema
 * {"slice": NAME}. NAME may be null when a default route exists to fall back to. `bytes` is its request size.
 */
export function classificationRequest(
  catalog: Catalog,
  request: string,
): { request: TurnRequest; bytes: number; candidates: string[] } {
  const classification = catalog.routes?.classification;
  if (!classification) throw new Error("classificationRequest: the catalog configures no classification");
  const candidates = classificationCandidates(catalog);
  const canDecline = catalog.routes?.default !== undefined;
  const { $schema: _, ...schema } = z.toJSONSchema(answerSchema(candidates, { canDecline })) as Record<string, unknown>;
  const turn: TurnRequest = {
    phase: "classification",
    response_schema: schema,
    sections: [
      {
        section: "instructions",
        text: (classification.instructions ?? CLASSIFICATION_INSTRUCTIONS) + (canDecline ? DECLINE_INSTRUCTIONS : ""),
      },
      { section: "intent", text: request },
      {
        section: "candidates",
        slices: candidates.map((name) => ({ name, description: catalog.slices[name]?.description ?? "" })),
      },
    ],
  };
  return { request: turn, bytes: utf8Length(JSON.stringify(turn)), candidates };
}

const n = (x: number) => x.toLocaleString("en-US");

/** Under the bounded policy the classification request obeys the same ceiling as every other request. */
export function checkClassificationCeiling(
  { bytes, policy }: { bytes: number; policy: ContextPolicyName },
): RoutingError | null {
  if (!CONTEXT_POLICIES[policy].ceiling || bytes <= CEILING_BYTES) return null;
  return new RoutingError(
    `Classification request is ${n(bytes)} bytes, over the ${n(CEILING_BYTES)}-byte ceiling of the bounded policy ` +
      "(shorten the request or the slice descriptions, or pass --slice NAME)",
    "context_ceiling_exceeded",
  );
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** The slice the classifier chose; null when it declined (only possible with a default route). */
export function readClassificationAnswer(
  value: unknown,
  { candidates, canDecline }: { candidates: string[]; canDecline: boolean },
): { ok: true; slice: string | null } | { ok: false; error: RoutingError } {
  const parsed = answerSchema(candidates, { canDecline }).safeParse(value);
  if (parsed.success) return { ok: true, slice: parsed.data.slice };
  const chosen = value !== null && typeof value === "object" && "slice" in value ? fieldOf(value, "slice") : undefined;
  const expected = candidates.map((c) => JSON.stringify(c)).join(", ");
  const message = chosen === undefined
    ? `Classification answer is not {"slice": NAME}: ${preview(value)}`
    : `Classification chose ${preview(chosen)}, which is not a candidate slice (expected one of ${expected})`;
  const reportMessage = chosen === undefined
    ? `Classification answer is not {"slice": NAME}`
    : `Classification chose a name that is not a candidate slice (expected one of ${expected})`;
  return { ok: false, error: new RoutingError(message, "classification_unknown_slice", { reportMessage }) };
}

export type RouteOptions = {
  /** Policy of the classification request: bounded enforces the ceiling. */
  policy: ContextPolicyName;
  /** Made only when classification is needed (creating it may fail for a missing credential). */
  provider: () => Provider;
  now: () => number;
  signal?: AbortSignal;
  onClassification?: (request: { bytes: number; candidates: string[] }) => void;
};

function classificationCall(
  bytes: number,
  { elapsedMs, usage }: { elapsedMs: number; usage: ModelCall["usage"] },
): ModelCall {
  return {
    phase: "classification",
    step: 0,
    request_bytes: bytes,
    elapsed_ms: Math.max(0, elapsedMs),
    usage,
    checkpoint: false,
    lookup: false,
  };
}

/**
 * Routes a request: the first matching pattern rule, else the classification's choice, else the default. Throws only
 * for failures before any model call completed (a provider that cannot be made, an interrupt); every later failure
 * comes back as a result carrying the classification call's measurements.
 */
export async function routeRequest(catalog: Catalog, request: string, options: RouteOptions): Promise<RouteResult> {
  const matched = matchRule(catalog, request);
  if (matched) return { ok: true, slice: matched.slice, via: "pattern", rule: matched.rule, calls: [] };
  const classification = catalog.routes?.classification;
  const fallback = catalog.routes?.default;
  const calls: ModelCall[] = [];
  if (classification) {
    const built = classificationRequest(catalog, request);
    const overCeiling = checkClassificationCeiling({ bytes: built.bytes, policy: options.policy });
    if (overCeiling) return { ok: false, error: overCeiling, calls };
    const provider = options.provider();
    if (options.signal?.aborted) throw new InterruptedError();
    options.onClassification?.({ bytes: built.bytes, candidates: built.candidates });
    const started = options.now();
    let answer;
    try {
      answer = await provider.complete(built.request, {
        model: catalog.models[classification.model]?.model ?? classification.model,
        signal: options.signal,
      });
    } catch (error) {
      if (error instanceof InterruptedError || error instanceof StartupError) throw error;
      // The request was sent (and perhaps billed) even though no answer came: the report counts it, usage unknown.
      calls.push(classificationCall(built.bytes, { elapsedMs: options.now() - started, usage: NULL_USAGE }));
      const reportMessage = `Classification call failed: ${
        error instanceof LoomError ? error.reportMessage : "internal error"
      }`;
      return {
        ok: false,
        error: new RoutingError(`Classification call failed: ${errorMessage(error)}`, "classification_failed", {
          reportMessage,
        }),
        calls,
      };
    }
    calls.push(classificationCall(built.bytes, { elapsedMs: options.now() - started, usage: answer.usage }));
    const chosen = readClassificationAnswer(answer.value, {
      candidates: built.candidates,
      canDecline: fallback !== undefined,
    });
    if (!chosen.ok) return { ok: false, error: chosen.error, calls };
    if (chosen.slice !== null) return { ok: true, slice: chosen.slice, via: "classification", rule: null, calls };
  }
  if (fallback !== undefined) return { ok: true, slice: fallback, via: "default", rule: null, calls };
  const rules = catalog.routes?.rules?.length ?? 0;
  return {
    ok: false,
    error: new RoutingError(
      `No route matched the request (${rules} pattern rule${rules === 1 ? "" : "s"}, no classification, no default); ` +
        "pass --slice NAME or add a default route",
      "no_route",
    ),
    calls,
  };
}
