// Completions at every position, in the real shells installed here, generated from the same specs as the parser:
// each command's flags, each choice flag's values, each command's subcommands and words, and `loom help …` (the
// words after help name a command). The cases come from the specs, so a command or flag added to commands/specs.ts
// is tested here with no change. PowerShell has no package this machine can install (neither Debian's nor npm's
// registry ships it), so its script is checked as text against the same cases.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { flagsOf } from "../commands/cli-spec.ts";
import { commandPaths, completionScript } from "../commands/completions.ts";
import { COMMAND_SPECS } from "../commands/specs.ts";
import { bashComplete, type Completed, fishComplete, hasShell, zshComplete } from "./helpers/shell-complete.ts";

const ENTRIES = commandPaths().filter((e) => e.path !== "help");
const COMMANDS = Object.keys(COMMAND_SPECS);

/** A line to complete, and what the candidates must be: exactly these, or at least these. */
type Case = { line: string; exactly?: string[]; includes?: string[] };

function cases(): Case[] {
  const all: Case[] = [
    { line: "loom ", includes: COMMANDS },
    { line: "loom help ", exactly: COMMANDS },
    // A command that takes files offers them beside its subcommands: the shipped suite is a folder, evals/.
    { line: "loom eval ev", includes: ["evals"] },
  ];
  for (const { path, spec } of ENTRIES) {
    const flags = Object.entries(flagsOf(spec));
    all.push({ line: `loom ${path} --`, exactly: flags.map(([name]) => `--${name}`) });
    const words = [...(spec.words ?? []), ...Object.keys(spec.subcommands ?? {})];
    if (words.length > 0) all.push({ line: `loom ${path} `, includes: words });
    if (spec.subcommands) all.push({ line: `loom help ${path} `, exactly: Object.keys(spec.subcommands) });
    for (const [name, flag] of flags) {
      if (flag.values) all.push({ line: `loom ${path} --${name} `, exactly: [...flag.values] });
    }
  }
  return all;
}

function check(shell: string, completed: Completed, list: Case[]): void {
  for (const { line, exactly, includes } of list) {
    const got = completed.get(line) ?? [];
    if (exactly) assert.deepEqual([...new Set(got)].sort(), [...exactly].sort(), `${shell}: ${JSON.stringify(line)}`);
    for (const word of includes ?? []) {
      assert.ok(got.includes(word), `${shell}: ${JSON.stringify(line)} offers ${word} (got ${got.join(" ")})`);
    }
  }
}

function withFolder(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "loom-completions-"));
  try {
    mkdirSync(join(dir, "evals"));
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const skipUnless = (shell: string) => hasShell(shell) ? false : `${shell} is not installed (apt-get install ${shell})`;
for (const shell of ["bash", "zsh", "fish"]) {
  const why = skipUnless(shell);
  if (why) console.log(`completions.test.ts: skipping the ${shell} completions: ${why}`);
}

test("bash completes every position: flags, choices, subcommands, words, loom help …", {
  skip: skipUnless("bash"),
  timeout: 600_000,
}, () =>
  withFolder((dir) => {
    const script = join(dir, "loom.bash");
    writeFileSync(script, completionScript("bash"));
    execFileSync("bash", ["-n", script]);
    const list = cases();
    check("bash", bashComplete(script, list.map((c) => c.line), { cwd: dir }), list);
  }));

test("zsh completes every position (its completion widget in an interactive zsh)", {
  skip: skipUnless("zsh"),
  timeout: 600_000,
}, () =>
  withFolder((dir) => {
    // Installed as the docs say: _loom in a folder on $fpath, autoloaded on the first TAB.
    const folder = join(dir, "functions");
    mkdirSync(folder);
    writeFileSync(join(folder, "_loom"), completionScript("zsh"));
    execFileSync("zsh", ["-n", join(folder, "_loom")]);
    const list = cases();
    check("zsh", zshComplete(folder, list.map((c) => c.line), { cwd: dir }), list);
  }));

test(
  "fish completes every position (complete -C)",
  { skip: skipUnless("fish"), timeout: 600_000 },
  () =>
    withFolder((dir) => {
      const script = join(dir, "loom.fish");
      writeFileSync(script, completionScript("fish"));
      execFileSync("fish", ["-n", script]);
      const list = cases();
      check("fish", fishComplete(script, list.map((c) => c.line), { cwd: dir }), list);
    }),
);

test("the PowerShell script holds every path's flags, choices and words, and loom help's (checked as text)", () => {
  const ps = completionScript("powershell");
  assert.match(ps, /^Register-ArgumentCompleter -Native -CommandName loom, loom\.exe -ScriptBlock \{$/m);
  const row = (path: string) => ps.split("\n").find((l) => l.startsWith(`    '${path}' = @{ flags = `));
  for (const { path, spec } of ENTRIES) {
    const line = row(path);
    assert.ok(line, `PowerShell has no table for ${path}`);
    const flagPart = line.slice(line.indexOf("flags = [ordered]@{"), line.indexOf("}; values"));
    const offered = [...flagPart.matchAll(/'(--?[a-z-]+)' = /g)].map((m) => m[1]).sort();
    const expected = Object.entries(flagsOf(spec)).flatMap(([n, f]) => [`--${n}`, ...(f.short ? [`-${f.short}`] : [])]);
    assert.deepEqual(offered, expected.sort(), `PowerShell flags of ${path}`);
    for (const [name, flag] of Object.entries(flagsOf(spec))) {
      if (flag.values) {
        assert.ok(
          line.includes(`'--${name}' = @(${flag.values.map((v) => `'${v}'`).join(", ")})`),
          `${path} --${name}`,
        );
      }
    }
    for (const word of [...(spec.words ?? []), ...Object.keys(spec.subcommands ?? {})]) {
      assert.ok(line.includes(`'${word}' = `), `PowerShell words of ${path}: ${word}`);
    }
    if (spec.subcommands) {
      const help = ps.split("\n").find((l) => l.startsWith(`    '${path}' = [ordered]@{`));
      assert.ok(help && Object.keys(spec.subcommands).every((s) => help.includes(`'${s}' = `)), `loom help ${path}`);
    }
  }
  // Quotes are doubled inside single-quoted strings: no description can end a string early.
  for (const line of ps.split("\n")) assert.equal((line.match(/'/g) ?? []).length % 2, 0, line);
});
