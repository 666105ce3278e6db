// Every exported value of commands/ and lib/ is imported somewhere (api.ts is the library's surface and exempt): an
// export nobody takes is dead code, or a private helper that should not promise anything.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { exportedValues, importedNames, unusedExports } from "./helpers/exports.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

test("the export scan sees functions, constants, classes and value re-exports, and skips types", () => {
  const source = [
    "export function a() {}",
    "export async function b() {}",
    "export const C = 1;",
    "export class D {}",
    "export type E = string;",
    "export interface F {}",
    "const g = 1;",
    "export { g, type H };",
    'export { i as j } from "./k.ts";',
    "// export const commented = 1;",
  ].join("\n");
  assert.deepEqual(exportedValues(source).sort(), ["C", "D", "a", "b", "g", "j"]);
});

test("the import scan sees named, renamed, type-only, namespace and dynamic imports", () => {
  const source = [
    'import { a, b as c, type D } from "./x.ts";',
    'import type { E } from "./y.ts";',
    'import * as all from "./z.ts";',
    'export { f } from "./w.ts";',
    'const { g } = await import("./v.ts");',
  ].join("\n");
  const found = importedNames(source);
  assert.deepEqual(found.find((i) => i.specifier === "./x.ts")?.names, ["a", "b", "D"]);
  assert.deepEqual(found.find((i) => i.specifier === "./y.ts")?.names, ["E"]);
  assert.equal(found.find((i) => i.specifier === "./z.ts")?.names, "*");
  assert.deepEqual(found.find((i) => i.specifier === "./w.ts")?.names, ["f"]);
  assert.ok((found.find((i) => i.specifier === "./v.ts")?.names as string[]).includes("g"));
});

test("an export no module imports is found, one imported is not, and a public module is exempt", () => {
  const root = mkdtempSync(join(tmpdir(), "loom-exports-"));
  try {
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write("lib/a.ts", "export const used = 1;\nexport function unused() {}\nexport const Schema = 1;\n");
    write(
      "lib/b.ts",
      'import { used } from "./a.ts";\nimport type { Schema } from "./a.ts";\nexport const b = used;\n',
    );
    write("api.ts", 'export { b } from "./lib/b.ts";\nexport const surface = 1;\n');
    assert.deepEqual(
      unusedExports(root, { exporters: ["lib", "api.ts"], importers: ["lib", "api.ts"], publicModules: ["api.ts"] }),
      ["lib/a.ts: unused"],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("every exported value of commands/ and lib/ is imported by some module", () => {
  const unused = unusedExports(ROOT, {
    exporters: ["commands", "lib"],
    importers: ["main.ts", "api.ts", "commands", "lib", "tests", "bench", "scripts"],
    publicModules: ["api.ts"],
  });
  assert.deepEqual(unused, [], "exported values nothing imports: drop the export, or the code");
});
