// A small JSON Schema (2020-12) validator for exactly the keywords z.toJSONSchema emits for the context report, so
// report files written by real runs can be checked against schemas/context-report.schema.json without a dependency.
// Any other keyword throws: a schema change cannot make a check pass by being silently ignored.

export type JsonSchemaNode = Record<string, unknown>;

const KEYWORDS = new Set([
  "$schema",
  "pattern",
  "description",
  "type",
  "const",
  "enum",
  "properties",
  "required",
  "additionalProperties",
  "anyOf",
  "items",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "minItems",
  "minLength",
  "propertyNames",
  "oneOf",
]);

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case "object":
      return value !== null && typeof value === "object" && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    default:
      throw new Error(`Unknown JSON Schema type "${type}"`);
  }
}

/** The violations of `value` against `schema`, as "$.path: what" lines; empty when valid. */
export function validateJsonSchema(schema: JsonSchemaNode, value: unknown, path = "$"): string[] {
  for (const key of Object.keys(schema)) {
    if (!KEYWORDS.has(key)) throw new Error(`Validator does not implement "${key}"`);
  }
  const errors: string[] = [];
  if (
    Array.isArray(schema.anyOf) &&
    !schema.anyOf.some((s: JsonSchemaNode) => validateJsonSchema(s, value, path).length === 0)
  ) {
    errors.push(`${path}: matches no anyOf branch`);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t: string) => typeMatches(t, value))) return [...errors, `${path}: expected ${types.join("|")}`];
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    errors.push(`${path}: expected const`);
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) errors.push(`${path}: not in enum`);
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) errors.push(`${path}: below minimum`);
    if (typeof schema.maximum === "number" && value > schema.maximum) errors.push(`${path}: above maximum`);
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
      errors.push(`${path}: not above exclusiveMinimum`);
    }
  }
  if (typeof value === "string" && typeof schema.pattern === "string" && !new RegExp(schema.pattern).test(value)) {
    errors.push(`${path}: does not match ${schema.pattern}`);
  }
  if (typeof value === "string" && typeof schema.minLength === "number" && [...value].length < schema.minLength) {
    errors.push(`${path}: shorter than minLength`);
  }
  if (typeof value === "string" && typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
    errors.push(`${path}: does not match pattern`);
  }
  if (Array.isArray(value) && typeof schema.minItems === "number" && value.length < schema.minItems) {
    errors.push(`${path}: fewer than minItems`);
  }
  if (Array.isArray(schema.oneOf)) {
    const matching = schema.oneOf.filter((s: JsonSchemaNode) => validateJsonSchema(s, value, path).length === 0);
    if (matching.length !== 1) errors.push(`${path}: matches ${matching.length} oneOf branches, expected 1`);
  }
  if (typeMatches("object", value)) {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, JsonSchemaNode>;
    for (const key of (schema.required ?? []) as string[]) {
      if (!(key in object)) errors.push(`${path}.${key}: required`);
    }
    for (const [key, child] of Object.entries(object)) {
      if (typeof schema.propertyNames === "object") {
        errors.push(...validateJsonSchema(schema.propertyNames as JsonSchemaNode, key, `${path}.${key} (name)`));
      }
      if (key in properties) errors.push(...validateJsonSchema(properties[key], child, `${path}.${key}`));
      else if (schema.additionalProperties === false) errors.push(`${path}.${key}: not allowed`);
      else if (typeof schema.additionalProperties === "object") {
        errors.push(...validateJsonSchema(schema.additionalProperties as JsonSchemaNode, child, `${path}.${key}`));
      }
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) =>
      errors.push(...validateJsonSchema(schema.items as JsonSchemaNode, item, `${path}[${i}]`))
    );
  }
  return errors;
}
