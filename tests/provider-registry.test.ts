// Adding a provider kind that speaks Chat Completions is one name in ModelProvider with its PROVIDER_KINDS entry
// (lib/models/provider-kinds.ts: base URL, its variable, key variable and shape, its name in errors and output cap's
// field, how an unknown model is called) and its models; a kind with an API of its own (or code it adds) also has its
// folder under lib/providers/ and its OWN_ADAPTERS entry (lib/run/create-provider.ts). Every expectation here is
// derived from the enum, so a new kind passes these tests once it is whole; on scratch copies of the product code, a
// kind added whole typechecks and answers as itself, and a kind added in part fails tsc — no if-chain elsewhere sends
// its ids somewhere else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/binary.ts";
import { createProvider } from "../api.ts";
import { RUN_SPEC } from "../commands/specs.ts";
import { formatModelRef, ModelProvider, parseModelRef, PROVIDER_KINDS } from "../lib/models/provider-kinds.ts";

test("every provider kind has its facts, and a kind's own key variable has its kind's shape", () => {
  assert.deepEqual(Object.keys(PROVIDER_KINDS).sort(), [...ModelProvider.options].sort());
  for (const kind of ModelProvider.options) {
    const { keyEnv, keyName, baseUrl, unknownModel, routes } = PROVIDER_KINDS[kind];
    if (keyEnv !== null) assert.match(keyEnv, keyName, kind);
    assert.ok(["http:", "https:"].includes(new URL(baseUrl).protocol), kind);
    // a local server's model: its cache and context are the server's, read at run time, never assumed
    if (unknownModel.local) assert.equal(unknownModel.cache, null, kind);
    // a kind that speaks Chat Completions is named in errors; a local server by its base URL
    const { chat } = PROVIDER_KINDS[kind];
    if (chat !== null) {
      assert.ok(chat.serverName.length > 0 && (!unknownModel.local || chat.serverName.includes("{base}")));
    }
    // a kind that routes to other kinds' models is not one of the kinds its ids name
    if (routes) assert.equal(parseModelRef(formatModelRef({ provider: kind, id: "anthropic/x" }))?.id, "anthropic/x");
  }
  // the facts of the kinds there are (a new kind adds its own; none of these lists the enum)
  assert.equal(PROVIDER_KINDS.ollama.unknownModel.local, true);
  assert.equal(PROVIDER_KINDS["openai-compatible"].unknownModel.local, true);
  assert.equal(PROVIDER_KINDS.anthropic.unknownModel.local, false);
  assert.equal(PROVIDER_KINDS.openrouter.routes, true);
  assert.equal(PROVIDER_KINDS.anthropic.keyName.test("OPENAI_API_KEY"), false);
});

/** The enum's source text, as provider-kinds.ts writes it (derived, so a kind added since is in it). */
const ENUM_TEXT = `z.enum([${ModelProvider.options.map((kind) => JSON.stringify(kind)).join(", ")}])`;

