// The JSON Schemas Loom publishes, generated from the zod schemas (the zod schema is the source of truth):
// printed by `loom schema NAME` and shipped in schemas/ (kept equal by tests and scripts/gen-schemas.ts).
import { z } from "zod";
import { Catalog } from "./catalog/catalog.ts";
import { UserConfig } from "./settings/settings.ts";
import { AggregateReport, ContextReport } from "./report/context-report.ts";
import { SliceRequestFile } from "./slice.ts";
import { RunEvent } from "./run-events.ts";
import { RecordingEntry, RecordingHeader } from "./recording/recording.ts";
import { Suite } from "./eval/suite.ts";
import { EvalFile } from "./eval/eval-file.ts";
import { PriceTable } from "./prices.ts";
import { ModelTable } from "./models/models.ts";

/** A recording is JSONL: each line is the header (first) or an entry. */
const RecordingLine = z
  .union([RecordingHeader, RecordingEntry])
  .describe("One line of a Loom recording (JSONL): the header on line 1, then answers and executions");

export const SCHEMAS = {
  catalog: Catalog,
  request: SliceRequestFile,
  recording: RecordingLine,
  report: ContextReport,
  aggregate: AggregateReport,
  events: RunEvent,
  suite: Suite,
  eval: EvalFile,
  prices: PriceTable,
  models: ModelTable,
  config: UserConfig,
} as const satisfies Record<string, z.ZodType>;

export type SchemaName = keyof typeof SCHEMAS;

/** Where each schema is shipped, relative to the repository root. */
export const SCHEMA_PATHS: Record<SchemaName, string> = {
  catalog: "schemas/catalog.schema.json",
  recording: "schemas/recording.schema.json",
  report: "schemas/context-report.schema.json",
  request: "schemas/request.schema.json",
  aggregate: "schemas/aggregate-report.schema.json",
  events: "schemas/events.schema.json",
  suite: "schemas/suite.schema.json",
  eval: "schemas/eval.schema.json",
  prices: "schemas/prices.schema.json",
  models: "schemas/models.schema.json",
  config: "schemas/config.schema.json",
};

/** The exact text of a schema file: stable two-space JSON with a trailing newline. */
export function renderSchemaFile(schema: z.ZodType): string {
  return `${JSON.stringify(z.toJSONSchema(schema), null, 2)}\n`;
}

export function renderJsonSchema(name: SchemaName): string {
  return renderSchemaFile(SCHEMAS[name]);
}
