// The catalog format: JSONC parsing, zod validation with file + field path + expectation, and the shipped JSON Schema.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { type Catalog, catalogJsonSchema, loadCatalog, parseJsonc, renderIntent } from "../lib/catalog/catalog.ts";
import { LoomError, StartupError } from "../lib/errors.ts";
import { endingOf } from "../lib/ending.ts";
import { main } from "../main.ts";
import { renderJsonSchema } from "../commands/schema.ts";
import type { Io } from "../commands/io.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const EXAMPLE = resolve(ROOT, "testdata/catalog/example.jsonc");

function validCatalog(): Record<string, any> {
  return {
    models: { local: { kind: "openai-compatible", model: "qwen2.5-coder" } },
    slices: {
      "fix-tests": {
        description: "Fix failing tests",
        intent: "{{request}}",
        instructions: "Work carefully.",
        actions: ["read_file", "edit_file", "run_tests"],
        test: { command: ["node", "test.mjs"], timeout_ms: 30000 },
        model: "local",
        limits: { max_steps: 10 },
      },
    },
  };
}

function loadError(value: unknown, file = "catalogs/team.jsonc"): LoomError {
  try {
    loadCatalog(JSON.stringify(value), { file });
  } catch (error) {
    assert.ok(error instanceof StartupError, `expected a StartupError, got ${error}`);
    return error;
  }
  assert.fail("expected the catalog to be rejected");
}

function fakeIo(): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (text) => void out.push(text),
    stderr: (text) => void err.push(text),
    readStdin: () => Promise.resolve(""),
    env: {},
    cwd: ROOT,
    isTTY: false,
    signal: new AbortController().signal,
  };
}

test("the example catalog loads: comments, trailing commas, two slices, and all three kinds of route", () => {
  const catalog = loadCatalog(readFileSync(EXAMPLE, "utf8"), { file: "testdata/catalog/example.jsonc" });
  assert.deepEqual(Object.keys(catalog.slices), ["fix-tests", "explain"]);
  assert.equal(catalog.routes?.rules?.length, 1);
  assert.equal(catalog.routes?.classification?.model, "gpt");
  assert.equal(catalog.routes?.default, "explain");
  // The editor hook points at the shipped schema.
  assert.ok(existsSync(resolve(dirname(EXAMPLE), catalog.$schema as string)));
});

test("a valid catalog parses to the same data; $schema is allowed for editors", () => {
  const value = { $schema: "./catalog.schema.json", ...validCatalog() };
  const catalog: Catalog = loadCatalog(JSON.stringify(value), { file: "c.json" });
  assert.deepEqual(catalog, value);
});

test("a wrong type names the file, the field path and what was expected", () => {
  const value = validCatalog();
  value.slices["fix-tests"].test.timeout_ms = "30s";
  const error = loadError(value);
  assert.equal(error.code, "catalog_invalid");
  assert.equal(endingOf({ threw: error }).exitCode, 3);
  assert.match(
    error.message,
    /^Invalid catalog "catalogs\/team\.jsonc": slices\.fix-tests\.test\.timeout_ms: .*expected number, received string/,
  );
});

test("a number out of range says which bound it broke", () => {
  const value = validCatalog();
  value.slices["fix-tests"].limits.max_steps = 0;
  assert.match(loadError(value).message, /slices\.fix-tests\.limits\.max_steps: .*>0/);
});

