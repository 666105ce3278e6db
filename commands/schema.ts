// loom schema catalog|recording|report: prints a JSON Schema generated from the zod schema (the zod schema is the
// source of truth), for editors and other tools.
import { UsageError } from "../lib/errors.ts";
import { renderJsonSchema, type SchemaName, SCHEMAS } from "../lib/schemas.ts";
import type { Io } from "./io.ts";

export { renderJsonSchema };

const HELP = `loom schema ${Object.keys(SCHEMAS).join("|")}

Prints a JSON Schema: of a catalog file, of a request file (loom run REQUEST), of one line of a recording, of a
run's context report, of a batch's aggregate report, of one line of --output-format stream-json (events), of an
evaluation suite (loom eval SUITE), of an evaluation's result (DIR/eval.json), or of a price table (--prices FILE).
`;

export function schemaCommand(argv: string[], io: Io): number {
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
    io.stdout(HELP);
    return 0;
  }
  const names = Object.keys(SCHEMAS).join(", ");
  if (argv.length !== 1) throw new UsageError(`Expected one schema name: ${names}`);
  const [name] = argv;
  if (!Object.hasOwn(SCHEMAS, name)) {
    throw new UsageError(`Unknown schema ${JSON.stringify(name)} (expected one of ${names})`);
  }
  io.stdout(renderJsonSchema(name as SchemaName));
  return 0;
}
