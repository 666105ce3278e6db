// lib/ is pure: data in, data out. Effects — process, runtime globals, network, clock, timers, randomness, files,
// processes, console — live only in the places tests/helpers/effect-places.ts lists (and api.ts, commands/, main.ts)
// and are passed in. Checked mechanically over every other module of lib/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { EFFECT_PLACES, isEffectPlace } from "./helpers/effect-places.ts";

const LIB = fileURLToPath(new URL("../lib/", import.meta.url));
const ROOT = join(LIB, "..");
const inEffectPlace = (path: string) => isEffectPlace(relative(ROOT, path).split("\\").join("/"));
// The one import from outside lib/: the version, read as data from the package manifest (lib/version.ts).
const MANIFEST = join(LIB, "..", "package.json");

const FORBIDDEN: [RegExp, string][] = [
  [/\bprocess\s*\./, "process.*"],
  [/\b(Bun|Deno)\b/, "a runtime global (Bun, Deno)"],
  [/\bglobalThis\b/, "globalThis"],
  [/\bfetch\s*\(/, "fetch()"],
  [/\bDate\.now\b/, "Date.now"],
  [/\bnew\s+Date\s*\(\s*\)/, "new Date() (the clock)"],
  [/\bperformance\s*\.\s*now\b/, "performance.now"],
  [/\b(setTimeout|setInterval|setImmediate|clearTimeout|clearInterval)\b/, "a timer"],
  [/\bMath\.random\b/, "Math.random"],
  [/\b(randomUUID|randomBytes|getRandomValues)\b/, "randomness"],
  [/\bconsole\s*\./, "console output"],
  [/\brequire\s*\(/, "require()"],
  [/\bimport\s*\(/, "a dynamic import()"],
  [/\bimport\.meta\b/, "import.meta"],
  [
    /\b(readFileSync|writeFileSync|readFile|writeFile|statSync|mkdirSync|rmSync|spawn|execSync|execFile)\s*\(/,
    "a file or process call",
  ],
];

/** Built-in modules a pure module may use: hashing, path and URL arithmetic, formatting. */
const PURE_BUILTINS = new Set(["node:crypto", "node:path", "node:url", "node:util", "node:buffer"]);

/** Removes comments, so a comment may name what it avoids; "//" inside a string (a URL) is kept. */
function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, " ")).replace(
    /(^|[^:"'`\\])\/\/.*$/gm,
    "$1",
  );
}

/** Each forbidden use in a module's source, as "line N: what". */
function effectsIn(source: string): string[] {
  const found: string[] = [];
  stripComments(source).split("\n").forEach((line, i) => {
    for (const [pattern, what] of FORBIDDEN) if (pattern.test(line)) found.push(`line ${i + 1}: ${what}`);
  });
  return found;
}

/** The specifiers of a module's static imports and re-exports. */
function importsOf(source: string): string[] {
  const code = stripComments(source);
  const specifiers: string[] = [];
  const statement =
    /(?:^|[;\n])\s*(?:import\s[^;'"]*?\bfrom\s*|import\s*|export\s+(?:type\s+)?(?:\*|\{[^}]*\})\s*from\s*)["']([^"']+)["']/g;
  for (const match of code.matchAll(statement)) specifiers.push(match[1]);
  return specifiers;
}

/** Why an import does not belong in a pure module, or null when it does. */
function impureImport(specifier: string, { from }: { from: string }): string | null {
  if (specifier === "zod") return null;
  if (specifier.startsWith("node:")) return PURE_BUILTINS.has(specifier) ? null : `imports the I/O module ${specifier}`;
  if (!specifier.startsWith(".")) return `imports the package ${JSON.stringify(specifier)}`;
  const target = join(from, "..", specifier);
  if (target === MANIFEST && from === join(LIB, "version.ts")) return null;
  if (!target.startsWith(LIB)) return `imports ${specifier}, outside lib/ (commands, api and main are effects)`;
  if (inEffectPlace(target)) return `imports ${specifier}, a place of effects (tests/helpers/effect-places.ts)`;
  return null;
}

function pureModules(dir = LIB): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      files.push(...pureModules(path));
    } else if (entry.name.endsWith(".ts") && !inEffectPlace(path)) files.push(path);
  }
  return files.sort();
}

test("lib/ outside its places of effects makes no effect calls: no process, runtime globals, fetch, clock, timers, randomness, files or console", () => {
  const modules = pureModules();
  assert.ok(modules.length >= 40, `found only ${modules.length} modules under lib/`);
  const violations = modules.flatMap((path) =>
    effectsIn(readFileSync(path, "utf8")).map((v) => `lib/${relative(LIB, path)} ${v}`)
  );
  assert.deepEqual(violations, []);
});

test("lib/ outside its places of effects imports only lib modules, zod and pure built-ins (hashing, paths, URLs)", () => {
  const violations: string[] = [];
  let imports = 0;
  for (const path of pureModules()) {
    for (const specifier of importsOf(readFileSync(path, "utf8"))) {
      imports += 1;
      const why = impureImport(specifier, { from: path });
      if (why) violations.push(`lib/${relative(LIB, path)} ${why}`);
    }
  }
  assert.ok(imports >= 100, `found only ${imports} imports: the import scan is broken`);
  assert.deepEqual(violations, []);
});

test("the effect scan catches each forbidden call, and ignores comments and URLs in strings", () => {
  const caught: [string, string][] = [
    ["const env = process.env.HOME;", "process.*"],
    ['if (typeof Bun !== "undefined") {}', "a runtime global (Bun, Deno)"],
    ["const args = Deno.args;", "a runtime global (Bun, Deno)"],
    ["const f = globalThis.fetch;", "globalThis"],
    ["await fetch(url, init);", "fetch()"],
    ["function run({ now = Date.now } = {}) {}", "Date.now"],
    ["const today = new Date();", "new Date() (the clock)"],
    ["const t0 = performance.now();", "performance.now"],
    ["setTimeout(done, 10);", "a timer"],
    ["const id = Math.random();", "Math.random"],
    ["const id = crypto.randomUUID();", "randomness"],
    ["console.log(report);", "console output"],
    ['const fs = require("fs");', "require()"],
    ['const m = await import("./x.ts");', "a dynamic import()"],
    ["if (import.meta.main) {}", "import.meta"],
    ['const text = readFileSync(path, "utf8");', "a file or process call"],
  ];
  for (const [line, what] of caught) assert.deepEqual(effectsIn(`const a = 1;\n${line}\n`), [`line 2: ${what}`], line);
  const innocent = [
    "// the loop never calls Date.now or fetch() itself: the clock is passed in",
    "/* process.env is read by the adapters,\n   never here (setTimeout too) */",
    'const base = "https://api.example.com/v1"; // fetch( is not called',
    "const at = new Date(timestampMs).toISOString();",
    "const processed = reports.map((r) => r.kind);",
    "const fetched = lookups.length;",
  ];
  for (const source of innocent) assert.deepEqual(effectsIn(source), [], source);
});

test("the import scan sees static imports and re-exports, and rejects I/O modules, places of effects and the CLI", () => {
  const source = [
    'import { z } from "zod";',
    'import type { Usage } from "./turn.ts";',
    "import {",
    "  a,",
    "  b,",
    '} from "./budget.ts";',
    'export { ResultStore } from "./store.ts";',
    'export const PLACEHOLDER = "{{request}}";',
    "export type { Usage };",
    'import { readFileSync } from "node:fs";',
    '// import { ignored } from "node:child_process";',
  ].join("\n");
  assert.deepEqual(importsOf(source), ["zod", "./turn.ts", "./budget.ts", "./store.ts", "node:fs"]);
  const from = join(LIB, "loop.ts");
  assert.equal(impureImport("./turn.ts", { from }), null);
  assert.equal(impureImport("node:crypto", { from }), null);
  assert.match(impureImport("node:fs", { from })!, /I\/O module node:fs/);
  assert.match(impureImport("node:child_process", { from })!, /I\/O module/);
  assert.match(impureImport("./workspace/process.ts", { from })!, /a place of effects/);
  assert.match(impureImport("../io/files.ts", { from: join(LIB, "providers", "x.ts") })!, /a place of effects/);
  assert.match(impureImport("./http/post-json.ts", { from: join(LIB, "providers", "x.ts") })!, /a place of effects/);
  assert.match(impureImport("./ollama-provider.ts", { from: join(LIB, "providers", "ollama", "x.ts") })!, /effects/);
  assert.equal(impureImport("./convert-ollama-response.ts", { from: join(LIB, "providers", "ollama", "x.ts") }), null);
  assert.match(impureImport("../commands/io.ts", { from })!, /outside lib\//);
  assert.match(impureImport("undici", { from })!, /package "undici"/);
});

test("every place of effects exists, and the pure modules are most of lib/", () => {
  const missing = EFFECT_PLACES.filter((place) => !existsSync(join(ROOT, place)));
  assert.deepEqual(missing, [], "places of effects that no longer exist (tests/helpers/effect-places.ts)");
  assert.equal(isEffectPlace("lib/providers/anthropic/convert-to-anthropic-request.ts"), false);
  assert.equal(isEffectPlace("lib/providers/anthropic/anthropic-provider.ts"), true);
  assert.equal(isEffectPlace("lib/eval/run/eval-run.ts"), true);
  assert.equal(isEffectPlace("lib/eval/stats.ts"), false);
  assert.ok(pureModules().length >= 100, `only ${pureModules().length} pure modules`);
});
