// Validates a request body against a schema of an OpenAPI 3.1 document (OpenAI's published openapi.json): $ref,
// allOf (merged), anyOf / oneOf (some branch matches), type (with null), enum, const, properties, required, items,
// additionalProperties. Strict on what Loom sends: a property no schema of the object declares is an error, so a
// body that drifts from the published API (a misspelt or removed field) fails even where the spec leaves objects open.
// Annotations (description, default, format, x-*, …) are not checked.

type Node = Record<string, unknown>;

export function openApiValidator(document: { components: { schemas: Record<string, Node> } }) {
  const resolve = (node: Node): Node => {
    let current = node;
    for (let hops = 0; typeof current.$ref === "string"; hops++) {
      if (hops > 32) throw new Error(`$ref loop at ${String(node.$ref)}`);
      const name = (current.$ref as string).replace("#/components/schemas/", "");
      const target = document.components.schemas[name];
      if (!target) throw new Error(`unresolvable $ref ${String(current.$ref)}`);
      const { $ref: _, ...rest } = current;
      current = { ...target, ...rest };
    }
    return current;
  };
  /** allOf members merged into one object schema (properties and required united). */
  const flatten = (input: Node): Node => {
    const node = resolve(input);
    if (!Array.isArray(node.allOf)) return node;
    const { allOf, ...own } = node;
    const merged: Node = {
      ...own,
      properties: { ...(own.properties as Node ?? {}) },
      required: [...(own.required as string[] ?? [])],
    };
    for (const member of allOf as Node[]) {
      const part = flatten(member);
      Object.assign(merged.properties as Node, part.properties ?? {});
      (merged.required as string[]).push(...(part.required as string[] ?? []));
      for (const key of ["type", "anyOf", "oneOf", "additionalProperties", "enum"]) {
        if (part[key] !== undefined && merged[key] === undefined) merged[key] = part[key];
      }
    }
    return merged;
  };
  const typeOf = (value: unknown) =>
    value === null ? "null" : Array.isArray(value) ? "array" : Number.isInteger(value) ? "integer" : typeof value;
  const typeMatches = (type: string, value: unknown) =>
    type === typeOf(value) || (type === "number" && typeof value === "number");

  function validate(input: Node, value: unknown, path: string): string[] {
    const node = flatten(input);
    const branches = (node.anyOf ?? node.oneOf) as Node[] | undefined;
    if (Array.isArray(branches)) {
      let best: string[] | null = null;
      for (const branch of branches) {
        const errors = validate({ ...node, anyOf: undefined, oneOf: undefined, ...flatten(branch) }, value, path);
        if (errors.length === 0) return [];
        if (best === null || errors.length < best.length) best = errors;
      }
      return best ?? [`${path}: no branch matches`];
    }
    const types = node.type === undefined
      ? []
      : Array.isArray(node.type)
      ? node.type as string[]
      : [node.type as string];
    if (node.nullable === true) types.push("null");
    if (types.length > 0 && !types.some((t) => typeMatches(t, value))) {
      return [`${path}: expected ${types.join(" | ")}, got ${typeOf(value)}`];
    }
    if (Array.isArray(node.enum) && !node.enum.includes(value)) {
      return [`${path}: ${JSON.stringify(value)} not in enum`];
    }
    if ("const" in node && node.const !== value) return [`${path}: expected ${JSON.stringify(node.const)}`];
    const errors: string[] = [];
    if (typeOf(value) === "object" && (node.properties || node.additionalProperties !== undefined)) {
      const record = value as Record<string, unknown>;
      const properties = (node.properties ?? {}) as Record<string, Node>;
      for (const key of (node.required ?? []) as string[]) {
        if (!(key in record)) errors.push(`${path}.${key}: required`);
      }
      for (const [key, v] of Object.entries(record)) {
        if (properties[key]) errors.push(...validate(properties[key], v, `${path}.${key}`));
        else if (node.additionalProperties && typeof node.additionalProperties === "object") {
          errors.push(...validate(node.additionalProperties as Node, v, `${path}.${key}`));
        } else if (node.additionalProperties !== true) errors.push(`${path}.${key}: not a documented property`);
      }
    }
    if (Array.isArray(value) && node.items && typeof node.items === "object") {
      value.forEach((item, i) => errors.push(...validate(node.items as Node, item, `${path}[${i}]`)));
    }
    return errors;
  }

  return (schemaName: string, value: unknown): string[] => {
    if (!document.components.schemas[schemaName]) throw new Error(`no schema ${schemaName}`);
    return validate({ $ref: `#/components/schemas/${schemaName}` }, value, "$");
  };
}
