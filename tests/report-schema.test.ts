// The report's JSON Schema file stays equal to the zod schema, and real reports validate against the file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { ContextReport } from "../lib/report/context-report.ts";
import { ReportBuilder } from "./helpers/report-builder.ts";
import { renderSchemaFile, SCHEMA_FILES } from "../scripts/gen-schemas.ts";
import { type JsonSchemaNode, validateJsonSchema } from "./helpers/validate-json-schema.ts";

const SCHEMA_PATH = new URL("../schemas/context-report.schema.json", import.meta.url);

type Schema = JsonSchemaNode;
const validate = validateJsonSchema;

async function schemaFile(): Promise<Schema> {
  return JSON.parse(await readFile(SCHEMA_PATH, "utf8"));
}

function reportWithEverything() {
  const b = new ReportBuilder({ policy: "bounded", version: "0.4.0", slice: "fix-bug" });
  b.recordStep(1);
  b.recordCall({
    phase: "classification",
    step: 0,
    request_bytes: 2100,
    elapsed_ms: 12.5,
    usage: { input: 400, cache_read: null, cache_write: null, output: 8 },
    checkpoint: false,
    lookup: false,
  });
  b.recordCheckpoint({ retired: 12 });
  b.recordCall({
    phase: "selection",
    step: 1,
    request_bytes: 33_000,
    elapsed_ms: 900,
    usage: { input: 8000, cache_read: 6000, cache_write: 2000, output: 30 },
    checkpoint: true,
    lookup: true,
  });
  b.recordRetrieval("result");
  b.recordRetrieval("list_history", { error: true });
  b.recordRetrieval("read_history", { omitted: true });
  b.recordCall({
    phase: "arguments",
    step: 1,
    request_bytes: 34_500,
    elapsed_ms: 700,
    usage: { input: null, cache_read: null, cache_write: null, output: null },
    checkpoint: false,
    lookup: false,
  });
  b.recordExecution(1500);
  b.recordRefusal();
  b.setArchive({ events: 40, bytes: 120_000 });
  return b;
}

test("schemas/context-report.schema.json equals what z.toJSONSchema(ContextReport) produces now", async () => {
  const text = await readFile(SCHEMA_PATH, "utf8");
  assert.deepEqual(JSON.parse(text), z.toJSONSchema(ContextReport), "regenerate with: bun scripts/gen-schemas.ts");
  assert.equal(text, renderSchemaFile(ContextReport), "regenerate with: bun scripts/gen-schemas.ts");
  assert.ok(SCHEMA_FILES.some((f) => f.path === "schemas/context-report.schema.json" && f.schema === ContextReport));
});

test("a completed report from ReportBuilder validates against the JSON Schema file", async () => {
  const schema = await schemaFile();
  const report = reportWithEverything().finish({ outcome: "completed", totalElapsedMs: 3200 });
  assert.deepEqual(validate(schema, JSON.parse(JSON.stringify(report))), []);
  assert.notEqual(report.final_usage, null);
});

test("a failed report (error, partial usage) validates against the JSON Schema file", async () => {
  const schema = await schemaFile();
  const report = reportWithEverything().finish({
    outcome: "failed",
    error: { code: "context_ceiling_exceeded", message: "Mandatory content needs 70,000 bytes" },
    totalElapsedMs: 10,
  });
  assert.deepEqual(validate(schema, JSON.parse(JSON.stringify(report))), []);
  assert.equal(report.final_usage, null);
  assert.notEqual(report.partial_usage, null);
});

test("an empty report (no calls) validates, for every outcome", async () => {
  const schema = await schemaFile();
  for (const outcome of ContextReport.shape.outcome.options) {
    const report = new ReportBuilder({ policy: "legacy", version: "0.4.0" }).finish({ outcome, totalElapsedMs: 0 });
    assert.deepEqual(validate(schema, report), [], outcome);
  }
});

test("the JSON Schema file rejects what the zod schema rejects: missing, extra, mistyped and negative fields", async () => {
  const schema = await schemaFile();
  const good = () =>
    JSON.parse(JSON.stringify(reportWithEverything().finish({ outcome: "completed", totalElapsedMs: 1 })));
  const cases: [string, (r: any) => void, RegExp][] = [
    ["missing field", (r) => delete r.model_calls, /\$\.model_calls: required/],
    ["extra field", (r) => (r.prompt = "text"), /\$\.prompt: not allowed/],
    ["unknown outcome", (r) => (r.outcome = "exploded"), /\$\.outcome: not in enum/],
    ["unknown version", (r) => (r.schema_version = 2), /\$\.schema_version: expected const/],
    ["negative bytes", (r) => (r.phases.arguments.request_bytes.max = -1), /request_bytes\.max: below minimum/],
    ["fractional count", (r) => (r.calls[0].request_bytes = 1.5), /\$\.calls\[0\]\.request_bytes: expected integer/],
    ["usage counter as a string", (r) => (r.usage.input = "12"), /\$\.usage\.input: matches no anyOf branch/],
    ["error without message", (r) => (r.error = { code: "x" }), /\$\.error: matches no anyOf branch/],
  ];
  for (const [name, mutate, expected] of cases) {
    const report = good();
    mutate(report);
    const errors = validate(schema, report);
    assert.match(errors.join("\n"), expected, name);
    assert.equal(ContextReport.safeParse(report).success, false, `zod agrees: ${name}`);
  }
});
