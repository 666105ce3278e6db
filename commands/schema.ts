// loom schema catalog|recording|report: prints a JSON Schema generated from the zod schema (the zod schema is the
// source of truth), for editors and other tools.
import { UsageError } from "../lib/errors.ts";
import { renderJsonSchema, type SchemaName, SCHEMAS } from "../lib/schemas.ts";
import { parseCommand } from "./cli-spec.ts";
import type { Io } from "./io.ts";
import { SCHEMA_SPEC } from "./specs.ts";

export { renderJsonSchema };

export function schemaCommand(argv: string[], io: Io): number {
  // The spec checks the name (with did-you-mean); one name is what is left to check.
  const { positionals } = parseCommand(SCHEMA_SPEC, argv, { command: "schema" });
  if (positionals.length !== 1) throw new UsageError(`Expected one schema name: ${Object.keys(SCHEMAS).join(", ")}`);
  const [name] = positionals;
  io.stdout(renderJsonSchema(name as SchemaName));
  return 0;
}
