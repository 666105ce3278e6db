// How many output tokens a call to a local server may produce: what its answer needs, no more. A small model under a
// grammar can loop inside a string that never closes (seen: 865 tokens of one string at doctor's check, then the same
// on the retry, until the deadline); a cap stops such an answer early, and the loop then refuses it as truncated
// (answer_truncated) instead of waiting for the deadline.
import type { JsonSchema, TurnRequest } from "../../vocabulary/turn.ts";

/**
 * The caps, in tokens. A selection is an action name, a short reason or a lookup (about 50 tokens; SmolLM2-135M was
 * seen writing a "reason" to the 512-token cap it had first, at 6-20 tokens a second); a classification a slice name; an
 * arguments answer (or a single-call answer, which carries the arguments) may hold a file's new text, so it gets the
 * most: OUTPUT_CAP_MAX, the documented maximum (docs/providers.md, "Local servers"). A larger edit is split by the model
 * into several edit_file steps; a user who needs more sets max_tokens on the model, which then is the arguments cap
 * and the most any call may produce.
 */
export const OUTPUT_CAPS = { classification: 256, selection: 256, arguments: 2048 } as const;
export const OUTPUT_CAP_MAX = OUTPUT_CAPS.arguments;

/** Whether the schema asks for an action's arguments (a single-call answer: {action, reason, args}). */
function asksForArguments(schema: JsonSchema): boolean {
  const properties = schema.properties;
  if (properties !== null && typeof properties === "object" && "args" in properties) return true;
  for (const key of ["anyOf", "oneOf"]) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.some((b) => b !== null && typeof b === "object" && asksForArguments(b))) {
      return true;
    }
  }
  return false;
}

/**
 * The output cap of one call: the caller's own (`needs`, e.g. doctor's check) when given, else its phase's (the
 * arguments cap is the user's configured max_tokens when set); never over the configured max_tokens.
 */
export function outputCapOf(
  request: TurnRequest,
  { needs, configured }: { needs?: number; configured?: number } = {},
): number {
  const phase = request.phase === "selection" && asksForArguments(request.response_schema)
    ? "arguments"
    : request.phase;
  const cap = needs ?? (phase === "arguments" && configured !== undefined ? configured : OUTPUT_CAPS[phase]);
  return configured === undefined ? cap : Math.min(cap, configured);
}
