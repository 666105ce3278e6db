// No import cycles: every module can be read, tested and moved after the modules it imports. The walker is checked on
// small graphs first, so a walker that finds nothing cannot pass for a repository without cycles.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { findCycles, type ImportGraph, importGraph, importSpecifiers } from "./helpers/import-graph.ts";
import { isEffectPlace } from "./helpers/effect-places.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const graph = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

test("importSpecifiers finds value, type-only and re-export imports, across lines, and skips comments and packages", () => {
  const source = [
    'import { a } from "./a.ts";',
    'import type { B } from "../b.ts";',
    "import {",
    "  c,",
    "  type D,",
    '} from "./c.ts";',
    'export { e } from "./e.ts";',
    'export type { F } from "./f.ts";',
    'import "./side-effect.ts";',
    '// import { x } from "./commented.ts";',
    'import { z } from "zod";',
    'const url = "https://example.com/a.ts";',
  ].join("\n");
  assert.deepEqual(importSpecifiers(source), [
    "./a.ts",
    "../b.ts",
    "./c.ts",
    "./e.ts",
    "./f.ts",
    "./side-effect.ts",
  ]);
});

test("findCycles reports a two-module cycle, a longer one and a self-import, each once", () => {
  const cycles = findCycles(graph({
    "a.ts": ["b.ts"],
    "b.ts": ["a.ts", "c.ts"],
    "c.ts": ["d.ts"],
    "d.ts": ["e.ts"],
    "e.ts": ["c.ts"],
    "f.ts": ["f.ts"],
    "g.ts": ["a.ts"],
  }));
  assert.deepEqual(cycles, [["a.ts", "b.ts", "a.ts"], ["c.ts", "d.ts", "e.ts", "c.ts"], ["f.ts", "f.ts"]]);
  assert.deepEqual(findCycles(graph({ "a.ts": ["b.ts", "c.ts"], "b.ts": ["c.ts"], "c.ts": [] })), []);
});

test("the repository's modules import one another without a cycle", () => {
  const modules = importGraph(ROOT, ["main.ts", "api.ts", "commands", "lib", "bench", "scripts", "tests"]);
  assert.ok(modules.size > 100, `only ${modules.size} modules found`);
  assert.ok(modules.get("lib/loop/loop.ts")?.includes("lib/loop/stage.ts"), "the walker resolves relative imports");
  const cycles = findCycles(modules).map((cycle) => cycle.join(" -> "));
  assert.deepEqual(cycles, [], `import cycles:\n${cycles.join("\n")}`);
});

/** The floor a module stands on: main.ts and api.ts on top, then commands/, then lib/'s places of effects, then pure lib/. */
function floorOf(module: string): number {
  if (module === "main.ts" || module === "api.ts") return 3;
  if (module.startsWith("commands/")) return 2;
  if (isEffectPlace(module)) return 1;
  if (module.startsWith("lib/")) return 0;
  return -1; // bench, scripts, tests: users of every floor
}

test("no module imports from a floor above its own (pure lib/ < lib/'s places of effects < commands/ < main.ts, api.ts)", () => {
  const modules = importGraph(ROOT, ["main.ts", "api.ts", "commands", "lib"]);
  const upward = [...modules].flatMap(([module, imports]) =>
    imports.filter((target) => floorOf(target) > floorOf(module)).map((target) => `${module} -> ${target}`)
  );
  assert.ok(modules.size > 120, `only ${modules.size} modules`);
  assert.deepEqual(upward, []);
  assert.equal(floorOf("lib/context/context.ts"), 0);
  assert.ok(floorOf("commands/run.ts") > floorOf("lib/run/start-run.ts"));
});
