// Each vocabulary is declared once and derived everywhere else: a list of its words restated in another module (an
// array, an enum, a union type) is a copy that can drift, and this test names it by file and line. So do a default
// policy, step protocol or previews mode typed as a literal, and the budget's byte numbers retyped in the report.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OUTPUT_FORMATS } from "../commands/specs.ts";
import { LookupKind } from "../lib/vocabulary/answer.ts";
import { FinishStatus } from "../lib/vocabulary/reports.ts";
import { Phase, StopReason } from "../lib/vocabulary/turn.ts";
import { Outcome } from "../lib/outcome.ts";
import { ContextPolicyName, PreviewMode, StepProtocol } from "../lib/policy.ts";
import { SandboxMode } from "../lib/sandbox-state.ts";
import { IMPORT_FORMATS } from "../lib/recording/importers/index.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const VOCABULARIES: { name: string; home: string; words: readonly string[] }[] = [
  { name: "phase", home: "lib/vocabulary/turn.ts", words: Phase.options },
  { name: "stop reason", home: "lib/vocabulary/turn.ts", words: StopReason.options },
  { name: "finish status", home: "lib/vocabulary/reports.ts", words: FinishStatus.options },
  { name: "lookup kind", home: "lib/vocabulary/answer.ts", words: LookupKind.options },
  { name: "outcome", home: "lib/outcome.ts", words: Outcome.options },
  { name: "context policy", home: "lib/policy.ts", words: ContextPolicyName.options },
  { name: "step protocol", home: "lib/policy.ts", words: StepProtocol.options },
  { name: "previews mode", home: "lib/policy.ts", words: PreviewMode.options },
  { name: "sandbox mode", home: "lib/sandbox-state.ts", words: SandboxMode.options },
  { name: "output format", home: "commands/specs.ts", words: OUTPUT_FORMATS },
  { name: "import format", home: "lib/recording/importers/import-format.ts", words: IMPORT_FORMATS },
];

function modulesUnder(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return path.endsWith(".ts") ? [path] : [];
  return readdirSync(full).flatMap((name) => modulesUnder(join(path, name)));
}

const SOURCES = ["main.ts", "api.ts", "commands", "lib"].flatMap(modulesUnder);

