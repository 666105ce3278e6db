// What a model may answer in each phase: a decision, or a lookup. Schemas are zod; the JSON Schema sent to the
// model is generated from them once and cached.
import { z } from "zod";
import { ActionArguments, ActionName } from "./actions.ts";
import type { JsonSchema, StepPhase } from "./turn.ts";

export const LOOKUPS_PER_STAGE = 8;

const ResultLookup = z.strictObject({
  $result: z.string().describe("sha256:<hex> with an optional #bytes=, #lines= or #/pointer selection"),
});
const ListHistoryLookup = z.strictObject({
  $list_history: z.number().int().nonnegative().describe("Offset into the archive; 0 = first event"),
});
const ReadHistoryLookup = z.strictObject({
  $read_history: z.string().describe("Digest of an archived event, with an optional selection"),
});
export const Lookup = z.union([ResultLookup, ListHistoryLookup, ReadHistoryLookup]);
export type Lookup = z.infer<typeof Lookup>;

/** What a lookup asks for: the one list of lookup kinds. */
export const LookupKind = z.enum(["result", "list_history", "read_history"]);
export type LookupKind = z.infer<typeof LookupKind>;

export function lookupKind(lookup: Lookup): LookupKind {
  if ("$result" in lookup) return "result";
  if ("$list_history" in lookup) return "list_history";
  return "read_history";
}

/** An answer is a lookup when it is an object whose only key starts with "$". */
export function asLookup(value: unknown): { ok: true; lookup: Lookup } | { ok: false; error: string } | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  if (!keys.some((k) => k.startsWith("$"))) return null;
  const parsed = Lookup.safeParse(value);
  if (parsed.success) return { ok: true, lookup: parsed.data };
  return {
    ok: false,
    error: `Not a valid lookup: expected {"$result": REF}, {"$list_history": OFFSET} or {"$read_history": REF}`,
  };
}

export const selectionDecision = (actions: readonly ActionName[]) =>
  z.strictObject({
    action: z.enum(actions as [ActionName, ...ActionName[]]).describe("The action to take next"),
    reason: z.string().optional().describe("Why, briefly"),
  });

const schemaCache = new Map<string, { json: JsonSchema; text: string }>();

function toJson(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return withoutSafeIntegerBounds(rest) as JsonSchema;
}

/** zod states the safe-integer range on every integer; it tells the model nothing and costs bytes on every request. */
function withoutSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutSafeIntegerBounds);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "maximum" && v === Number.MAX_SAFE_INTEGER) continue;
    if (k === "minimum" && v === Number.MIN_SAFE_INTEGER) continue;
    out[k] = withoutSafeIntegerBounds(v);
  }
  return out;
}

/** A response schema made once per key: any of the decisions `make` gives, or a lookup. */
function cached(key: string, make: () => z.ZodType[]): { json: JsonSchema; text: string } {
  let entry = schemaCache.get(key);
  if (!entry) {
    const json = {
      anyOf: [...make().map(toJson), toJson(ResultLookup), toJson(ListHistoryLookup), toJson(ReadHistoryLookup)],
    };
    entry = { json, text: JSON.stringify(json) };
    schemaCache.set(key, entry);
  }
  return entry;
}

/** The response schema of a selection request: a decision among `actions`, or a lookup. */
export function selectionResponseSchema(actions: readonly ActionName[]): { json: JsonSchema; text: string } {
  return cached(`selection:${actions.join(",")}`, () => [selectionDecision(actions)]);
}

/**
 * The one response schema of every selection and arguments request of a run: a selection decision among `actions`,
 * the arguments of any of them that takes arguments, or a lookup. The same schema on every call keeps one prompt-cache
 * chain per run (providers key their caches on tools and response formats); each phase still validates its own
 * answer (selectionDecision, ActionArguments[action]).
 */
export function runResponseSchema(actions: readonly ActionName[]): { json: JsonSchema; text: string } {
  return cached(`run:${actions.join(",")}`, () => [
    selectionDecision(actions),
    ...actions.filter(takesArgs).map(namedArguments),
  ]);
}

/**
 * An action's arguments with the action's name first (`{"action": "edit_file", "path": …}`): OpenAI's strict
 * structured outputs reject anyOf branches whose first keys are identical ("Objects provided via 'anyOf' must not
 * share identical first keys", openai/openai-python#2193), and read_file, edit_file and write_file all start with
 * `path`. Every branch of every response schema Loom sends starts with a distinct first property.
 */
function namedArguments(action: ActionName) {
  return z.strictObject({ action: z.enum([action]), ...ActionArguments[action].shape });
}

/** An arguments answer without the action's name that namedArguments put first (when it names the chosen action). */
export function withoutActionName(value: unknown, action: ActionName): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const { action: named, ...rest } = value as Record<string, unknown>;
  return named === action && !Object.hasOwn(ActionArguments[action].shape, "action") ? rest : value;
}

