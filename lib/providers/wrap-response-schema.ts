// APIs that enforce a schema want an object at the root; our response schemas are usually a union. Wrapping the
// schema as the one required property `answer` satisfies both, and unwrapping is exact.
import type { JsonSchema } from "../vocabulary/turn.ts";

export const ANSWER_KEY = "answer";

export function wrapResponseSchema(schema: JsonSchema): JsonSchema {
  // Definitions stay at the root so "#/$defs/..." references keep resolving after the wrap.
  const { $schema: _, $defs, definitions, ...inner } = schema;
  return {
    type: "object",
    properties: { [ANSWER_KEY]: inner },
    required: [ANSWER_KEY],
    additionalProperties: false,
    ...($defs === undefined ? {} : { $defs }),
    ...(definitions === undefined ? {} : { definitions }),
  };
}
