// Turns what a model returned into the answer value: parsed JSON, or the raw text when it is not JSON (the loop
// then re-asks with the validation error).
import type { JsonSchema } from "../vocabulary/turn.ts";
import { ANSWER_KEY } from "./wrap-response-schema.ts";
import { isSchemaObject } from "./walk-json-schema.ts";

const FENCE = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

export function parseAnswerText(text: string): unknown {
  const trimmed = text.trim();
  const unfenced = FENCE.exec(trimmed)?.[1] ?? trimmed;
  try {
    return JSON.parse(unfenced);
  } catch {
    return text;
  }
}

/** `{"answer": X}` -> X; anything else is returned as it is (a model that skipped the wrapper still gets validated). */
export function unwrapAnswer(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === ANSWER_KEY ? (value as Record<string, unknown>)[ANSWER_KEY] : value;
}

function propertiesOf(schema: JsonSchema): Record<string, unknown> | null {
  return isSchemaObject(schema.properties) ? schema.properties : null;
}

/** The branch of a union the value was written against: the first object branch that has all its keys. */
function branchFor(schema: JsonSchema, value: Record<string, unknown>): JsonSchema | null {
  if (propertiesOf(schema)) return schema;
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (!branches) return null;
  const keys = Object.keys(value);
  for (const branch of branches) {
    if (!isSchemaObject(branch)) continue;
    const props = propertiesOf(branch);
    if (props && keys.every((k) => k in props)) return branch;
  }
  return null;
}

/**
 * Strict structured outputs make optional properties required-but-nullable; this removes those nulls again, using
 * the original schema to know which properties were optional. Nulls the original schema required stay.
 */
export function dropNullOptionals(value: unknown, schema: unknown): unknown {
  if (!isSchemaObject(schema) || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const items = isSchemaObject(schema.items) ? schema.items : null;
    return items ? value.map((v) => dropNullOptionals(v, items)) : value;
  }
  const record = value as Record<string, unknown>;
  const branch = branchFor(schema, record);
  const props = branch && propertiesOf(branch);
  if (!branch || !props) return value;
  const required = new Set(Array.isArray(branch.required) ? branch.required : []);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(record)) {
    if (v === null && !required.has(key)) continue;
    out[key] = dropNullOptionals(v, props[key]);
  }
  return out;
}
