// lib/'s parts stack: each folder (and lib/'s top-level modules, taken together as the shared rules) imports only from
// the parts below it, so lib/ reads bottom-up without doubling back. The order is written once, here; the drawing in
// docs/architecture.md must draw the parts in the same order (highest first). Type-only imports count.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findCycles, type ImportGraph, importGraph } from "./helpers/import-graph.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** lib/'s parts, lowest first. `*.ts` is every top-level module of lib/ not named on its own line. */
const ORDER = [
  "text/",
  "vocabulary/",
  "models/",
  "*.ts",
  "io/",
  "context/",
  "loop/",
  "providers/",
  "settings/",
  "report/",
  "catalog/",
  "recording/",
  "workspace/",
  "run/",
  "eval/",
  "doctor/",
  "schemas.ts",
];

/** The part of lib/ a module belongs to: its folder under lib/, or `*.ts` (or its own name) at lib/'s top. */
function partOf(module: string): string {
  const [, first, ...rest] = module.split("/");
  if (rest.length > 0) return `${first}/`;
  return ORDER.includes(first) ? first : "*.ts";
}

/** The graph of the parts: one edge per pair of parts some module of one imports a module of the other. */
function partGraph(modules: ImportGraph): ImportGraph {
  const parts: ImportGraph = new Map();
  for (const [module, imports] of modules) {
    const from = partOf(module);
    const edges = parts.get(from) ?? [];
    for (const target of imports.filter((t) => t.startsWith("lib/") && partOf(t) !== from)) {
      if (!edges.includes(partOf(target))) edges.push(partOf(target));
    }
    parts.set(from, edges);
  }
  return parts;
}

/** Each import of a module from a part drawn above its own, as "importer -> imported". */
function upwardImports(modules: ImportGraph): string[] {
  const rank = (module: string) => ORDER.indexOf(partOf(module));
  return [...modules].flatMap(([module, imports]) =>
    imports.filter((t) => t.startsWith("lib/") && rank(t) > rank(module)).map((t) => `${module} -> ${t}`)
  );
}

const graph = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

test("parts, cycles and upward imports are found (on edges the tree had before lib/vocabulary/)", () => {
  assert.equal(partOf("lib/loop/loop.ts"), "loop/");
  assert.equal(partOf("lib/recording/importers/step.ts"), "recording/");
  assert.equal(partOf("lib/errors.ts"), "*.ts");
  assert.equal(partOf("lib/schemas.ts"), "schemas.ts");
  const before = graph({
    "lib/loop/loop.ts": ["lib/context/events.ts", "lib/loop/turn.ts"],
    "lib/context/events.ts": ["lib/loop/reports.ts"],
    "lib/loop/turn.ts": [],
    "lib/loop/reports.ts": [],
    "lib/text/clip.ts": ["lib/context/digest.ts"],
    "lib/context/digest.ts": [],
  });
  assert.deepEqual(findCycles(partGraph(before)), [["context/", "loop/", "context/"]]);
  assert.deepEqual(upwardImports(before), [
    "lib/context/events.ts -> lib/loop/reports.ts",
    "lib/text/clip.ts -> lib/context/digest.ts",
  ]);
  const after = graph({
    "lib/loop/loop.ts": ["lib/context/events.ts", "lib/vocabulary/turn.ts"],
    "lib/context/events.ts": ["lib/vocabulary/reports.ts"],
    "lib/text/clip.ts": ["lib/text/digest.ts"],
  });
  assert.deepEqual([findCycles(partGraph(after)), upwardImports(after)], [[], []]);
});

test("every part of lib/ is in the order, and no part of lib/ imports from a part above it", () => {
  const modules = importGraph(ROOT, ["lib"]);
  assert.ok(modules.size > 100, `only ${modules.size} modules found`);
  const unknown = [...new Set([...modules.keys()].map(partOf))].filter((part) => !ORDER.includes(part));
  assert.deepEqual(unknown, [], "folders of lib/ missing from ORDER (tests/folder-order.test.ts)");
  const cycles = findCycles(partGraph(modules)).map((cycle) => cycle.join(" -> "));
  assert.deepEqual(cycles, [], `folder cycles:\n${cycles.join("\n")}`);
  assert.deepEqual(upwardImports(modules), [], `the order, lowest first: ${ORDER.join(" < ")}`);
});

test("docs/architecture.md draws lib/'s parts in this order, highest first, and every module at lib/'s top", () => {
  const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const from = doc.indexOf("```\nlib/\n");
  assert.ok(from >= 0, "the drawing of lib/ (a block starting with lib/) is there");
  const drawing = doc.slice(from, doc.indexOf("```", from + 4)).split("\n");
  // each line that starts with a part (a folder, or a top-level module) names it; the same part twice in a row once
  const parts = drawing.map((line) => /^ {2}([a-z-]+\/|[a-z-]+\.ts)\s/.exec(line)?.[1]).filter((name) => name)
    .map((name) => name!.endsWith("/") ? name! : partOf(`lib/${name}`));
  const drawn = parts.filter((part, i) => part !== parts[i - 1]);
  assert.deepEqual(drawn, [...ORDER].reverse());
  const top = readdirSync(join(ROOT, "lib")).filter((name) => name.endsWith(".ts"));
  const undrawn = top.filter((name) => !drawing.some((line) => new RegExp(`(^ {2}|\\s{2})${name}\\s`).test(line)));
  assert.deepEqual(undrawn, [], "top-level modules of lib/ the drawing leaves out");
});
