// docs/providers.md's per-model rows are generated from the built-in table (scripts/gen-model-rows.ts), so a fact is
// written once: this fails when the doc and the table disagree, and when an entry in service has no source or date.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { withModelRows } from "../scripts/gen-model-rows.ts";

test("docs/providers.md's model rows are the table's (regenerate: bun scripts/gen-model-rows.ts)", () => {
  const doc = readFileSync(new URL("../docs/providers.md", import.meta.url), "utf8");
  assert.equal(doc, withModelRows(doc));
  for (const key of Object.keys(BUILT_IN_MODELS.models)) assert.ok(doc.includes(`| \`${key}\` |`), key);
});

test("every entry in service names where its facts were read (URLs) and when", () => {
  const today = BUILT_IN_MODELS.updated ?? "";
  for (const [key, entry] of Object.entries(BUILT_IN_MODELS.models)) {
    if (entry.retired && entry.retired.date <= today) continue;
    const urls = entry.source.split(" ");
    assert.ok(urls.length > 0 && urls.every((url) => /^https:\/\/[a-z0-9.-]+\.[a-z]+\//.test(url)), key);
    assert.match(entry.date, /^20\d\d-\d\d-\d\d$/, key);
    assert.ok(entry.date <= today, `${key}: read after the table's date`);
  }
});
