// The command line's front door, through the compiled binary: help and version, shell completions, the request
// file's JSON Schema and $schema, paths that resolve against the request file, one JSON reader with line:column,
// zod errors in the catalog's words, --from auto and a recording on stdin.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { lines, ROOT, runLoom } from "./helpers/binary.ts";
import { anthropicAnswer, startAnthropicServer } from "./helpers/fake-provider-servers.ts";
import { validateJsonSchema } from "./helpers/validate-json-schema.ts";

const FIX_BUG = resolve(ROOT, "testdata/workflows/fix-bug.jsonl");
const MINI = resolve(ROOT, "tests/fixtures/mini-swe-agent/v1-early-xml.json");
const EXAMPLE_REQUEST = resolve(ROOT, "testdata/example-request.json");

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-input-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("loom version, -v and --version print the version; loom help COMMAND is COMMAND --help", async () => {
  const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
  for (const args of [["version"], ["-v"], ["--version"]]) {
    const r = await runLoom(args, { cwd: ROOT });
    assert.equal(r.code, 0);
    assert.ok(r.stdout.startsWith(`loom ${version} (`) && r.stdout.endsWith(")\n"), r.stdout);
  }
  for (const command of ["run", "replay", "report", "schema", "completions"]) {
    const viaHelp = await runLoom(["help", command], { cwd: ROOT });
    const viaFlag = await runLoom([command, "--help"], { cwd: ROOT });
    assert.equal(viaHelp.code, 0, viaHelp.stderr);
    assert.equal(viaHelp.stdout, viaFlag.stdout);
    assert.ok(viaHelp.stdout.length > 40);
  }
  const unknown = await runLoom(["help", "launch"], { cwd: ROOT });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^loom: unknown command "launch" \(expected run, replay, report, .*\)\n$/);
});

const hasShell = (shell: string) => spawnSync(shell, ["-c", "exit 0"]).status === 0;

test("loom completions bash|zsh|fish print scripts each shell accepts, completing commands, flags and values", async (t) => {
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = await runLoom(["completions", shell], { cwd: ROOT });
    assert.equal(r.code, 0, r.stderr);
    for (const word of ["replay", "context-policy", "bounded", "mini-swe-agent", "jobs"]) {
      assert.ok(r.stdout.includes(word), `${shell} script lacks ${word}`);
    }
    if (!hasShell(shell)) {
      t.diagnostic(`${shell} not installed: syntax not checked`);
      continue;
    }
    const dir = tempDir(t);
    writeFileSync(join(dir, `loom.${shell}`), r.stdout);
    execFileSync(shell, ["-n", join(dir, `loom.${shell}`)]); // throws on a syntax error
  }
  if (hasShell("bash")) {
    // What bash offers after "loom replay --context-policy ": the two policies.
    const script = (await runLoom(["completions", "bash"], { cwd: ROOT })).stdout;
    const out = execFileSync("bash", [
      "-c",
      `${script}\nCOMP_WORDS=(loom replay --context-policy ""); COMP_CWORD=3; _loom; echo "\${COMPREPLY[@]}"`,
    ], { encoding: "utf8" });
    assert.equal(out.trim(), "legacy bounded");
  }
  const bad = await runLoom(["completions", "tcsh"], { cwd: ROOT });
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /^loom completions: Unknown shell "tcsh" \(expected one of bash, zsh, fish, powershell\)\n$/,
  );
});

test("loom schema request describes the request file: the bundled example (with its $schema) validates", async () => {
  const r = await runLoom(["schema", "request"], { cwd: ROOT });
  assert.equal(r.code, 0, r.stderr);
  const schema = JSON.parse(r.stdout);
  assert.deepEqual(schema, JSON.parse(readFileSync(join(ROOT, "schemas/request.schema.json"), "utf8")));
  const example = JSON.parse(readFileSync(EXAMPLE_REQUEST, "utf8"));
  assert.equal(example.$schema, "../schemas/request.schema.json");
  assert.deepEqual(validateJsonSchema(schema, example), []);
  assert.notDeepEqual(validateJsonSchema(schema, { ...example, max_steps: 3 }), []);
});