test("unknown keys are errors at their own path, listing the keys that are allowed", () => {
  const value = validCatalog();
  value.slices["fix-tests"].timeout = 5;
  value.rotues = {};
  const { message } = loadError(value);
  assert.match(
    message,
    /slices\.fix-tests\.timeout: unknown key \(expected one of description, intent, instructions, actions, test, model,/,
  );
  assert.match(message, /rotues: unknown key \(expected one of \$schema, defaults, models, slices, routes\)/);
});

test("a missing field is called missing, with the expected type", () => {
  const value = validCatalog();
  delete value.slices["fix-tests"].instructions;
  assert.match(loadError(value).message, /slices\.fix-tests\.instructions: required field missing \(expected string\)/);
});

test("an unknown action names the array index and the allowed actions", () => {
  const value = validCatalog();
  value.slices["fix-tests"].actions = ["read_file", "delete_repo"];
  assert.match(loadError(value).message, /slices\.fix-tests\.actions\[1\]: .*"read_file"/);
});

test("references to models and slices must exist", () => {
  const value = validCatalog();
  value.slices["fix-tests"].model = "gpt";
  value.routes = {
    rules: [{ pattern: "fix", slice: "fix-test" }],
    classification: { model: "local", slices: ["fix-tests", "docs"] },
    default: "nope",
  };
  const error = loadError(value);
  assert.match(error.message, /slices\.fix-tests\.model: unknown model "gpt" \(expected one of "local"\)/);
  assert.match(error.message, /routes\.rules\[0\]\.slice: unknown slice "fix-test" \(expected one of "fix-tests"\)/);
  assert.match(error.message, /routes\.classification\.slices\[1\]: unknown slice "docs"/);
  assert.match(error.message, /\(\+1 more\)$/);
});

test("an invalid regular expression, an intent without {{request}} and a bad slice name are rejected", () => {
  const value = validCatalog();
  value.routes = { rules: [{ pattern: "fix(", slice: "fix-tests" }] };
  value.slices["fix-tests"].intent = "Fix the tests";
  value.slices["bad name"] = value.slices["fix-tests"];
  const { message } = loadError(value);
  assert.match(message, /routes\.rules\[0\]\.pattern: expected a valid JavaScript regular expression/);
  assert.match(message, /slices\.fix-tests\.intent: expected a template containing \{\{request\}\}/);
  assert.match(message, /slices\.bad name: invalid name/);
});

test("credentials are only names of environment variables: an api_key field is an unknown key", () => {
  const value = validCatalog();
  value.models.local.api_key = "sk-should-not-be-here";
  const { message } = loadError(value);
  assert.match(message, /models\.local\.api_key: unknown key/);
  assert.ok(!message.includes("sk-should-not-be-here"));
});

test("syntax errors name the file, line and column", () => {
  const text = `{\n  "models": {},\n  "slices": { "a": 1 }\n  "routes": {}\n}`;
  assert.throws(() => loadCatalog(text, { file: "my.jsonc" }), {
    code: "catalog_invalid",
    message: `Invalid catalog "my.jsonc": line 4, column 3: expected "," or "}", found a string`,
  });
});

test("JSONC: line and block comments and trailing commas are accepted; comment markers inside strings are text", () => {
  const text = `\uFEFF// leading comment
{
  /* block
     comment */
  "url": "http://127.0.0.1:8080/v1", // trailing comment
  "glob": "src/**/*.ts",
  "list": [1, 2, 3,],
  "nested": { "a": "/* not a comment */", },
}
`;
  assert.deepEqual(parseJsonc(text), {
    ok: true,
    value: {
      url: "http://127.0.0.1:8080/v1",
      glob: "src/**/*.ts",
      list: [1, 2, 3],
      nested: { a: "/* not a comment */" },
    },
  });
});

test("JSONC: duplicate keys are errors rather than last-one-wins", () => {
  assert.deepEqual(parseJsonc(`{\n  "slices": {},\n  "slices": {}\n}`), {
    ok: false,
    line: 3,
    column: 3,
    message: `duplicate key "slices"`,
  });
});

test("JSONC: unterminated strings and comments, bare words and trailing text are errors with positions", () => {
  assert.deepEqual(parseJsonc(`{"a": "b`), { ok: false, line: 1, column: 7, message: "unterminated string" });
  assert.deepEqual(parseJsonc(`{"a": 1 /* x`), { ok: false, line: 1, column: 9, message: "unterminated /* comment" });
  assert.deepEqual(parseJsonc(`{"a": yes}`), { ok: false, line: 1, column: 7, message: `expected a value, found "y"` });
  assert.deepEqual(parseJsonc(`{} {}`), {
    ok: false,
    line: 1,
    column: 4,
    message: `unexpected "{" after the end of the value`,
  });
  assert.deepEqual(parseJsonc(``), {
    ok: false,
    line: 1,
    column: 1,
    message: "expected a value, found the end of the file",
  });
  assert.equal(parseJsonc(`[${"[".repeat(100)}${"]".repeat(100)}]`).ok, false);
});

test("JSONC: a __proto__ key is plain data", () => {
  const result = parseJsonc(`{"__proto__": {"polluted": true}}`);
  assert.ok(result.ok);
  const value = result.value as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  assert.deepEqual(Object.keys(value), ["__proto__"]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("JSONC: any JSON text parses exactly as JSON.parse does, also with comments after every line", () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
      const compact = JSON.stringify(value);
      assert.deepEqual(parseJsonc(compact), { ok: true, value: JSON.parse(compact) });
      // Pretty-printed JSON never breaks a line inside a string, so a comment after each line is outside any token.
      const commented = JSON.stringify(value, null, 2).split("\n").map((line, i) => `${line} // note ${i} "quoted" */`)
        .join("\n");
      assert.deepEqual(parseJsonc(commented), { ok: true, value: JSON.parse(compact) });
    }),
    { numRuns: 200 },
  );
});

