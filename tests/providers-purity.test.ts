// lib/providers is pure outside its HTTP folder and each kind's adapter (tests/helpers/effect-places.ts): no process,
// runtime globals, network, clock or filesystem in the converters.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { isEffectPlace } from "./helpers/effect-places.ts";

const FORBIDDEN: [RegExp, string][] = [
  [/\bprocess\./, "process"],
  [/\bBun\./, "Bun.*"],
  [/\bDeno\./, "Deno.*"],
  [/\bfetch\s*\(/, "fetch"],
  [/\bDate\.now\b/, "Date.now"],
  [/\bsetTimeout\b/, "setTimeout"],
  [/from\s+["']node:(fs|child_process|net|http|https)/, "an I/O module"],
];

/** The modules under lib/providers/, as paths below it ("anthropic/convert-anthropic-usage.ts"). */
function providerModules(): string[] {
  const dir = fileURLToPath(new URL("../lib/providers/", import.meta.url));
  return readdirSync(dir, { recursive: true }).map(String).filter((name) => name.endsWith(".ts"))
    .map((name) => name.split("\\").join("/"));
}

test("lib/providers has no effects outside its places of effects: no process, Bun/Deno, fetch, clock or I/O", () => {
  const dir = fileURLToPath(new URL("../lib/providers/", import.meta.url));
  const files = providerModules().filter((name) => !isEffectPlace(`lib/providers/${name}`));
  assert.ok(files.length >= 25);
  for (const name of files) {
    const source = readFileSync(`${dir}${name}`, "utf8");
    for (const [pattern, what] of FORBIDDEN) assert.ok(!pattern.test(source), `lib/providers/${name} uses ${what}`);
  }
});

test("provider modules stay small (one reason to change each)", () => {
  const dir = fileURLToPath(new URL("../lib/providers/", import.meta.url));
  for (const name of providerModules()) {
    const lines = readFileSync(`${dir}${name}`, "utf8").split("\n").length;
    assert.ok(lines <= 300, `lib/providers/${name} has ${lines} lines`);
  }
});
