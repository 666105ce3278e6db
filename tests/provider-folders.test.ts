// Inside lib/providers/, the arrows run one way too: a kind's folder (anthropic/, openai/, …) builds on the shared code
// at the top (and http/), and hands what is its own (its body's cache layout, the code it adds to Chat Completions) to the shared
// code through the registry; the shared code never imports a kind's folder, and no kind's folder imports another's.
// So a kind is read, changed or removed in its folder alone. lib/'s folders stack likewise: tests/folder-order.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/binary.ts";
import { type ImportGraph, importGraph } from "./helpers/import-graph.ts";
import { ModelProvider, PROVIDER_KINDS } from "../lib/models/provider-kinds.ts";

/** The folders under lib/providers/ that are shared code, not a kind's. */
const SHARED_FOLDERS = ["http"];

/** The owner of a module under lib/providers/: its kind's folder, or "shared" (the top-level files and http/). */
function ownerOf(module: string): string | null {
  const match = /^lib\/providers\/(?:([^/]+)\/)?[^/]+$/.exec(module.split("\\").join("/"));
  if (match === null) return null;
  const folder = match[1];
  return folder === undefined || SHARED_FOLDERS.includes(folder) ? "shared" : folder;
}

/** Each import inside lib/providers/ from shared code into a kind's folder, or from one kind's folder into another's. */
function arrowsBackUp(modules: ImportGraph): string[] {
  return [...modules].flatMap(([module, imports]) => {
    const from = ownerOf(module);
    if (from === null) return [];
    return imports.filter((target) => {
      const to = ownerOf(target);
      return to !== null && to !== "shared" && to !== from;
    }).map((target) => `${module} -> ${target}`);
  });
}

test("an arrow back up inside lib/providers/ is found (on the edges before each kind handed over its own)", () => {
  const before: ImportGraph = new Map(Object.entries({
    "lib/providers/cache-layout.ts": [
      "lib/vocabulary/turn.ts",
      "lib/providers/anthropic/convert-to-anthropic-request.ts",
      "lib/providers/render-sections.ts",
    ],
    "lib/providers/openai/openai-provider.ts": [
      "lib/providers/openai/convert-openai-response.ts",
      "lib/providers/openrouter/mark-openrouter-cache.ts",
      "lib/providers/http/send-json.ts",
    ],
    "lib/providers/openrouter/mark-openrouter-cache.ts": ["lib/providers/openai/convert-to-openai-request.ts"],
    "lib/providers/http/send-json.ts": ["lib/providers/http/post-json.ts"],
    "lib/run/create-provider.ts": ["lib/providers/openai/openai-provider.ts"],
  }));
  assert.deepEqual(arrowsBackUp(before), [
    "lib/providers/cache-layout.ts -> lib/providers/anthropic/convert-to-anthropic-request.ts",
    "lib/providers/openai/openai-provider.ts -> lib/providers/openrouter/mark-openrouter-cache.ts",
    "lib/providers/openrouter/mark-openrouter-cache.ts -> lib/providers/openai/convert-to-openai-request.ts",
  ]);
});

test("inside lib/providers/, shared code never imports a kind's folder and no kind's folder imports another's", () => {
  const modules = importGraph(ROOT, ["lib/providers"]);
  assert.ok(modules.size > 40, `only ${modules.size} modules found`);
  assert.deepEqual(arrowsBackUp(modules), []);
});

test("each folder under lib/providers/ is a kind's or shared, and each kind with an API of its own has its folder", () => {
  const folders = readdirSync(join(ROOT, "lib/providers"), { withFileTypes: true }).filter((e) => e.isDirectory())
    .map((e) => e.name).filter((name) => !SHARED_FOLDERS.includes(name));
  const kinds: readonly string[] = ModelProvider.options;
  assert.deepEqual(folders.filter((folder) => !kinds.includes(folder)), [], "a folder that is no kind's");
  // A kind that speaks Chat Completions as its PROVIDER_KINDS facts say (a local server) has no code, so no folder.
  const own = ModelProvider.options.filter((kind) => PROVIDER_KINDS[kind].chat === null);
  assert.deepEqual(own.filter((kind) => !folders.includes(kind)), [], "a kind with an API of its own has no folder");
});
