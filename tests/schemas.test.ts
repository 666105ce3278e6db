import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { renderJsonSchema, SCHEMA_PATHS, type SchemaName } from "../lib/schemas.ts";

for (const name of Object.keys(SCHEMA_PATHS) as SchemaName[]) {
  test(`the shipped ${SCHEMA_PATHS[name]} equals the schema generated from zod (regenerate: bun scripts/gen-schemas.ts)`, () => {
    const shipped = readFileSync(new URL(`../${SCHEMA_PATHS[name]}`, import.meta.url), "utf8");
    assert.equal(shipped, renderJsonSchema(name));
  });
}
