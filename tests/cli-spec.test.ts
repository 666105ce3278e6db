// The command line is data: help, usage lines, completions and the parser come from one spec per command, so they
// cannot disagree. These tests fail when they do — a flag in help the parser rejects, a flag the parser takes that
// help or a shell does not offer, a choice a shell completes that the parser refuses, an exit code the table leaves out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { main } from "../main.ts";
import {
  didYouMean,
  distance,
  findSpec,
  flagsOf,
  parseCommand,
  renderExitCodes,
  renderHelp,
  usageLines,
} from "../commands/cli-spec.ts";
import { commandPaths, completionScript } from "../commands/completions.ts";
import { COMMAND_SPECS, EXIT_CODE_TEXT } from "../commands/specs.ts";
import { EXIT_CODES } from "../lib/outcome.ts";
import { ROOT } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";

async function loom(argv: string[]) {
  const { io, out } = fakeIo({ cwd: ROOT, env: { XDG_CONFIG_HOME: "/nonexistent" } });
  const code = await main(argv, io);
  return { code, ...out };
}

const ENTRIES = commandPaths();
/** A command's flags, and its subcommands' (its help shows their usage lines: loom models update [--from …]). */
const flagNames = (path: string) => {
  const spec = ENTRIES.find((e) => e.path === path)!.spec;
  const subs = Object.values(spec.subcommands ?? {}).flatMap((sub) => Object.keys(flagsOf(sub)));
  return new Set([...Object.keys(flagsOf(spec)), ...subs]);
};

test("loom help COMMAND is COMMAND --help for every command, version and help included, and names every flag", async () => {
  for (const { path, spec } of ENTRIES) {
    const viaHelp = await loom(["help", ...path.split(" ")]);
    const viaFlag = await loom([...path.split(" "), "--help"]);
    assert.equal(viaHelp.code, 0, `${path}: ${viaHelp.stderr}`);
    assert.equal(viaFlag.code, 0, `${path}: ${viaFlag.stderr}`);
    assert.equal(viaHelp.stdout, viaFlag.stdout, path);
    assert.ok(viaHelp.stdout.startsWith(`Usage: loom ${path}`), viaHelp.stdout);
    for (const [name, flag] of Object.entries(flagsOf(spec))) {
      assert.ok(viaHelp.stdout.includes(`--${name}`), `${path} help lacks --${name}`);
      if (flag.short) {
        assert.ok(viaHelp.stdout.includes(`-${flag.short}, --${name}`), `${path} help lacks -${flag.short}`);
      }
      for (const value of flag.values ?? []) assert.ok(viaHelp.stdout.includes(value), `${path} --${name} ${value}`);
    }
  }
  const unknown = await loom(["help", "lanch"]);
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /^loom: unknown command "lanch"; did you mean launch\?|^loom: unknown command "lanch" \(/,
  );
});

