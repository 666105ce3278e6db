// The response schema as Anthropic's output_config.format takes it (structured outputs): every object closed
// (additionalProperties false), and the constraints structured outputs do not support — array length limits beyond
// minItems 0 or 1, string lengths, numeric bounds — moved into the description, so the model still reads them and
// Loom's own validation still enforces them (platform.claude.com/docs/en/build-with-claude/structured-outputs, read
// 2026-12-01).
import type { JsonSchema } from "../../vocabulary/turn.ts";
import { isSchemaObject, rewriteSchema } from "../walk-json-schema.ts";

const UNSUPPORTED = new Set([
  "maxItems",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
]);

export function convertToAnthropicOutputSchema(schema: JsonSchema): JsonSchema {
  const converted = rewriteSchema(schema, (input) => {
    const out: JsonSchema = {};
    const hints: string[] = [];
    for (const [key, value] of Object.entries(input)) {
      const moved = UNSUPPORTED.has(key) || (key === "minItems" && typeof value === "number" && value > 1);
      if (moved) hints.push(`${key}: ${JSON.stringify(value)}`);
      else out[key] = value;
    }
    if (hints.length > 0) {
      out.description = `${typeof out.description === "string" ? `${out.description} ` : ""}{${hints.join(", ")}}`;
    }
    if ((out.type === "object" || isSchemaObject(out.properties)) && out.additionalProperties === undefined) {
      out.additionalProperties = false;
    }
    return out;
  });
  return isSchemaObject(converted) ? converted : {};
}
