// Bottom-up rewriting of a JSON Schema: children first, then the node itself. Literal payloads (enum, const,
// default, examples) are never visited as schemas.
import type { JsonSchema } from "../vocabulary/turn.ts";

const SINGLE = [
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
];
const LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const MAPS = ["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"];

export type SchemaNode = JsonSchema | boolean;

export function isSchemaObject(node: unknown): node is JsonSchema {
  return typeof node === "object" && node !== null && !Array.isArray(node);
}

/** Returns a rewritten copy; `visit` sees each object node after its children were rewritten. */
export function rewriteSchema(node: SchemaNode, visit: (node: JsonSchema) => JsonSchema): SchemaNode {
  if (!isSchemaObject(node)) return node;
  const out: JsonSchema = { ...node };
  for (const key of SINGLE) {
    const child = out[key];
    if (isSchemaObject(child) || typeof child === "boolean") out[key] = rewriteSchema(child, visit);
    else if (key === "items" && Array.isArray(child)) {
      out[key] = child.map((c) => rewriteSchema(c as SchemaNode, visit));
    }
  }
  for (const key of LISTS) {
    const list = out[key];
    if (Array.isArray(list)) out[key] = list.map((c) => rewriteSchema(c as SchemaNode, visit));
  }
  for (const key of MAPS) {
    const map = out[key];
    if (isSchemaObject(map)) {
      out[key] = Object.fromEntries(
        Object.entries(map).map(([name, c]) => [name, rewriteSchema(c as SchemaNode, visit)]),
      );
    }
  }
  return visit(out);
}