test("every flag that help, the usage lines and the examples mention is one the parser accepts for that command", async () => {
  for (const { path, spec } of ENTRIES) {
    const help = (await loom(["help", ...path.split(" ")])).stdout;
    const mentioned = [...help.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((m) => m[1]);
    for (const name of mentioned) assert.ok(flagNames(path).has(name), `loom ${path} --help mentions --${name}`);
    for (const line of usageLines(path, spec)) {
      for (const [, name] of line.matchAll(/--([a-z][a-z-]*)/g)) assert.ok(flagNames(path).has(name), line);
    }
  }
  const usage = (await loom(["--help"])).stdout;
  for (const line of usage.split("\n").filter((l) => l.startsWith("  loom "))) {
    const path = ENTRIES.map((e) => e.path).filter((p) => line.startsWith(`  loom ${p} `) || line === `  loom ${p}`)
      .sort((a, b) => b.length - a.length)[0];
    assert.ok(path, line);
    for (const [, name] of line.matchAll(/--([a-z][a-z-]*)/g)) assert.ok(flagNames(path).has(name), line);
  }
});

test("the parser accepts every flag of the spec, long and short, with each of its choices", () => {
  for (const { path, spec } of ENTRIES) {
    for (const [name, flag] of Object.entries(flagsOf(spec))) {
      const values = flag.value === undefined ? [undefined] : flag.values ?? ["x"];
      for (const value of values) {
        for (const form of [`--${name}`, ...(flag.short ? [`-${flag.short}`] : [])]) {
          const argv = value === undefined ? [form] : [form, value];
          const parsed = parseCommand(spec, argv, { command: path });
          if (name === "help") assert.equal(parsed.help, true);
          else {assert.deepEqual(
              (parsed.values as Record<string, unknown>)[name],
              flag.multiple ? [value] : value ?? true,
            );}
        }
      }
    }
  }
});

test("completions offer exactly the spec's flags per command, and its choices after a flag with choices", () => {
  const bash = completionScript("bash"), zsh = completionScript("zsh"), fish = completionScript("fish");
  for (const { path, spec } of ENTRIES) {
    const flags = flagsOf(spec);
    // bash: loom help … has its own branch (the words after help name a command; tests/completions.test.ts).
    const line = bash.split("\n").find((l) => l.startsWith(`    "${path}") flags="`));
    assert.ok(line || path === "help", `bash has no case for ${path}`);
    const offered = line ? line.match(/flags="([^"]*)"/)![1].split(" ").filter(Boolean).sort() : ["--help", "-h"];
    const expected = Object.entries(flags).flatMap(([n, f]) => [`--${n}`, ...(f.short ? [`-${f.short}`] : [])]).sort();
    assert.deepEqual(offered, expected, `bash ${path}`);
    // fish: each completion holds at one command path, the one the words before the cursor name.
    const when = `-n '__loom_at ${JSON.stringify(path)}'`;
    const fishFlags = fish.split("\n").filter((l) => l.includes(when) && / -l /.test(l))
      .map((l) => l.match(/ -l ([a-z-]+)/)![1]).sort();
    assert.deepEqual(fishFlags, Object.keys(flags).sort(), `fish ${path}`);
    for (const [name, flag] of Object.entries(flags)) {
      assert.ok(zsh.includes(`--${name}[`) || zsh.includes(`--${name}}'[`), `zsh ${path} --${name}`);
      if (flag.values) {
        assert.ok(zsh.includes(`:(${flag.values.join(" ")})'`), `zsh choices of --${name}`);
        assert.ok(fish.includes(`-l ${name} -x -a '${flag.values.join(" ")}'`), `fish choices of --${name}`);
      }
      // Descriptions in the shells that show them.
      assert.ok(/-d '[^']/.test(fish.split("\n").find((l) => l.includes(` -l ${name}`))!), `fish describes --${name}`);
    }
  }
});

const hasBash = spawnSync("bash", ["-c", "exit 0"]).status === 0;
if (!hasBash) console.log("cli-spec.test.ts: skipping the bash completion tests: bash is not installed");

test("bash completes each choice flag with its choices and a free value with nothing (no file names)", {
  skip: hasBash ? false : "bash is not installed",
}, (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-complete-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, "loom.bash");
  writeFileSync(script, completionScript("bash"));
  execFileSync("bash", ["-n", script]);
  writeFileSync(join(dir, "a-file.txt"), "");
  const complete = (...words: string[]) =>
    execFileSync("bash", [
      "-c",
      `source ${JSON.stringify(script)}; COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(" ")}); COMP_CWORD=${
        words.length - 1
      }; _loom; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ], { encoding: "utf8", cwd: dir }).split("\n").filter(Boolean);
  for (const { path, spec } of ENTRIES) {
    for (const [name, flag] of Object.entries(flagsOf(spec))) {
      if (flag.value === undefined) continue;
      const offered = complete("loom", ...path.split(" "), `--${name}`, "");
      if (flag.values) assert.deepEqual(offered, [...flag.values], `${path} --${name}`);
      else if (flag.complete === "file") assert.ok(offered.includes("a-file.txt"), `${path} --${name} completes files`);
      else if (flag.complete !== "folder") assert.deepEqual(offered, [], `${path} --${name} completes nothing`);
    }
  }
  assert.deepEqual(complete("loom", "run", "-m", ""), []);
  assert.deepEqual(complete("loom", "run", "--sandbox", ""), ["auto", "required", "off"]);
  assert.deepEqual(complete("loom", "schema", "c"), ["catalog", "config"]);
  assert.deepEqual(complete("loom", "help", "r"), ["run", "replay", "report"]);
});

test("the exit-code table of loom --help covers every exit code, and the README shows the same table", async () => {
  assert.deepEqual(
    [...new Set(EXIT_CODE_TEXT.map(([code]) => code))].sort((a, b) => a - b),
    [...new Set(Object.values(EXIT_CODES))].sort((a, b) => a - b),
  );
  const usage = (await loom(["--help"])).stdout;
  assert.ok(usage.endsWith(renderExitCodes(EXIT_CODE_TEXT)));
  assert.match(usage, /^ {2}7 {4}no valid answer/m);
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  assert.ok(
    readme.includes(`\`\`\`\n${renderExitCodes(EXIT_CODE_TEXT)}\`\`\``),
    "README's exit-code table is loom --help's",
  );
});