test("a request file's $schema is accepted and its workspace resolves against the file's folder, not the cwd", async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, "requests"));
  cpSync(resolve(ROOT, "testdata/example-project"), join(dir, "requests", "project"), { recursive: true });
  const server = await startAnthropicServer((_r, i) =>
    anthropicAnswer(i % 2 === 0 ? { action: "finish" } : { status: "success", summary: "Nothing to do." })
  );
  t.after(() => server.close());
  const example = JSON.parse(readFileSync(EXAMPLE_REQUEST, "utf8"));
  writeFileSync(
    join(dir, "requests", "fix.jsonc"),
    `// a request with comments\n${JSON.stringify({ ...example, workspace: "project" }, null, 2)}`,
  );
  const r = await runLoom(["run", "requests/fix.jsonc", "--json", "--quiet"], {
    cwd: dir,
    env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseUrl },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).status, "success");
  assert.equal(server.requests.length, 2);
});

test("request file errors: JSON syntax by line and column, unknown keys and missing fields in the catalog's words", async (t) => {
  const dir = tempDir(t);
  const example = JSON.parse(readFileSync(EXAMPLE_REQUEST, "utf8"));
  const cases: [string, string, RegExp][] = [
    [
      "syntax.json",
      `{\n  "intent": "x"\n  "model": "y"\n}`,
      /^loom run: syntax\.json: not valid JSON: line 3, column 3: expected "," or "}", found a string$/,
    ],
    [
      "unknown.json",
      JSON.stringify({ ...example, max_steps: 3 }),
      /^loom run: unknown\.json: invalid SliceRequest: max_steps: unknown key \(expected one of intent, instructions, workspace, actions, test, model, limits, commands, sandbox, workspace_ignore, step_protocol, effort, thinking, previews, require_passing_tests, \$schema\)$/,
    ],
    [
      "missing.json",
      JSON.stringify({ ...example, model: undefined }),
      /^loom run: missing\.json: invalid SliceRequest: model: required field missing \(expected string\)$/,
    ],
    ["dir", "", /^loom run: Cannot read request "dir": it is a folder, not a file$/],
    ["absent.json", "", /^loom run: Cannot read request "absent\.json": no such file or folder$/],
  ];
  mkdirSync(join(dir, "dir"));
  for (const [file, text, expected] of cases) {
    if (text) writeFileSync(join(dir, file), text);
    const r = await runLoom(["run", file], { cwd: dir });
    assert.equal(r.code, 2, `${file}: ${r.stderr}`);
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr.trim(), expected);
    assert.doesNotMatch(r.stderr, /ENOENT|EISDIR|Invalid input/);
  }
});

test("replay detects the format by default, reads a recording from stdin, and a forced --from names what it found", async (t) => {
  const dir = tempDir(t);
  const mini = await runLoom(["replay", MINI, "--json", "--quiet"], { cwd: dir });
  assert.equal(mini.code, 0, mini.stderr);
  assert.equal(JSON.parse(mini.stdout).outcome, "completed");

  const stdin = await runLoom(["replay", "-", "--json", "--quiet"], { cwd: dir, stdin: readFileSync(FIX_BUG, "utf8") });
  assert.equal(stdin.code, 0, stdin.stderr);
  const fromFile = await runLoom(["replay", FIX_BUG, "--json", "--quiet"], { cwd: dir });
  const timeless = (text: string) => ({ ...JSON.parse(text), duration_ms: 0 });
  assert.deepEqual(timeless(stdin.stdout), timeless(fromFile.stdout));

  const forced = await runLoom(["replay", "--from", "loom", MINI], { cwd: dir });
  assert.equal(forced.code, 2);
  assert.equal(
    forced.stderr,
    `loom replay: v1-early-xml.json: expected a Loom recording (a "loom-recording" header line), found a mini-swe-agent trajectory (use --from mini-swe-agent or --from auto)\n`,
  );

  writeFileSync(join(dir, "broken.jsonl"), `${readFileSync(FIX_BUG, "utf8").split("\n")[0]}\n{"type": "answer",,}\n`);
  const broken = await runLoom(["replay", "broken.jsonl"], { cwd: dir });
  assert.equal(broken.code, 2);
  assert.match(
    broken.stderr,
    /^loom replay: broken\.jsonl:2:19: not valid JSON: expected a property name in double quotes or "}", found ","\n$/,
  );

  const mixed = await runLoom(["replay", "-", FIX_BUG], { cwd: dir });
  assert.equal(mixed.code, 2);
  assert.match(mixed.stderr, /- \(stdin\) is one recording/);
});