/**
 * A single-call answer for one action: its name, an optional reason, and its arguments (`args`, absent or `{}` for an
 * action without arguments). The name is a one-value enum, not a const, so OpenAI's strict mode takes the schema.
 */
const stepDecision = (action: ActionName) =>
  z.strictObject({
    // No descriptions on the wrapper: the tasks section says what action, reason and args are once, where the
    // schema would repeat it for every action on every call.
    action: z.enum([action]),
    reason: z.string().optional(),
    args: takesArgs(action) ? ActionArguments[action] : ActionArguments[action].optional(),
  });

const takesArgs = (action: ActionName) => Object.keys(ActionArguments[action].shape).length > 0;

/**
 * The response schema of every request of a single-call run: each action with its arguments, or a lookup. One schema
 * for the whole run, like the two-call run's, so the prompt cache keeps one chain.
 */
export function stepResponseSchema(actions: readonly ActionName[]): { json: JsonSchema; text: string } {
  return cached(`step:${actions.join(",")}`, () => actions.map(stepDecision));
}

const StepHead = (actions: readonly ActionName[]) =>
  z.object({ action: z.enum(actions as [ActionName, ...ActionName[]]), args: z.unknown().optional() });

/**
 * Validates a single-call answer: first which action it names (among `actions`), then its arguments against that
 * action's schema, exactly as an arguments answer is checked. The value is `{action, reason?, args}`.
 */
export function parseStepDecision(
  actions: readonly ActionName[],
  value: unknown,
  { formatError }: { formatError: (e: z.ZodError) => string },
): Decision {
  const head = StepHead(actions).safeParse(value);
  if (!head.success) return { ok: false, error: formatError(head.error), part: "selection" };
  const action = head.data.action;
  const whole = stepDecision(action).safeParse(value);
  if (!whole.success) {
    const inArgs = whole.error.issues.every((issue) => issue.path[0] === "args");
    return { ok: false, error: formatError(whole.error), part: inArgs ? "arguments" : "selection" };
  }
  const { reason, args } = whole.data as { reason?: string; args?: Record<string, unknown> };
  return { ok: true, value: { action, ...(reason === undefined ? {} : { reason }), args: args ?? {} } };
}

/** The response schema of an arguments request: the action's arguments, or a lookup. */
export function argumentsResponseSchema(action: ActionName): { json: JsonSchema; text: string } {
  return cached(`arguments:${action}`, () => [namedArguments(action)]);
}

export type Decision =
  | { ok: true; value: Record<string, unknown> }
  /** `part`: which part of a single-call answer was wrong (each part has its own re-ask, as each two-call stage). */
  | { ok: false; error: string; part?: StepPhase };

export function parseDecision(
  schema: z.ZodType,
  value: unknown,
  { formatError }: { formatError: (e: z.ZodError) => string },
): Decision {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data as Record<string, unknown> };
  return { ok: false, error: formatError(parsed.error) };
}

const LOOKUP_HELP =
  `Before answering you may look things up, at most ${LOOKUPS_PER_STAGE} times in this phase (answers are shown below and last for this ` +
  'phase only): {"$result": REF} returns stored output, {"$list_history": OFFSET} a page of archived events (0 = the ' +
  'first), {"$read_history": REF} one archived event. REF is a sha256:HEX digest shown in the request, optionally with ' +
  "#bytes=START-END, #lines=START-END or a #/json/pointer.";

/**
 * What the model is asked in each phase, and how it may look things up: constant for a run, so both policies send
 * them once per request in the stable prefix (the tasks section); the candidates name the phase in one line.
 */
export const TASKS = {
  selection:
    `Choose the next action: answer {"action": NAME, "reason": WHY}. Events show what happened (the newest last; ` +
    `long outputs as head and tail with a reference, the newest one's middle in its own section); the working state ` +
    `comes from execution reports.`,
  arguments:
    `Give the arguments of the chosen action as one JSON object matching the response schema, its name first: ` +
    `{"action": NAME, ...the arguments}.`,
  lookups: LOOKUP_HELP,
} as const;

/** What a single-call run asks on every request: the action and its arguments in one answer. */
export const STEP_TASK =
  `Choose the next action and give its arguments in one answer: {"action": NAME, "reason": WHY, "args": {...}} ` +
  `with the arguments the response schema gives that action ("args" may be left out when it takes none). Events ` +
  `show what happened (the newest last; long outputs as head and tail with a reference, the newest one's middle in ` +
  `its own section); the working state comes from execution reports.`;

/** The candidates' one line: which of the tasks this request asks. */
export const TASK_LINES = {
  selection: "Selection: choose the next action (see Tasks).",
  arguments: "Arguments: give the arguments of the chosen action (see Tasks).",
  step: "Step: choose the next action with its arguments (see Tasks).",
} as const;
