// What a review of the output fixes of issues 42 and 43 found through the binary: an output written over a session
// `--compare` reads, or over a config file or model table Loom reads at start; raw escape codes from file names on the
// terminal outside `loom report`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { ROOT, runLoom } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { anthropicAnswer, startAnthropicServer } from "./helpers/fake-provider-servers.ts";
import { fileTree } from "./helpers/file-tree.ts";

/** A folder with a workspace (ws/), a request file of it, a recording and a user config folder (cfg/loom/). */
function arena(): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-outputs-review-"));
  cpSync(join(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
  const request = JSON.parse(readFileSync(join(ROOT, "testdata/example-request.json"), "utf8"));
  writeFileSync(join(dir, "req.json"), JSON.stringify({ ...request, $schema: undefined, workspace: "ws" }));
  cpSync(join(ROOT, "testdata/workflows/fix-bug.jsonl"), join(dir, "rec.jsonl"));
  mkdirSync(join(dir, "cfg/loom"), { recursive: true });
  writeFileSync(join(dir, "cfg/loom/config.jsonc"), '{ "context_policy": "bounded" }\n');
  return dir;
}

async function loom(dir: string, argv: string[]) {
  const { io, out } = fakeIo({ cwd: dir, env: { ANTHROPIC_API_KEY: undefined, XDG_CONFIG_HOME: join(dir, "cfg") } });
  const code = await main(argv, io);
  return { code, ...out };
}

/** Every file under `dir` with its bytes, to show a refusal changed nothing. */
const snapshot = fileTree;

/** Runs argv in a fresh arena (after `prepare`), expects a one-line refusal matching `says`, exit 2, no file changed. */
async function refused(argv: string[], says: RegExp, prepare: (dir: string) => void = () => {}): Promise<void> {
  const dir = arena();
  try {
    prepare(dir);
    const before = snapshot(dir);
    const r = await loom(dir, argv);
    assert.equal(r.code, 2, `${argv.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, says);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.deepEqual(snapshot(dir), before, `${argv.join(" ")} changed files`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("replay --compare: --html naming a session found in the folders is refused; the session keeps its bytes", async () => {
  const sessions = (dir: string) => {
    mkdirSync(join(dir, "sessions/deep"), { recursive: true });
    cpSync(join(dir, "rec.jsonl"), join(dir, "sessions/s.jsonl"));
    cpSync(join(dir, "rec.jsonl"), join(dir, "sessions/deep/t.jsonl"));
  };
  await refused(
    ["replay", "sessions", "--compare", "--html", "sessions/s.jsonl"],
    /--html ".*sessions\/s\.jsonl" is the session .*which Loom reads/,
    sessions,
  );
  await refused(["replay", "sessions", "--compare", "--html", "./sessions/deep/t.jsonl"], /which Loom reads/, sessions);
});

test("the user config file, an installed model table and a project config file are inputs of run, replay and report", async () => {
  const USER = /the user config file ".*config\.jsonc", which Loom reads/;
  await refused(["run", "req.json", "--context-report", "cfg/loom/config.jsonc"], USER);
  await refused(["replay", "rec.jsonl", "--context-report", "cfg/loom/config.jsonc"], USER);
  await refused(["replay", "rec.jsonl", "--trace", "cfg/loom/config.jsonc"], USER);
  await refused(["report", "r.json", "--html", "cfg/loom/config.jsonc"], USER, (dir) => {
    cpSync(join(ROOT, "testdata/reports/run-with-cache.json"), join(dir, "r.json"));
  });
  // Not there yet: written, it would be read as configuration by every later command.
  await refused(["run", "req.json", "--record", "cfg/loom/models.json"], /the installed model table/);
  await refused(["replay", "rec.jsonl", "--context-report", "cfg/loom/models.json"], /the installed model table/);
  // A batch names its reports after its recordings: models.jsonl's would be models.json, the installed table.
  await refused(
    ["replay", "recs", "--reports-dir", "cfg/loom"],
    /--reports-dir ".*cfg\/loom" lies inside the folder of the user config file and the installed model table/,
    (dir) => {
      mkdirSync(join(dir, "recs"));
      cpSync(join(dir, "rec.jsonl"), join(dir, "recs/models.jsonl"));
      cpSync(join(dir, "rec.jsonl"), join(dir, "recs/other.jsonl"));
    },
  );
  // The project file above the workspace (outside it: no other rule covers it), found from the workspace upward.
  await refused(["run", "req.json", "--diff", ".loom/config.jsonc"], /a project config file/, (dir) => {
    mkdirSync(join(dir, ".loom"));
    writeFileSync(join(dir, ".loom/config.jsonc"), "{}\n");
  });
});

test("with the user config file kept, the next run starts (it is not a report)", async () => {
  const dir = arena();
  try {
    const first = await loom(dir, ["run", "req.json", "--context-report", "cfg/loom/config.jsonc"]);
    assert.equal(first.code, 2);
    const next = await loom(dir, ["config", "--json"]);
    assert.equal(next.code, 0, next.stderr);
    assert.equal(JSON.parse(next.stdout).settings.context_policy.value, "bounded");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A name with an OSC (set the terminal's title) and a colour: a file system holds it, a terminal would obey it.
const HOSTILE = "evil\x1b]0;T\x07\x1b[31mx";

test("dist/loom: no raw escape code from a hostile file name on stdout or stderr, in any command's text output", {
  timeout: 600_000,
}, async () => {
  const dir = arena();
  try {
    mkdirSync(join(dir, "recs"));
    cpSync(join(dir, "rec.jsonl"), join(dir, `recs/${HOSTILE}.jsonl`));
    writeFileSync(join(dir, `recs/${HOSTILE}-bad.jsonl`), "not a recording\n");
    cpSync(join(dir, "rec.jsonl"), join(dir, "recs/plain.jsonl"));
    cpSync(join(ROOT, "testdata/reports/run-with-cache.json"), join(dir, `${HOSTILE}.json`));
    const runs: string[][] = [
      ["replay", "recs"], // a batch: its summary and the failed recording's line
      ["replay", "recs", "--reports-dir", `out-${HOSTILE}`, "--context-report", `agg-${HOSTILE}.json`],
      ["replay", "recs", "--compare"],
      ["replay", "recs", "--compare", "--json"],
      ["replay", "recs", "--compare", "--html", `${HOSTILE}.html`],
      ["replay", `recs/${HOSTILE}.jsonl`, "--context-report", `one-${HOSTILE}.json`],
      ["replay", `recs/${HOSTILE}-bad.jsonl`],
      ["run", "req.json", "--context-report", `run-${HOSTILE}.json`, "--record", `${HOSTILE}/r.jsonl`],
      ["report", `${HOSTILE}.json`],
      ["report", `${HOSTILE}.json`, "--html", `page-${HOSTILE}.html`],
      ["report", `${HOSTILE}.json`, `one-${HOSTILE}.json`],
      ["report", "--merge", `agg-${HOSTILE}.json`, "-o", `merged-${HOSTILE}.json`],
    ];
    for (const argv of runs) {
      const r = await runLoom(argv, { cwd: dir, env: { XDG_CONFIG_HOME: join(dir, "cfg") } });
      for (const [stream, text] of [["stdout", r.stdout], ["stderr", r.stderr]] as const) {
        // deno-lint-ignore no-control-regex
        const at = text.search(/[\x1b\x07\x9b]/);
        assert.equal(
          at,
          -1,
          `loom ${JSON.stringify(argv)} ${stream}: a raw control code at ${at}: ${JSON.stringify(text)}`,
        );
      }
      assert.ok(r.code !== null && r.code < 3 || argv[0] === "run", `loom ${JSON.stringify(argv)}: ${r.stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** fix-bug.jsonl without the execution reports of `steps`: a partial recording (its answers all there). */
function partialRecording(dir: string, steps: number[]): string {
  const lines = readFileSync(join(dir, "rec.jsonl"), "utf8").split("\n").filter((line) => {
    if (line.trim() === "") return false;
    const entry = JSON.parse(line);
    return !(entry.type === "execution" && steps.includes(entry.step));
  });
  writeFileSync(join(dir, "part.jsonl"), `${lines.join("\n")}\n`);
  return "part.jsonl";
}

test("replay --execute of a partial recording compares the steps it holds reports of, and says which it did not", async () => {
  const dir = arena();
  try {
    const file = partialRecording(dir, [2, 3, 4, 5, 6, 7, 8]);
    const r = await loom(dir, ["replay", file, "--execute", "-w", "ws"]);
    assert.equal(r.code, 0, `a partial recording is not a divergence: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /re-executed: the recording's 1 execution report equals this run's/);
    assert.match(
      r.stdout,
      /not compared: steps 2, 3, 4 and 4 more \(the recording holds no execution report of them\)/,
    );
    assert.doesNotMatch(r.stdout + r.stderr, /differ/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("replay --execute: a gap in the recording's reports does not shift the later steps onto the wrong reports", async () => {
  const dir = arena();
  try {
    const file = partialRecording(dir, [3]);
    const r = await loom(dir, ["replay", file, "--execute", "-w", "ws"]);
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /the recording's 7 execution reports equal this run's/);
    assert.match(r.stdout, /not compared: step 3 \(the recording holds no execution report of it\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const flag of ["--diff", "--record", "--trace", "--context-report"]) {
  test(`run ${flag} naming a new file of the workspace: the model's write of it is refused (loom_file) and listed`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "loom-outputs-review-"));
    mkdirSync(join(dir, "w2"));
    const answers = [
      { action: "write_file", reason: "note" },
      { path: "new.txt", content: "the model's\n" },
      { action: "finish" },
      { status: "success", summary: "done" },
    ];
    const server = await startAnthropicServer((_r, i) => anthropicAnswer(answers[Math.min(i, answers.length - 1)]));
    t.after(async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const env = { ANTHROPIC_API_KEY: "sk-ant-outputs-review-0123456789", ANTHROPIC_BASE_URL: server.baseUrl };
    const { io, out } = fakeIo({ cwd: dir, env });
    const argv = ["run", "Write a note", "--model", "anthropic/claude-test", "-w", "w2", flag, "w2/new.txt", "--quiet"];
    const code = await main(argv, io);
    assert.equal(code, 0, out.stderr);
    assert.match(out.stdout, /not written \(Loom's own file, refusal loom_file\): step 1 write_file "new\.txt"/);
    assert.notEqual(readFileSync(join(dir, "w2/new.txt"), "utf8"), "the model's\n", "the output holds Loom's bytes");
  });
}

test("report --transcript: another run's recording with the same calls and counters is refused, naming the step", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-outputs-review-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // Two runs of one scripted model: the same number of calls, phases and counters; another file written.
  const runOf = async (name: string, path: string) => {
    mkdirSync(join(dir, name));
    const answers = [
      { action: "write_file", reason: "note" },
      { path, content: "note\n" },
      { action: "finish" },
      { status: "success", summary: "done" },
    ];
    const server = await startAnthropicServer((_r, i) => anthropicAnswer(answers[Math.min(i, answers.length - 1)]));
    try {
      const env = { ANTHROPIC_API_KEY: "sk-ant-outputs-review-0123456789", ANTHROPIC_BASE_URL: server.baseUrl };
      const { io, out } = fakeIo({ cwd: dir, env });
      const argv = ["run", "Write a note", "--model", "anthropic/claude-test", "-w", name, "--quiet"];
      const code = await main([...argv, "--context-report", `${name}.json`, "--record", `${name}.jsonl`], io);
      assert.equal(code, 0, out.stderr);
    } finally {
      await server.close();
    }
  };
  await runOf("runA", "a.txt");
  await runOf("runC", "c.txt");
  const other = await loom(dir, ["report", "runA.json", "--html", "a.html", "--transcript", "runC.jsonl"]);
  assert.equal(other.code, 2, other.stderr);
  assert.match(
    other.stderr,
    /"runC\.jsonl" is not this report's run \(step 1: the report says write_file "a\.txt", the recording says write_file "c\.txt"\)/,
  );
  assert.equal(other.stderr.trim().split("\n").length, 1);
  const own = await loom(dir, ["report", "runA.json", "--html", "a.html", "--transcript", "runA.jsonl"]);
  assert.equal(own.code, 0, own.stderr);
});