test("mistyped flags, values and commands get one line with the closest match; values starting with - reach the check", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["run", "x", "--contxt-policy", "bounded"],
      /^loom run: Unknown option --contxt-policy; did you mean --context-policy\? \(see loom run --help\)\n$/,
    ],
    [["replay", "a", "--resme"], /^loom replay: Unknown option --resme; did you mean --resume\? /],
    [
      ["replay", "a", "--from", "swe_agent"],
      /^loom replay: --from "swe_agent": expected one of auto, loom, mini-swe-agent, swe-agent, openai-messages, claude-code, codex \(did you mean swe-agent\?\)\n$/,
    ],
    [
      ["run", "x", "-m", "anthropic/m", "--provider-deadline-ms", "-5"],
      /^loom run: --provider-deadline-ms "-5": expected a positive number of milliseconds\n$/,
    ],
    [["report", "a.json", "-x"], /^loom report: Unknown option -x \(see loom report --help\)\n$/],
    [["report", "a.json", "--json=yes"], /^loom report: --json takes no value/],
    [["replay", "a", "--jobs"], /^loom replay: --jobs needs a value: --jobs N /],
    [
      ["schema", "catalogue"],
      /^loom schema: Unknown schema "catalogue" \(expected one of .*\); did you mean catalog\?\n$/,
    ],
    [["raplay"], /^loom: unknown command "raplay"; did you mean replay\? \(expected run, replay, report, /],
  ];
  for (const [argv, expected] of cases) {
    const r = await loom(argv);
    assert.equal(r.code, 2, `${argv.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, expected);
    assert.doesNotMatch(r.stderr, /\\n|To specify an option argument/, "no runtime advice, no literal \\n");
  }
});

test("short flags are the long ones: -m, -q, -w, -j, -o, -c, -h", () => {
  const run = parseCommand(COMMAND_SPECS.run, ["-m", "openai/gpt", "-q", "-w", "src", "-c=cat.json", "TEXT"], {
    command: "run",
  });
  assert.deepEqual(run.values, { model: "openai/gpt", quiet: true, workspace: "src", catalog: "cat.json" });
  assert.deepEqual(run.positionals, ["TEXT"]);
  assert.deepEqual(parseCommand(COMMAND_SPECS.replay, ["-j4", "a"], { command: "replay" }).values, { jobs: "4" });
  assert.deepEqual(parseCommand(COMMAND_SPECS.report, ["-o", "all.json"], { command: "report" }).values, {
    output: "all.json",
  });
  // After --, everything is a positional, a leading dash included.
  assert.deepEqual(parseCommand(COMMAND_SPECS.run, ["--", "-q"], { command: "run" }).positionals, ["-q"]);
});

test("did-you-mean suggests only a close word: within a third of its length, or a prefix of three or more", () => {
  assert.equal(didYouMean("contxt-policy", ["context-policy", "context-report"]), "context-policy");
  assert.equal(didYouMean("mod", ["model", "max-steps"]), "model");
  assert.equal(didYouMean("banana", ["model", "max-steps"]), null);
  fc.assert(fc.property(fc.constantFrom(...Object.keys(flagsOf(COMMAND_SPECS.run))), (name) => {
    // A flag is its own closest match.
    assert.equal(didYouMean(name, Object.keys(flagsOf(COMMAND_SPECS.run))), name);
  }));
});

test("the README shows loom --help's usage lines, as generated", async () => {
  const usage = (await loom(["--help"])).stdout;
  const lines = usage.slice(usage.indexOf("Usage:\n") + 7, usage.indexOf("\n\n", usage.indexOf("Usage:\n")))
    .split("\n").map((l) => l.slice(2));
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  assert.ok(readme.includes(`\`\`\`\n${lines.join("\n")}\n\`\`\``), "README's usage block is loom --help's");
});