function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, " ")).replace(
    /(^|[^:"'`\\])\/\/.*$/gm,
    "$1",
  );
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;
const escape = (word: string) => word.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");

/** Each place `source` lists two different words of the vocabulary next to each other (in a list or a union). */
function restatements(source: string, words: readonly string[]): number[] {
  const word = `(["'])(${words.map(escape).join("|")})\\1`;
  const pair = new RegExp(`${word}\\s*[,|]\\s*${word.replace("\\1", "\\3")}`, "g");
  const code = stripComments(source);
  const lines: number[] = [];
  for (const match of code.matchAll(pair)) if (match[2] !== match[4]) lines.push(lineOf(code, match.index!));
  return lines;
}

test("the scan finds a restated list, across lines and in a union, and ignores comments and single words", () => {
  const words = ["legacy", "bounded"];
  assert.deepEqual(restatements('const a = ["legacy", "bounded"];', words), [1]);
  assert.deepEqual(restatements('const a = 1;\ntype P =\n  | "bounded"\n  | "legacy";', words), [3]);
  assert.deepEqual(restatements("const a = [\n  'legacy',\n  'bounded',\n];", words), [2]);
  assert.deepEqual(restatements('// ["legacy", "bounded"]\nconst p = "legacy";', words), []);
  assert.deepEqual(restatements('const same = ["legacy", "legacy"];', words), []);
});

test("each vocabulary is declared in its home module and restated nowhere else", () => {
  const copies: string[] = [];
  for (const { name, home, words } of VOCABULARIES) {
    assert.ok(
      restatements(readFileSync(join(ROOT, home), "utf8"), words).length > 0,
      `${name}: ${home} no longer declares the list`,
    );
    for (const path of SOURCES) {
      if (path === home) continue;
      for (const line of restatements(readFileSync(join(ROOT, path), "utf8"), words)) {
        copies.push(`${path}:${line}: a copy of the ${name} list (declared in ${home})`);
      }
    }
  }
  assert.ok(SOURCES.length > 120, `only ${SOURCES.length} modules scanned`);
  assert.deepEqual(copies, []);
});

test("the default policy, step protocol and previews mode are named once, in lib/policy.ts", () => {
  const defaults = new RegExp(
    `(\\?\\?|builtIn:|default:)\\s*["'\`](${
      [...ContextPolicyName.options, ...StepProtocol.options, ...PreviewMode.options].map(escape).join("|")
    })\\b`,
    "g",
  );
  const found = SOURCES.filter((path) => path !== "lib/policy.ts").flatMap((path) => {
    const code = stripComments(readFileSync(join(ROOT, path), "utf8"));
    return [...code.matchAll(defaults)].map((m) => `${path}:${lineOf(code, m.index!)}: ${m[0]}`);
  });
  assert.deepEqual(found, []);
});

test("the report draws the budget's byte numbers from lib/context/budget.ts, never retyped", () => {
  const numbers = /\b(32_768|49_152|65_536|32768|49152|65536|(32|48|64)\s*\*\s*1024)\b/g;
  const found = SOURCES.filter((path) => path.startsWith("lib/report/")).flatMap(
    (path) => {
      const code = stripComments(readFileSync(join(ROOT, path), "utf8"));
      return [...code.matchAll(numbers)].map((m) => `${path}:${lineOf(code, m.index!)}: ${m[0]}`);
    },
  );
  assert.deepEqual(found, []);
});

/** The glossary of docs/architecture.md: each word, what it means, and the files it lives in. */
function glossary(): { word: string; means: string; homes: string[] }[] {
  const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const from = doc.indexOf("## Glossary");
  const table = doc.slice(from, doc.indexOf("\n## ", from + 4)).split("\n").filter((l) => l.startsWith("| "));
  return table.slice(2).map((row) => {
    const [word = "", means = "", lives = ""] = row.split("|").slice(1).map((cell) => cell.trim());
    return { word, means, homes: [...lives.matchAll(/`((?:lib|commands)\/[^`]+\.ts)`/g)].map((m) => m[1] ?? "") };
  });
}

/** Exported type, interface and class names of a module. */
function exportedTypes(source: string): string[] {
  const code = stripComments(source);
  return [...code.matchAll(/export (?:type|interface|class|const) ([A-Z][a-z][A-Za-z0-9]*)/g)].map((m) => m[1] ?? "");
}

/** "WorkingState" -> "working state". */
const words = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();

test("type names agree with the glossary: a type named for a glossary word lives where the glossary says", () => {
  const entries = glossary();
  assert.ok(entries.length > 20, "the glossary table is there");
  const homes = new Map(entries.map((e) => [e.word, e.homes]));
  const wrong: string[] = [];
  for (const path of SOURCES) {
    for (const name of exportedTypes(readFileSync(join(ROOT, path), "utf8"))) {
      const allowed = homes.get(words(name));
      if (allowed && allowed.length > 0 && !allowed.includes(path)) {
        wrong.push(`${path}: ${name} is the glossary's "${words(name)}", which lives in ${allowed.join(", ")}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test("the glossary's type names exist where it says they live", () => {
  const missing: string[] = [];
  for (const { word, means, homes } of glossary()) {
    const names = [...means.matchAll(/`([A-Z][A-Za-z0-9]*)`/g)].map((m) => m[1] ?? "");
    const exported = homes.flatMap((home) => exportedTypes(readFileSync(join(ROOT, home), "utf8")));
    for (const name of names) if (!exported.includes(name)) missing.push(`${word}: ${name} (in ${homes.join(", ")})`);
  }
  assert.deepEqual(missing, []);
});

test('one word per meaning: "execution report", never "step report"; no other type is an Ending', () => {
  const texts = [...SOURCES, "README.md", "docs/architecture.md", "docs/sandbox.md", "docs/eval.md"];
  const found = texts.flatMap((path) => {
    const text = readFileSync(join(ROOT, path), "utf8");
    return [...text.matchAll(/\bstep[ -]reports?\b|\bStepReports?\b/gi)].map((m) => `${path}:${lineOf(text, m.index)}`);
  });
  assert.deepEqual(found, []);
});