test("renderIntent puts the request text in verbatim, even with replacement patterns like $&", () => {
  assert.equal(
    renderIntent("Task: {{request}}. Again: {{request}}", "cost $& and $1"),
    "Task: cost $& and $1. Again: cost $& and $1",
  );
});

test("schemas/catalog.schema.json equals the JSON Schema generated from the zod schema", () => {
  const shipped = readFileSync(resolve(ROOT, "schemas/catalog.schema.json"), "utf8");
  assert.equal(
    shipped,
    renderJsonSchema("catalog"),
    "regenerate schemas/catalog.schema.json from lib/catalog/catalog.ts",
  );
  assert.deepEqual(JSON.parse(shipped), catalogJsonSchema());
});

test("the catalog JSON Schema forbids unknown keys and requires the sections, so editors flag what loom rejects", () => {
  const schema = catalogJsonSchema() as any;
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(schema.required, ["models", "slices"]);
  const slice = schema.properties.slices.additionalProperties;
  assert.equal(slice.additionalProperties, false);
  assert.equal(slice.properties.test.properties.timeout_ms.type, "integer");
  assert.ok(typeof slice.properties.intent.description === "string");
});

test("loom schema catalog|recording|report prints the generated JSON Schemas", async () => {
  for (const name of ["catalog", "recording", "report"] as const) {
    const io = fakeIo();
    assert.equal(await main(["schema", name], io), 0);
    assert.equal(io.out.join(""), renderJsonSchema(name));
    assert.equal(JSON.parse(io.out.join(""))["$schema"], "https://json-schema.org/draft/2020-12/schema");
  }
  const report = fakeIo();
  await main(["schema", "report"], report);
  assert.equal(report.out.join(""), readFileSync(resolve(ROOT, "schemas/context-report.schema.json"), "utf8"));
});

test("loom schema with an unknown name is a usage error (exit 2) naming the known schemas", async () => {
  const io = fakeIo();
  assert.equal(await main(["schema", "catalogue"], io), 2);
  assert.deepEqual(io.out, []);
  assert.equal(
    io.err.join(""),
    `loom schema: Unknown schema "catalogue" (expected one of catalog, request, recording, report, aggregate, events, suite, eval, prices, models, config); did you mean catalog?\n`,
  );
  assert.equal(await main(["schema"], fakeIo()), 2);
});