test("every command main.ts runs has a spec (so its help, usage line and completions exist), and every spec a command", async () => {
  const { COMMANDS } = await import("../main.ts");
  for (const name of Object.keys(COMMANDS)) assert.ok(Object.hasOwn(COMMAND_SPECS, name), `${name} has no spec`);
  for (const name of Object.keys(COMMAND_SPECS)) {
    assert.ok(Object.hasOwn(COMMANDS, name) || name === "help" || name === "version", `the spec ${name} runs nothing`);
  }
});

test("a command with subcommands is data too: help, parsing and bash completion follow the spec", {
  skip: hasBash ? false : "bash is not installed",
}, (t) => {
  // The shape of a command other branches add: `loom eval SUITE --model …`, `loom eval validate SUITE`.
  const specs = {
    ...COMMAND_SPECS,
    eval: {
      summary: "evaluate a suite",
      usage: ["SUITE --model P/M [options]"],
      flags: {
        model: { short: "m", value: "P/M", multiple: true, description: "a model (repeatable)" },
        policies: { value: "A,B", description: "the policies" },
        resume: { description: "continue" },
      },
      subcommands: {
        validate: { summary: "check a suite", usage: ["SUITE"], flags: { json: { description: "as JSON" } } },
        rescore: { summary: "score again", usage: ["DIR"], flags: {} },
      },
    },
  } as const;
  const help = renderHelp("eval", specs.eval);
  assert.match(
    help,
    /^Usage: loom eval SUITE --model P\/M \[options\]\n {7}loom eval validate SUITE\n {7}loom eval rescore DIR\n/,
  );
  assert.match(help, /^Subcommands:\n {2}validate {4}check a suite\n {2}rescore {5}score again$/m);
  assert.deepEqual(
    parseCommand(specs.eval, ["s.json", "-m", "a/b", "--model", "c/d"], { command: "eval" }).values,
    { model: ["a/b", "c/d"] },
  );
  const found = findSpec(specs, ["eval", "validate"]);
  assert.ok("spec" in found && found.path === "eval validate");
  const dir = mkdtempSync(join(tmpdir(), "loom-complete-sub-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, "loom.bash");
  writeFileSync(script, completionScript("bash", specs));
  const complete = (...words: string[]) =>
    execFileSync("bash", [
      "-c",
      `source ${JSON.stringify(script)}; COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(" ")}); COMP_CWORD=${
        words.length - 1
      }; _loom; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ], { encoding: "utf8", cwd: dir }).split("\n").filter(Boolean);
  assert.deepEqual(complete("loom", "ev"), ["eval"]);
  assert.ok(complete("loom", "eval", "").includes("validate"));
  assert.deepEqual(complete("loom", "eval", "--re"), ["--resume"]);
  assert.deepEqual(complete("loom", "eval", "validate", "--"), ["--json", "--help"]);
  const fish = completionScript("fish", specs);
  assert.match(fish, /-n '__loom_at "eval validate"' -l json/);
  assert.match(fish, /-n '__loom_at "eval"' -s m -l model/);
});

const hasShell = (shell: string) => spawnSync(shell, ["-c", "exit 0"]).status === 0;

test("zsh and fish accept their scripts; fish completes each choice flag with its choices and describes each flag", {
  skip: hasShell("fish") || hasShell("zsh") ? false : "neither zsh nor fish is installed",
  timeout: 600_000,
}, (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-complete-shells-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  if (hasShell("zsh")) {
    writeFileSync(join(dir, "_loom"), completionScript("zsh"));
    execFileSync("zsh", ["-n", join(dir, "_loom")]);
  } else t.diagnostic("zsh not installed: its script's syntax not checked");
  if (!hasShell("fish")) return t.diagnostic("fish not installed: its completions not exercised");
  const script = join(dir, "loom.fish");
  writeFileSync(script, completionScript("fish"));
  execFileSync("fish", ["-n", script]);
  const complete = (line: string) =>
    execFileSync("fish", ["-c", `source ${JSON.stringify(script)}; complete -C ${JSON.stringify(line)}`], {
      encoding: "utf8",
      cwd: dir,
    }).split("\n").filter(Boolean).map((l) => l.split("\t"));
  for (const { path, spec } of ENTRIES.filter((e) => !e.path.includes(" "))) {
    for (const [name, flag] of Object.entries(flagsOf(spec))) {
      const offered = complete(`loom ${path} --${name}`);
      const self = offered.find(([word]) => word === `--${name}`);
      assert.ok(self, `fish: loom ${path} --${name}`);
      assert.ok(self[1]?.length > 0, `fish describes loom ${path} --${name}`);
      if (flag.values) {
        assert.deepEqual(complete(`loom ${path} --${name} `).map(([w]) => w).sort(), [...flag.values].sort());
      }
    }
  }
  assert.deepEqual(complete("loom schema ").map(([w]) => w).sort(), [...COMMAND_SPECS.schema.words!].sort());
});

test("did-you-mean counts a swap of neighbouring letters as one edit (Damerau): flags, values, commands, subcommands", async () => {
  assert.equal(distance("modle", "model"), 1);
  assert.equal(distance("rnu", "run"), 1);
  assert.equal(distance("ca", "abc"), 3, "optimal string alignment: no edit of a swapped pair");
  fc.assert(fc.property(fc.string(), fc.string(), (a, b) => {
    assert.equal(distance(a, b), distance(b, a));
    assert.ok(distance(a, b) <= Math.max(a.length, b.length));
    assert.equal(distance(a, a), 0);
  }));
  const cases: [string[], RegExp][] = [
    [["run", "x", "--modle", "a/b"], /^loom run: Unknown option --modle; did you mean --model\? /],
    [["replay", "x", "--form", "loom"], /^loom replay: Unknown option --form; did you mean --from\? /],
    [["rnu", "x"], /^loom: unknown command "rnu"; did you mean run\? /],
    [["--verison"], /^loom: unknown option "--verison"; did you mean --version\? /],
    [
      ["eval", "vaildate", "suite"],
      /^loom eval: unknown subcommand "vaildate"; did you mean validate\? \(expected validate, rescore; see loom eval --help\)\n$/,
    ],
    [["run", "x", "--context-policy", "bonuded"], /expected legacy or bounded \(did you mean bounded\?\)/],
    [["help", "schema", "nope"], /^loom schema: unknown subcommand "nope" \(expected catalog, request/],
  ];
  for (const [argv, expected] of cases) {
    const { code, stderr } = await loom(argv);
    assert.equal(code, 2, argv.join(" "));
    assert.match(stderr, expected, argv.join(" "));
  }
});

test("help says each note once, and loom help COMMAND WORD is the command's help", async () => {
  const help = (await loom(["help", "eval"])).stdout;
  assert.doesNotMatch(help, /\(repeatable\) \(repeatable\)/);
  assert.match(help, /--model PROVIDER\/MODEL +a model to evaluate \(repeatable\)\n/);
  const schema = await loom(["help", "schema", "request"]);
  assert.equal(schema.code, 0, schema.stderr);
  assert.equal(schema.stdout, (await loom(["schema", "--help"])).stdout);
});

test("every test file that can skip says why in one line scripts/test.sh repeats (FILE.test.ts: skipping …)", () => {
  const dir = join(ROOT, "tests");
  const files = readdirSync(dir).filter((f) => f.endsWith(".test.ts"));
  const silent = files.filter((f) => {
    const text = readFileSync(join(dir, f), "utf8");
    return /\bskip:|\bt\.skip\(|test\.skip\(/.test(text) && !text.includes(`${f}: skipping`);
  });
  assert.deepEqual(silent, []);
  // The summary line scripts/test.sh collects: no colour codes in a log, and every file's line matched.
  const script = readFileSync(join(ROOT, "scripts/test.sh"), "utf8");
  assert.match(script, /\[ -t 1 \] \|\| export NO_COLOR=1/);
  assert.ok(script.indexOf("NO_COLOR=1") < script.indexOf("deno test"), "NO_COLOR is set before the runners start");
  for (const f of files) assert.match(`${f}: skipping`, /^[a-z0-9.-]+\.test\.ts: skipping/, f);
});