/** A scratch copy of the product code (and, when asked, the tests' helpers and some tests), node_modules linked. */
function scratchCopy(tests: string[] = []): { dir: string; edit: (path: string, from: string, to: string) => void } {
  const dir = mkdtempSync(join(tmpdir(), "loom-provider-registry-"));
  for (
    const path of [
      "main.ts",
      "api.ts",
      "package.json",
      "tsconfig.json",
      "tsconfig.product.json",
      "commands",
      "lib",
      ...(tests.length > 0 ? ["tests/helpers", ...tests] : []),
    ]
  ) {
    cpSync(join(ROOT, path), join(dir, path), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  const edit = (path: string, from: string, to: string) => {
    const source = readFileSync(join(dir, path), "utf8");
    assert.ok(source.includes(from), `${path} holds ${JSON.stringify(from.slice(0, 60))} where this test expects it`);
    writeFileSync(join(dir, path), source.replace(from, to));
  };
  return { dir, edit };
}

/** The product code's typecheck in `dir`: its status, and the files its errors are in. */
function typecheck(dir: string): { status: number | null; files: string[]; output: string } {
  const tsc = spawnSync(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.product.json"], {
    cwd: dir,
    encoding: "utf8",
  });
  const files = new Set([...tsc.stdout.matchAll(/^([\w./-]+)\(\d+,\d+\): error TS\d+/gm)].map((m) => m[1]));
  return { status: tsc.status, files: [...files].sort(), output: tsc.stdout };
}

test("a provider kind added to ModelProvider without its registry entry fails typechecking, at the registry only", {
  timeout: 600_000,
}, () => {
  const { dir, edit } = scratchCopy();
  try {
    edit("lib/models/provider-kinds.ts", ENUM_TEXT, ENUM_TEXT.replace('"])', '", "google"])'));
    const tsc = typecheck(dir);
    assert.notEqual(tsc.status, 0, "tsc must refuse a provider kind without its entry");
    assert.deepEqual(tsc.files, ["lib/models/provider-kinds.ts"], tsc.output);
    assert.match(tsc.output, /google/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Adding an OpenAI-compatible kind ("groq") to a scratch copy, step by step: the steps of "Adding a provider". */
const GROQ = {
  kinds: {
    from: "\n} satisfies Record<ModelProvider, ProviderKindFacts>;",
    to: `
  groq: {
    baseUrl: "https://api.groq.com/openai/v1",
    baseUrlEnv: null,
    keyEnv: "GROQ_API_KEY",
    keyName: /^[A-Z0-9_]*GROQ[A-Z0-9_]*_API_KEY$/,
    keyShape: "a name with GROQ ending in _API_KEY",
    takes: { response_format: false, cache_ttl: false, thinking: false },
    routes: false,
    chat: { serverName: "Groq API", maxTokensField: "max_completion_tokens" },
    unknownModel: { ...CHAT, cache: null, local: false },
  },
} satisfies Record<ModelProvider, ProviderKindFacts>;`,
  },
  models: {
    from: "  models: { ...anthropic, ...openai },",
    to: `  models: {
    ...anthropic,
    ...openai,
    "groq/llama-4-scout": {
      api: "chat-completions",
      structured_output: "json_schema",
      context_window: 131_072,
      max_output: 8_192,
      cache: null,
      prices: { input: 0.11, output: 0.34, cache_read: 0.11 },
      effort: [],
      thinking: [],
      retired: null,
      source: "https://console.groq.com/docs/models",
      date: "2026-12-01",
    },
  },`,
  },
};

/** A script run in the scratch copy: the new kind's provider, one call against a fetch that refuses the key. */
const CALL_GROQ = `import { createProvider } from "./api.ts";
import { priceOf, pricesOf } from "./lib/prices.ts";
import { BUILT_IN_MODELS } from "./lib/models/built-in.ts";
import { sampleTurnRequest } from "./tests/helpers/fake-provider-servers.ts";
const sent: { url: string; body: Record<string, unknown> }[] = [];
const fetch = async (url: string | URL | Request, init?: RequestInit) => {
  sent.push({ url: String(url), body: JSON.parse(String(init?.body)) });
  return new Response(JSON.stringify({ error: { message: "Invalid API Key" } }), { status: 401 });
};
const provider = createProvider({ kind: "groq", model: "llama-4-scout", max_tokens: 100 } as never, {
  env: { GROQ_API_KEY: "gsk-scratch" },
  fetch: fetch as typeof globalThis.fetch,
});
const error = await provider.complete(sampleTurnRequest(), { model: "llama-4-scout" }).then(() => null, (e) => e);
console.log(JSON.stringify({
  name: provider.name,
  url: sent[0]?.url,
  fields: Object.keys(sent[0]?.body ?? {}).sort(),
  error: String(error?.message),
  price: priceOf(pricesOf(BUILT_IN_MODELS), "groq/llama-4-scout")?.input ?? null,
}));
`;

function bun(dir: string, args: string[]) {
  return spawnSync(join(ROOT, "node_modules", ".bin", "bun"), args, { cwd: dir, encoding: "utf8" });
}

test(
  "an OpenAI-compatible kind added whole (its one registry entry and its models) typechecks and answers as itself",
  {
    timeout: 600_000,
  },
  () => {
    const { dir, edit } = scratchCopy(["tests/provider-folders.test.ts"]);
    try {
      edit("lib/models/provider-kinds.ts", ENUM_TEXT, ENUM_TEXT.replace('"])', '", "groq"])'));
      edit("lib/models/provider-kinds.ts", GROQ.kinds.from, GROQ.kinds.to);
      edit("lib/models/built-in.ts", GROQ.models.from, GROQ.models.to);
      // the product files the kind took: the registry and its models, nothing else
      const changed = spawnSync("diff", ["-rq", join(ROOT, "lib"), join(dir, "lib")], { encoding: "utf8" }).stdout;
      assert.deepEqual(
        changed.trim().split("\n").map((line) => line.replace(/^Files .*\/lib\/(\S+) and .*$/, "$1")).sort(),
        ["models/built-in.ts", "models/provider-kinds.ts"],
        changed,
      );
      const tsc = typecheck(dir);
      assert.equal(tsc.status, 0, tsc.output);
      writeFileSync(join(dir, "call-groq.ts"), CALL_GROQ);
      const call = bun(dir, ["call-groq.ts"]);
      assert.equal(call.status, 0, call.stderr);
      const seen = JSON.parse(call.stdout);
      assert.equal(seen.name, "groq");
      assert.equal(seen.url, "https://api.groq.com/openai/v1/chat/completions");
      assert.ok(seen.fields.includes("max_completion_tokens") && seen.fields.includes("response_format"), call.stdout);
      assert.match(seen.error, /Groq API/);
      assert.equal(seen.price, 0.11);
      const folders = bun(dir, ["test", "tests/provider-folders.test.ts"]);
      assert.equal(folders.status, 0, folders.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test("a kind added in part fails tsc: without its Chat Completions facts, or with an API of its own and no adapter", {
  timeout: 600_000,
}, () => {
  const { dir, edit } = scratchCopy();
  try {
    // Its entry without `chat`: whether it speaks Chat Completions is not left to a default.
    edit("lib/models/provider-kinds.ts", ENUM_TEXT, ENUM_TEXT.replace('"])', '", "groq"])'));
    const noChat = GROQ.kinds.to.replace(/\n {4}chat: [^\n]+/, "");
    edit("lib/models/provider-kinds.ts", GROQ.kinds.from, noChat);
    let tsc = typecheck(dir);
    assert.notEqual(tsc.status, 0);
    assert.deepEqual(tsc.files, ["lib/models/provider-kinds.ts"], tsc.output);
    // An API of its own (chat: null) and no OWN_ADAPTERS entry: tsc names create-provider.ts, where the adapter goes.
    edit("lib/models/provider-kinds.ts", noChat, GROQ.kinds.to.replace(/chat: \{[^}]+\}/, "chat: null"));
    tsc = typecheck(dir);
    assert.notEqual(tsc.status, 0);
    assert.deepEqual(tsc.files, ["lib/run/create-provider.ts"], tsc.output);
    assert.match(tsc.output, /groq/);
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
  for (const bad of ["claude-sonnet-5-5", "google/gemini", "/x", "", "Anthropic/x", "openai/", "openai/gpt 6"]) {
    assert.equal(parseModelRef(bad), null, bad);
  }
  for (const kind of ModelProvider.options) {
    const ref = { provider: kind, id: "some/model-1.5:7b" };
    assert.deepEqual(parseModelRef(formatModelRef(ref)), ref, kind);
  }
});

test("the grammar of PROVIDER/MODEL is written once: no other module splits, matches or joins a model name", () => {
  const copies = [
    /indexOf\("\/"\)/, // splitting at the slash by hand
    /\.regex\(\/[^,]*\\\//, // a regex literal with a slash in it, in a schema
    /RegExp\(`[^`]*\)\//, // a pattern built from the kinds, then a slash
    /`\$\{[\w.?]*(provider|kind)\}\/\$\{/i, // a kind and an id joined by hand
    /(model|key|ref)\w*\.split\("\/"\)/i, // a model name split at its slashes
  ];
  const files = ["lib", "commands"].flatMap((folder) =>
    readdirSync(join(ROOT, folder), { recursive: true }).map(String).filter((f) => f.endsWith(".ts"))
      .map((f) => `${folder}/${f.split("\\").join("/")}`)
  ).concat(["api.ts", "main.ts"]);
  const found = files.flatMap((file) => {
    const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
    return lines.flatMap((line, i) => copies.some((copy) => copy.test(line)) ? [`${file}:${i + 1}`] : []);
  });
  // the grammar itself, and the formatter: lib/models/provider-kinds.ts, and nowhere else
  assert.deepEqual(found.map((at) => at.replace(/:\d+$/, "")), [
    "lib/models/provider-kinds.ts",
    "lib/models/provider-kinds.ts",
  ], found.join("\n"));
  // the patterns find the copies there were (issue 45)
  for (
    const copy of [
      'model: z.string().regex(/^[^/\\s]+\\/\\S+$/, { error: "expected PROVIDER/MODEL" })',
      'z.string().regex(/^[a-z0-9-]+\\/.+$/, "expected PROVIDER/MODEL"),',
      'z.string().regex(new RegExp(`^(${ModelProvider.options.join("|")})/.+$`), "expected PROVIDER/MODEL");',
      "return [key, ...(entry.aliases ?? []).map((alias) => `${provider}/${alias}`)]",
      "const key = `${provider}/${id}`;",
      'const slash = model.indexOf("/");',
    ]
  ) {
    assert.ok(copies.some((pattern) => pattern.test(copy)), copy);
  }
});

test("the docs name every provider kind: docs/cli.md's PROVIDER/MODEL, docs/providers.md's table, loom run --help", () => {
  const help = RUN_SPEC.description.replace(/\n/g, " ");
  const cli = readFileSync(join(ROOT, "docs/cli.md"), "utf8").replace(/\n\s*/g, " ");
  const providers = readFileSync(join(ROOT, "docs/providers.md"), "utf8");
  for (const kind of ModelProvider.options) {
    assert.ok(cli.includes(`\`${kind}/…\``), `docs/cli.md names ${kind}/…`);
    assert.ok(help.includes(` ${kind}/…`), `loom run --help names ${kind}/…`);
    assert.match(
      providers,
      new RegExp(`^\\| \`${kind}/[^\`]+\` \\| \`${kind}\` \\|`, "m"),
      `docs/providers.md: ${kind}`,
    );
  }
});

test("the library exports createProvider: a configuration you write becomes a provider of its kind", () => {
  const local = createProvider({ kind: "openai-compatible", model: "qwen2.5-coder:7b" }, { env: {} });
  assert.equal(typeof local.complete, "function");
  assert.throws(
    () => createProvider({ kind: "anthropic", model: "claude-sonnet-5-5" }, { env: {} }),
    /ANTHROPIC_API_KEY/,
  );
});
