// Adding a provider kind is one name in ModelProvider plus its entries in the two registries (lib/models/
// provider-kinds.ts's PROVIDER_KINDS: base URL, its variable, key variable and shape, how an unknown model is called;
// lib/run/create-provider.ts's ADAPTERS: its HTTP adapter). On a scratch copy of the product code with a "google" kind
// and no entries, tsc fails at exactly those two places — no if-chain elsewhere sends the new kind's ids somewhere else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/binary.ts";
import { createProvider } from "../api.ts";
import { ModelProvider, parseModelRef, PROVIDER_KINDS } from "../lib/models/provider-kinds.ts";

test("every provider kind has its facts, and a kind's own key variable has its kind's shape", () => {
  assert.deepEqual(Object.keys(PROVIDER_KINDS).sort(), [...ModelProvider.options].sort());
  for (const kind of ModelProvider.options) {
    const { keyEnv, keyName, baseUrl } = PROVIDER_KINDS[kind];
    if (keyEnv !== null) assert.match(keyEnv, keyName, kind);
    assert.ok(["http:", "https:"].includes(new URL(baseUrl).protocol), kind);
  }
  assert.deepEqual(ModelProvider.options.filter((kind) => PROVIDER_KINDS[kind].unknownModel.local), [
    "openai-compatible",
    "ollama",
  ]);
  assert.equal(PROVIDER_KINDS.anthropic.keyName.test("OPENAI_API_KEY"), false);
});

test("a provider kind added to ModelProvider without its registry entries fails typechecking, at the registries only", {
  timeout: 600_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-provider-registry-"));
  try {
    for (
      const path of ["main.ts", "api.ts", "package.json", "tsconfig.json", "tsconfig.product.json", "commands", "lib"]
    ) {
      cpSync(join(ROOT, path), join(dir, path), { recursive: true });
    }
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    const kinds = join(dir, "lib", "models", "provider-kinds.ts");
    const source = readFileSync(kinds, "utf8");
    const enumText = 'z.enum(["anthropic", "openai", "openai-compatible", "ollama", "openrouter"])';
    const added = source.replace(enumText, enumText.replace('"openrouter"]', '"openrouter", "google"]'));
    assert.notEqual(added, source, "the enum is where this test expects it");
    writeFileSync(kinds, added);
    const tsc = spawnSync(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.product.json"], {
      cwd: dir,
      encoding: "utf8",
    });
    assert.notEqual(tsc.status, 0, "tsc must refuse a provider kind without its entries");
    const files = new Set([...tsc.stdout.matchAll(/^([\w./-]+)\(\d+,\d+\): error TS\d+/gm)].map((m) => m[1]));
    assert.deepEqual([...files].sort(), ["lib/models/provider-kinds.ts", "lib/run/create-provider.ts"], tsc.stdout);
    assert.match(tsc.stdout, /google/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a model name is split in one place: the first slash separates a known kind from the id its API knows", () => {
  assert.deepEqual(parseModelRef("anthropic/claude-sonnet-5-5"), { provider: "anthropic", id: "claude-sonnet-5-5" });
  assert.deepEqual(parseModelRef("openrouter/anthropic/claude-sonnet-5-5"), {
    provider: "openrouter",
    id: "anthropic/claude-sonnet-5-5",
  });
  assert.deepEqual(parseModelRef("ollama/qwen2.5-coder:7b"), { provider: "ollama", id: "qwen2.5-coder:7b" });
  for (const bad of ["claude-sonnet-5-5", "google/gemini", "/x", "", "Anthropic/x"]) {
    assert.equal(parseModelRef(bad), null, bad);
  }
  // in product code, no other module reads a model name's slash
  const sources = readdirSync(join(ROOT, "lib"), { recursive: true }).map(String).filter((f) => f.endsWith(".ts"))
    .map((f) => ({ f, text: readFileSync(join(ROOT, "lib", f), "utf8") }));
  const parsers = sources.filter(({ text }) => text.includes('indexOf("/")')).map(({ f }) => f.split("\\").join("/"));
  assert.deepEqual(parsers, ["models/provider-kinds.ts"]);
});

test("the library exports createProvider: a configuration you write becomes a provider of its kind", () => {
  const local = createProvider({ kind: "openai-compatible", model: "qwen2.5-coder:7b" }, { env: {} });
  assert.equal(typeof local.complete, "function");
  assert.throws(
    () => createProvider({ kind: "anthropic", model: "claude-sonnet-5-5" }, { env: {} }),
    /ANTHROPIC_API_KEY/,
  );
});
