// lib/providers is pure: no process, runtime globals, network, clock or filesystem; effects live in lib/adapters.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const FORBIDDEN: [RegExp, string][] = [
  [/\bprocess\./, "process"],
  [/\bBun\./, "Bun.*"],
  [/\bDeno\./, "Deno.*"],
  [/\bfetch\s*\(/, "fetch"],
  [/\bDate\.now\b/, "Date.now"],
  [/\bsetTimeout\b/, "setTimeout"],
  [/from\s+["']node:(fs|child_process|net|http|https)/, "an I/O module"],
];

test("lib/providers has no effects: no process, Bun/Deno, fetch, clock or I/O", () => {
  const dir = fileURLToPath(new URL("../lib/providers/", import.meta.url));
  const files = readdirSync(dir).filter((name) => name.endsWith(".ts"));
  assert.ok(files.length >= 10);
  for (const name of files) {
    const source = readFileSync(`${dir}${name}`, "utf8");
    for (const [pattern, what] of FORBIDDEN) assert.ok(!pattern.test(source), `lib/providers/${name} uses ${what}`);
  }
});

test("provider modules stay small (one reason to change each)", () => {
  for (const sub of ["../lib/providers/", "../lib/adapters/providers/"]) {
    const dir = fileURLToPath(new URL(sub, import.meta.url));
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".ts"))) {
      const lines = readFileSync(`${dir}${name}`, "utf8").split("\n").length;
      assert.ok(lines <= 300, `${sub}${name} has ${lines} lines`);
    }
  }
});
