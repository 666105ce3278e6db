// The layout shows the architecture: lib/ is grouped by concern with a handful of shared modules at its top, every
// folder of lib/ is drawn in docs/architecture.md, and every module the docs name exists where they say.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ModelProvider, PROVIDER_KINDS } from "../lib/models/provider-kinds.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** Each `lib/...` path a document names (a file, a folder, or a `*` pattern over one folder). */
function libPaths(text: string): string[] {
  return [...new Set([...text.matchAll(/\blib\/[a-z0-9*./-]*[a-z0-9*/]/g)].map((m) => m[0]))];
}

function exists(path: string): boolean {
  if (!path.includes("*")) return existsSync(join(ROOT, path));
  const slash = path.lastIndexOf("/");
  const pattern = new RegExp(`^${path.slice(slash + 1).replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);
  return readdirSync(join(ROOT, path.slice(0, slash))).some((name) => pattern.test(name));
}

test("lib/ keeps at most 12 modules at its top level; the rest live in folders by concern", () => {
  const top = readdirSync(join(ROOT, "lib"), { withFileTypes: true });
  const files = top.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => e.name);
  assert.ok(files.length <= 12, `lib/ has ${files.length} top-level modules: ${files.join(", ")}`);
  assert.ok(top.filter((e) => e.isDirectory()).length >= 6, "the folders are there");
});

test("docs/architecture.md draws every folder of lib/", () => {
  const doc = read("docs/architecture.md");
  const folders = readdirSync(join(ROOT, "lib"), { withFileTypes: true }).filter((e) => e.isDirectory());
  const missing = folders.map((e) => `${e.name}/`).filter((name) => !new RegExp(`^\\s+${name}\\s`, "m").test(doc));
  assert.deepEqual(missing, [], "folders of lib/ the layout drawing leaves out");
});

test("every lib/ path docs/architecture.md, the README and docs/ name exists", () => {
  const docs = ["README.md", "docs/architecture.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)]
    .filter((f) => f.endsWith(".md"));
  const named = docs.flatMap((doc) => libPaths(read(doc)).map((path) => ({ doc, path })));
  assert.ok(named.length > 40, `only ${named.length} paths found: the scan is broken`);
  const stale = named.filter(({ path }) => !exists(path)).map(({ doc, path }) => `${doc}: ${path}`);
  assert.deepEqual(stale, []);
});

test("the path scan finds files, folders and patterns, and the existence check can fail", () => {
  assert.deepEqual(libPaths("`lib/loop/loop.ts`, lib/providers/ and `lib/providers/openai/convert-*-usage.ts`."), [
    "lib/loop/loop.ts",
    "lib/providers/",
    "lib/providers/openai/convert-*-usage.ts",
  ]);
  assert.equal(exists("lib/providers/openai/convert-*-usage.ts"), true);
  assert.equal(exists("lib/loop.ts"), false);
  assert.equal(exists("lib/providers/convert-*-nothing.ts"), false);
});

/** Every module under lib/, as a path below lib/ ("providers/openai/openai-provider.ts"). */
function libModules(): string[] {
  return readdirSync(join(ROOT, "lib"), { recursive: true }).map((p) => String(p).split("\\").join("/"))
    .filter((p) => p.endsWith(".ts"));
}

test("one address per concern: the run, the workspace, each provider kind, HTTP, the eval runner, doctor", () => {
  const modules = libModules();
  const at = (file: string) => modules.filter((m) => m.endsWith(`/${file}`) || m === file);
  assert.deepEqual(at("start-run.ts"), ["run/start-run.ts"]);
  assert.deepEqual(at("create-provider.ts"), ["run/create-provider.ts"]);
  assert.deepEqual(at("workspace-executor.ts"), ["workspace/workspace-executor.ts"]);
  assert.deepEqual(at("post-json.ts"), ["providers/http/post-json.ts"]);
  assert.deepEqual(at("run-doctor.ts"), ["doctor/run-doctor.ts"]);
  assert.equal(existsSync(join(ROOT, "lib/adapters")), false, "lib/adapters/ is gone: effects live by concern");
  // a file grouped by a prefix lives in its folder
  const misplaced = modules.filter((m) =>
    (/(^|\/)eval-[^/]*$/.test(m) && !m.startsWith("eval/")) ||
    (/(^|\/)workspace-[^/]*$/.test(m) && !m.startsWith("workspace/"))
  );
  assert.deepEqual(misplaced, [], "eval-*.ts belong in lib/eval/, workspace-*.ts in lib/workspace/");
  // a provider kind's files (its name in theirs) and every HTTP adapter live in that kind's folder (the importers of
  // other agents' recordings name the wire format they read, not a provider of Loom's)
  // every kind of the enum, longest first so "openai-compatible-chat.ts" would be that kind's, not openai's
  const kinds = [...ModelProvider.options].sort((a, b) => b.length - a.length);
  // a kind with an API of its own has its folder (one that speaks Chat Completions as its facts say needs none)
  for (const kind of kinds.filter((k) => PROVIDER_KINDS[k].chat === null)) {
    assert.ok(existsSync(join(ROOT, "lib/providers", kind)), `lib/providers/${kind}/`);
  }
  const astray = modules.filter((m) => {
    const kind = kinds.find((k) => new RegExp(`(^|[-/])${k}[-.]`).test(m.slice(m.lastIndexOf("/") + 1)));
    return (kind && !m.startsWith(`providers/${kind}/`) && !m.startsWith("recording/importers/")) ||
      (m.endsWith("-provider.ts") && !/^providers\/[a-z-]+\/[a-z-]+-provider\.ts$/.test(m) &&
        m !== "run/create-provider.ts");
  });
  assert.deepEqual(astray, [], "a provider kind's files belong in lib/providers/<kind>/");
});
