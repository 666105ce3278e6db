// Every output true (issue 43): what `loom report`, `loom run`, `loom replay`, `loom doctor` and `loom config` print
// says what happened, of this run, and nothing else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { ROOT } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { judgeAnswer } from "../lib/doctor/doctor.ts";
import { someSteps } from "../lib/text/numbers.ts";
import { foldReport } from "../lib/report/fold.ts";

async function loom(dir: string, argv: string[], env: Record<string, string | undefined> = {}) {
  const { io, out } = fakeIo({ cwd: dir, env });
  const code = await main(argv, io);
  return { code, ...out };
}

/** A folder holding the two shipped recordings and, for each, a replay's report and request trace. */
async function replayed(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "loom-true-"));
  for (const name of ["fix-bug", "escape-and-suspend"]) {
    cpSync(join(ROOT, `testdata/workflows/${name}.jsonl`), join(dir, `${name}.jsonl`));
    const r = await loom(dir, [
      "replay",
      `${name}.jsonl`,
      "--context-report",
      `${name}.json`,
      "--trace",
      `${name}.trace.jsonl`,
      "--quiet",
    ]);
    assert.ok(r.code === 0 || r.code === 4, `${name}: ${r.code} ${r.stderr}`);
  }
  return dir;
}

test("report --transcript: another run's recording or trace is refused in one line; its own is shown", async () => {
  const dir = await replayed();
  try {
    const own = await loom(dir, [
      "report",
      "fix-bug.json",
      "--html",
      "own.html",
      "--transcript",
      "fix-bug.jsonl",
      "--transcript",
      "fix-bug.trace.jsonl",
    ]);
    assert.equal(own.code, 0, own.stderr);
    for (const other of ["escape-and-suspend.jsonl", "escape-and-suspend.trace.jsonl"]) {
      const r = await loom(dir, ["report", "fix-bug.json", "--html", "x.html", "--transcript", other]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is not this report's run/);
      assert.equal(r.stderr.trim().split("\n").length, 1);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("report --transcript: a second recording (or the same file twice) is refused", async () => {
  const dir = await replayed();
  try {
    const args = ["report", "fix-bug.json", "--html", "x.html", "--transcript", "fix-bug.jsonl", "--transcript"];
    for (const second of ["fix-bug.jsonl", "./fix-bug.jsonl"]) {
      const r = await loom(dir, [...args, second]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is a second recording/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Two reports of one run: the second sends fewer bytes (0.63×, 0.48× at most) but costs 1.12× as much. */
function cheaperBytesDearerCost(dir: string): void {
  const legacy = JSON.parse(readFileSync(join(ROOT, "testdata/reports/run-with-cache.json"), "utf8"));
  const scale = (phase: { request_bytes: { total: number; max: number } }, total: number, max: number) => {
    phase.request_bytes = {
      total: Math.round(phase.request_bytes.total * total),
      max: Math.round(phase.request_bytes.max * max),
    };
  };
  const bounded = structuredClone(legacy);
  bounded.policy = "bounded";
  for (const name of ["selection", "arguments"]) scale(bounded.phases[name], 0.63, 0.48);
  for (const call of bounded.calls) call.request_bytes = Math.round(call.request_bytes * 0.48);
  bounded.cost = { ...bounded.cost, total: legacy.cost.total * 1.12 };
  writeFileSync(join(dir, "legacy.json"), JSON.stringify(legacy));
  writeFileSync(join(dir, "bounded.json"), JSON.stringify(bounded));
}

test("report A B: the headline shows the cost beside the bytes, says which cost more, and greens only what is lower", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-true-"));
  try {
    cheaperBytesDearerCost(dir);
    const text = await loom(dir, ["report", "legacy.json", "bounded.json"]);
    assert.equal(text.code, 0, text.stderr);
    const head = text.stdout.split("\n").slice(0, 3).join("\n");
    assert.match(
      head,
      /^\[2\]: bytes 0\.\d\d× \(less\), largest 0\.\d\d× \(less\), cost 1\.12× \(more: \$0\.1803 vs \$0\.1610\)$/m,
    );
    const page = await loom(dir, ["report", "legacy.json", "bounded.json", "--html", "cmp.html"]);
    assert.equal(page.code, 0, page.stderr);
    const html = readFileSync(join(dir, "cmp.html"), "utf8");
    const headline = html.slice(
      html.indexOf('<div class="headline">'),
      html.indexOf("</div></div>", html.indexOf('<div class="headline">')),
    );
    assert.match(
      headline,
      /class="figure worse"><span class="big">1\.12×<\/span><span class="caption">cost: [^<]*\[2\] cost more/,
    );
    assert.equal((headline.match(/figure better/g) ?? []).length, 2, "the two byte ratios, lower, are green");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("doctor: a structured answer with another word than asked is a warning that says what came back, not a pass", () => {
  const asked = { status: "ok" as const, word: "two" };
  const wrong = judgeAnswer({ status: "ok", word: "ok" }, asked);
  assert.equal(wrong.status, "warn");
  assert.match(wrong.detail, /the word came back "ok", not "two" as asked/);
  assert.equal(judgeAnswer({ status: "ok", word: "two" }, asked).status, "pass");
  assert.equal(judgeAnswer({ status: "fine" }, asked).status, "fail");
});

test("a startup or routing failure's report says the step protocol the flag gave", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-true-"));
  try {
    cpSync(join(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
    const request = JSON.parse(readFileSync(join(ROOT, "testdata/example-request.json"), "utf8"));
    writeFileSync(join(dir, "req.json"), JSON.stringify({ ...request, $schema: undefined, workspace: "ws" }));
    cpSync(join(ROOT, "testdata/catalog"), join(dir, "catalog"), { recursive: true });
    cpSync(join(ROOT, "testdata/example-project"), join(dir, "example-project"), { recursive: true });
    const env = { ANTHROPIC_API_KEY: undefined, OPENAI_API_KEY: undefined };
    const runs = [
      ["run", "req.json", "--context-report", "startup.json", "--step-protocol", "single-call"],
      [
        "run",
        "no rule",
        "--catalog",
        "catalog.json",
        "--context-report",
        "routing.json",
        "--step-protocol",
        "single-call",
      ],
    ];
    for (const argv of runs) {
      const r = await loom(dir, argv, env);
      assert.equal(r.code, 3, r.stderr);
      const report = JSON.parse(readFileSync(join(dir, argv[argv.indexOf("--context-report") + 1]!), "utf8"));
      assert.ok(report.outcome === "startup_failed" || report.outcome === "routing_failed", report.outcome);
      assert.equal(report.step_protocol, "single-call", argv.join(" "));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("loom config -w DIR shows the settings of loom run -w DIR: the workspace's project file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-true-"));
  try {
    mkdirSync(join(dir, "pj/.loom"), { recursive: true });
    writeFileSync(join(dir, "pj/.loom/config.jsonc"), '{ "context_policy": "bounded", "max_steps": 3 }');
    const env = { XDG_CONFIG_HOME: join(dir, "no-user-config"), LOOM_CONTEXT_POLICY: undefined };
    const r = await loom(dir, ["config", "-w", "pj", "--json"], env);
    assert.equal(r.code, 0, r.stderr);
    const { settings } = JSON.parse(r.stdout);
    assert.equal(settings.context_policy.value, "bounded");
    assert.equal(settings.max_steps.value, 3);
    assert.equal(settings.context_policy.source, "project");
    // Outside the workspace, the project's file is not read.
    const plain = JSON.parse((await loom(dir, ["config", "--json"], env)).stdout);
    assert.notEqual(plain.settings.max_steps.value, 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("replay --execute of an answers-only recording is not judged on effects: it does not differ", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-true-"));
  try {
    cpSync(join(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
    const lines = readFileSync(join(ROOT, "testdata/workflows/fix-bug.jsonl"), "utf8").split("\n").filter(Boolean);
    const answersOnly = lines.filter((line) => JSON.parse(line).type !== "execution");
    writeFileSync(join(dir, "answers.jsonl"), answersOnly.join("\n") + "\n");
    const r = await loom(dir, ["replay", "answers.jsonl", "--execute", "-w", "ws", "--json"], { LOOM_SANDBOX: "off" });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /holds answers only: its execution reports are not compared/);
    assert.doesNotMatch(r.stderr, /differently/);
    assert.equal(JSON.parse(r.stdout).outcome, "completed");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("differing steps are listed a few at a time: steps 1, 2, 3 and 3,509 more", () => {
  const steps = Array.from({ length: 3512 }, (_, i) => i + 1);
  assert.equal(someSteps(steps), "steps 1, 2, 3 and 3,509 more");
  assert.equal(someSteps([4]), "step 4");
  assert.equal(someSteps([1, 2]), "steps 1 and 2");
  assert.equal(someSteps([1, 2, 3]), "steps 1, 2 and 3");
});

test("the terminal summary and the --json result carry the steps by action and the changed files with their lines", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-true-"));
  try {
    cpSync(join(ROOT, "testdata/workflows/fix-bug.jsonl"), join(dir, "rec.jsonl"));
    for (const ws of ["text-ws", "json-ws"]) {
      cpSync(join(ROOT, "testdata/example-project"), join(dir, ws), { recursive: true });
    }
    const env = { LOOM_SANDBOX: "off" };
    const text = await loom(dir, ["replay", "rec.jsonl", "--execute", "-w", "text-ws", "-q"], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^ {2}steps: 1 read_file, 3 run_tests, 2 edit_file, 1 print, 1 finish$/m);
    assert.match(text.stdout, /^ {2}changed files: 1 \(\+2 -1 lines\)$/m);
    assert.match(text.stdout, /^ +modified +src\/slug\.mjs +\+2 +-1$/m);
    const json = await loom(dir, ["replay", "rec.jsonl", "--execute", "-w", "json-ws", "--json"], env);
    assert.equal(json.code, 0, json.stderr);
    const result = JSON.parse(json.stdout);
    assert.deepEqual(result.actions, { read_file: 1, run_tests: 3, edit_file: 2, print: 1, finish: 1 });
    assert.deepEqual(result.changes, {
      files: [{ path: "src/slug.mjs", change: "modified", lines_added: 2, lines_removed: 1 }],
      lines_added: 2,
      lines_removed: 1,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A run's report whose steps hold a refusal with its code, a finish and a print, and `steps` steps in all. */
function reportWithSteps(steps: number): Record<string, unknown> {
  const report = JSON.parse(readFileSync(join(ROOT, "testdata/reports/run-with-cache.json"), "utf8"));
  const step = (n: number, overrides: Record<string, unknown> = {}) => ({
    step: n,
    action: "read_file",
    target: `src/f${n % 7}.mjs`,
    report: "read",
    status: "ok",
    exit_code: null,
    revision: "r0",
    ...overrides,
  });
  report.step_log = [
    step(1, { action: "finish", target: null, report: "refusal", status: "refused", refusal: "tests_not_current" }),
    ...Array.from({ length: steps - 2 }, (_, i) => step(i + 2)),
    step(steps, { action: "finish", target: null, report: "finish" }),
  ];
  report.steps = steps;
  report.finish = { status: "success", summary: "Fixed <b>slugify</b>\u001b[31m; tests pass." };
  report.printed = ["slugify now <collapses> separators"];
  return report;
}

test("step tables show a refusal's code, the finish and the printed text (escaped), and collapse long runs", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-true-"));
  try {
    writeFileSync(join(dir, "run.json"), JSON.stringify(reportWithSteps(4096)));
    const text = await loom(dir, ["report", "run.json"]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^ +1 +finish +refused \(tests_not_current\)/m);
    assert.match(text.stdout, /^finish: success\n {2}Fixed <b>slugify<\/b>\\e\[31m; tests pass\.$/m);
    assert.match(text.stdout, /^printed:\n {2}slugify now <collapses> separators$/m);
    assert.match(text.stdout, /… 4,088 more steps \(5–4,092\)/);
    const rows = text.stdout.split("\n").filter((line) => /^ +\d+ +(read_file|finish) /.test(line));
    assert.ok(rows.length < 20, `${rows.length} step rows for 4,096 steps`);

    assert.equal((await loom(dir, ["report", "run.json", "--html", "run.html"])).code, 0);
    const html = readFileSync(join(dir, "run.html"), "utf8");
    assert.ok(html.includes("refused (tests_not_current)"), "the refusal's code");
    assert.ok(html.includes("Fixed &#60;b&#62;slugify&#60;/b&#62;\\e[31m; tests pass."), "the finish summary, escaped");
    assert.ok(html.includes("slugify now &#60;collapses&#62; separators"), "the printed text, escaped");
    assert.ok(!html.includes("<b>slugify</b>"));
    assert.ok(html.includes("… 4,088 more steps (5–4,092)"));
    assert.ok((html.match(/<tr class="ok">/g) ?? []).length < 20, "the table is collapsed");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a run's report keeps the finish, what was printed and each refusal's code", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-true-"));
  try {
    cpSync(join(ROOT, "testdata/workflows/fix-bug.jsonl"), join(dir, "rec.jsonl"));
    const r = await loom(dir, ["replay", "rec.jsonl", "--context-report", "r.json", "-q"]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    const stream = await loom(dir, ["replay", "rec.jsonl", "--output-format", "stream-json", "-q"]);
    const events = stream.stdout.trim().split("\n").map((line) => JSON.parse(line));
    const { type: _s, ...started } = events.find((e) => e.type === "run-started");
    const { type: _e, ...ended } = events.find((e) => e.type === "run-ended");
    assert.equal(report.finish.status, "success");
    assert.match(report.finish.summary, /^Fixed slugify/);
    assert.deepEqual(report.printed, ["slugify now collapses separators and trims them at both ends."]);
    // A refused step keeps its code in the step log.
    const refused = foldReport([
      { type: "run-started", ...started },
      {
        type: "step-executed",
        step: 1,
        action: "finish",
        report: "refusal",
        exit_code: null,
        timed_out: null,
        refusal: "tests_not_current",
        elapsed_ms: 0,
        target: null,
        status: "refused",
        revision: "r0",
        executed: false,
      },
      { type: "run-ended", ...ended },
    ], { version: "0.0.0" });
    assert.equal(refused.step_log?.[0]?.refusal, "tests_not_current");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
