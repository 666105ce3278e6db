// OpenAI strict structured outputs accept a subset of JSON Schema: every object closed (additionalProperties
// false) with all its properties required, a fixed set of keywords. Optional properties become required but
// nullable (nulls are dropped from the answer again, see parse-answer.ts); constraints strict mode cannot express
// move into the description so the model still reads them (Loom validates the answer with zod anyway).
import type { JsonSchema } from "../../vocabulary/turn.ts";
import { isSchemaObject, rewriteSchema } from "../walk-json-schema.ts";

const KEPT = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "enum",
  "description",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "$defs",
  "definitions",
  "$ref",
]);
const DROPPED = new Set([
  "$schema",
  "$id",
  "$comment",
  "title",
  "examples",
  "default",
  "readOnly",
  "writeOnly",
  "deprecated",
]);
/** Keywords whose meaning cannot be kept in strict mode: the schema is then sent with strict: false. */
const UNREPRESENTABLE = new Set([
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "patternProperties",
  "propertyNames",
  "dependentSchemas",
  "dependentRequired",
  "dependencies",
  "unevaluatedItems",
  "unevaluatedProperties",
  "prefixItems",
  "contains",
]);
const FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);

function nullable(schema: unknown): unknown {
  if (!isSchemaObject(schema)) return { anyOf: [schema, { type: "null" }] };
  const { type } = schema;
  if (typeof type === "string" && schema.anyOf === undefined && schema.$ref === undefined) {
    const out: JsonSchema = { ...schema, type: type === "null" ? "null" : [type, "null"] };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) out.enum = [...schema.enum, null];
    return out;
  }
  if (Array.isArray(type) && schema.anyOf === undefined && schema.$ref === undefined) {
    const out: JsonSchema = { ...schema, type: type.includes("null") ? type : [...type, "null"] };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) out.enum = [...schema.enum, null];
    return out;
  }
  if (Array.isArray(schema.anyOf) && Object.keys(schema).every((k) => k === "anyOf" || k === "description")) {
    return { ...schema, anyOf: [...schema.anyOf, { type: "null" }] };
  }
  return { anyOf: [schema, { type: "null" }] };
}

export function convertToStrictJsonSchema(schema: JsonSchema): { schema: JsonSchema; strict: boolean } {
  let strict = true;
  const converted = rewriteSchema(schema, (input) => {
    const node: JsonSchema = { ...input };
    if (Array.isArray(node.oneOf) && node.anyOf === undefined) {
      // anyOf accepts every oneOf instance; exclusivity is zod's job after the answer arrives.
      node.anyOf = node.oneOf;
      delete node.oneOf;
    }
    if ("const" in node) {
      node.enum = [node.const];
      delete node.const;
    }
    const hints: string[] = [];
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) {
      if (KEPT.has(key)) {
        if (key === "format" && !FORMATS.has(String(value))) hints.push(`format: ${JSON.stringify(value)}`);
        else out[key] = value;
      } else if (UNREPRESENTABLE.has(key)) {
        strict = false;
        out[key] = value;
      } else if (!DROPPED.has(key)) hints.push(`${key}: ${JSON.stringify(value)}`);
    }
    if (hints.length > 0) {
      const description = typeof out.description === "string" ? `${out.description} ` : "";
      out.description = `${description}{${hints.join(", ")}}`;
    }
    const isObject = out.type === "object" || (Array.isArray(out.type) && out.type.includes("object")) ||
      isSchemaObject(out.properties);
    if (isObject) {
      if (out.additionalProperties !== undefined && out.additionalProperties !== false) strict = false;
      else out.additionalProperties = false;
      const properties = isSchemaObject(out.properties) ? out.properties : {};
      const required = new Set(Array.isArray(out.required) ? out.required : []);
      out.properties = Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, required.has(key) ? value : nullable(value)]),
      );
      out.required = Object.keys(properties);
    }
    const typed = out.type !== undefined || out.anyOf !== undefined || out.enum !== undefined || out.$ref !== undefined;
    if (!typed) strict = false; // an unconstrained value ({}) has no strict form
    return out;
  });
  if (typeof converted === "boolean") return { schema: {}, strict: false };
  return { schema: converted, strict };
}
