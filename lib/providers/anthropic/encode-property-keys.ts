// Anthropic accepts tool-schema property keys matching ^[a-zA-Z0-9_.-]{1,64}$ only, and our lookups are keyed
// "$result" etc. Keys are renamed on the way out and restored in the answer.
import type { JsonSchema } from "../../vocabulary/turn.ts";
import { isSchemaObject, rewriteSchema } from "../walk-json-schema.ts";

const VALID_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;

/** alias -> original key */
export type KeyAliases = Record<string, string>;

function collectPropertyKeys(node: unknown, into: Set<string>): void {
  rewriteSchema(node as JsonSchema, (n) => {
    if (isSchemaObject(n.properties)) { for (const key of Object.keys(n.properties)) into.add(key); }
    return n;
  });
}

export function encodePropertyKeys(schema: JsonSchema): { schema: JsonSchema; aliases: KeyAliases } {
  const taken = new Set<string>();
  collectPropertyKeys(schema, taken);
  const aliasOf = new Map<string, string>();
  const aliases: KeyAliases = {};
  const alias = (key: string): string => {
    if (VALID_KEY.test(key)) return key;
    let name = aliasOf.get(key);
    if (name) return name;
    const base = key.replace(/[^a-zA-Z0-9_.-]/g, "_").slice(0, 60) || "key";
    name = base;
    for (let i = 2; taken.has(name); i++) name = `${base}_${i}`;
    taken.add(name);
    aliasOf.set(key, name);
    aliases[name] = key;
    return name;
  };
  const encoded = rewriteSchema(schema, (node) => {
    if (!isSchemaObject(node.properties)) return node;
    const properties = Object.fromEntries(Object.entries(node.properties).map(([key, value]) => [alias(key), value]));
    const required = Array.isArray(node.required)
      ? node.required.map((key) => (typeof key === "string" ? alias(key) : key))
      : node.required;
    return { ...node, properties, ...(required === undefined ? {} : { required }) };
  }) as JsonSchema;
  return { schema: encoded, aliases };
}

/** Restores original keys in an answer; aliases never collide with a key of the schema, so this is exact. */
export function decodePropertyKeys(value: unknown, aliases: KeyAliases): unknown {
  if (Object.keys(aliases).length === 0) return value;
  if (Array.isArray(value)) return value.map((v) => decodePropertyKeys(v, aliases));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [aliases[key] ?? key, decodePropertyKeys(v, aliases)]),
  );
}
