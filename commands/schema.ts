// loom schema catalog|recording|report: prints a JSON Schema generated from the zod schema (the zod schema is the
// source of truth), for editors and other tools.
import { z } from "zod";
import { Catalog } from "../lib/catalog.ts";
import { ContextReport } from "../lib/context-report.ts";
import { UsageError } from "../lib/errors.ts";
import { RecordingEntry, RecordingHeader } from "../lib/recording.ts";
import type { Io } from "./io.ts";

/** A recording is JSONL: each line is the header (first) or an entry. */
export const RecordingLine = z
  .union([RecordingHeader, RecordingEntry])
  .describe("One line of a Loom recording (JSONL): the header on line 1, then answers, executions and the end");

export const SCHEMAS = {
  catalog: Catalog,
  recording: RecordingLine,
  report: ContextReport,
} as const satisfies Record<string, z.ZodType>;

export type SchemaName = keyof typeof SCHEMAS;

const HELP = `loom schema catalog|recording|report

Prints the JSON Schema of a catalog file, of one line of a recording, or of a context report.
`;

/** The exact text printed (and shipped in schemas/): two-space JSON with a trailing newline. */
export function renderJsonSchema(name: SchemaName): string {
  return `${JSON.stringify(z.toJSONSchema(SCHEMAS[name]), null, 2)}\n`;
}

export async function schemaCommand(argv: string[], io: Io): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
    io.stdout(HELP);
    return 0;
  }
  const names = Object.keys(SCHEMAS).join(", ");
  if (argv.length !== 1) throw new UsageError(`Expected one schema name: ${names}`);
  const [name] = argv;
  if (!Object.hasOwn(SCHEMAS, name)) throw new UsageError(`Unknown schema ${JSON.stringify(name)} (expected one of ${names})`);
  io.stdout(renderJsonSchema(name as SchemaName));
  return 0;
}
