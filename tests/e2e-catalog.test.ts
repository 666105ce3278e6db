// End to end through the real binary: `dist/loom run --catalog` routes requests (pattern rules, classification)
// and runs slices against local provider-shaped servers; every startup and routing failure ends with exit 3, one
// line on stderr and a context report; --json pipelines get one JSON object on stdout; SIGINT and SIGTERM stop the
// slice's processes and still write the report (exit 130).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseJsonc } from "../lib/catalog/catalog.ts";
import { foldReport } from "../lib/report/fold.ts";
import {
  anthropicAnswer,
  type FakeProviderServer,
  FULL_OPENAI_USAGE,
  openAIAnswer,
  type Script,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";
import { hostPid, isAlive, lines, type LoomRun, ROOT, runLoom, startLoom, waitFor } from "./helpers/binary.ts";

const EXAMPLE = resolve(ROOT, "testdata/catalog/example.jsonc");
const PROJECT = resolve(ROOT, "testdata/example-project");
const FIX_BUG = resolve(ROOT, "testdata/workflows/fix-bug.jsonl");
const CEILING_BYTES = 65_536;
const E2E = { timeout: 600_000 };
const KEYS = { anthropic: "sk-ant-e2e-SECRET-77c0", openai: "sk-proj-e2e-SECRET-31ab" };
/** A stderr progress or routing line: never JSON. */
const PROGRESS = /^(step \d+\/\d+ [a-z_]+|classification [\d,]+ B \(\d+ candidate slices?\)|route: \S+ \(.+\))$/;

type Sandbox = {
  dir: string;
  workspace: string;
  claude: FakeProviderServer;
  gpt: FakeProviderServer;
  env: Record<string, string>;
  loom: (args: string[], options?: { stdin?: string; env?: Record<string, string | undefined> }) => Promise<LoomRun>;
  writeCatalog: (value: unknown, name?: string) => string;
  report: (name?: string) => any;
};

/** A temp dir with a copy of the example project and both servers; all removed when the test ends. */
async function sandbox(
  t: { after: (fn: () => unknown) => void },
  { anthropic = [], openai = [] }: { anthropic?: Script; openai?: Script } = {},
): Promise<Sandbox> {
  const dir = mkdtempSync(join(tmpdir(), "loom-e2e-catalog-"));
  const servers: FakeProviderServer[] = [];
  t.after(async () => {
    for (const server of servers) await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const workspace = join(dir, "ws");
  cpSync(PROJECT, workspace, { recursive: true });
  const claude = await startAnthropicServer(anthropic);
  servers.push(claude);
  const gpt = await startOpenAIServer(openai);
  servers.push(gpt);
  const env = {
    ANTHROPIC_API_KEY: KEYS.anthropic,
    ANTHROPIC_BASE_URL: claude.baseUrl,
    OPENAI_API_KEY: KEYS.openai,
    OPENAI_BASE_URL: gpt.baseUrl,
    NO_COLOR: "1",
  };
  return {
    dir,
    workspace,
    claude,
    gpt,
    env,
    loom: (args, { stdin, env: extra = {} } = {}) =>
      runLoom(["run", ...args], { cwd: dir, env: { ...env, ...extra }, stdin }),
    writeCatalog: (value, name = "catalog.json") => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(value, null, 2));
      return path;
    },
    report: (name = "report.json") => JSON.parse(readFileSync(join(dir, name), "utf8")),
  };
}

/** The shipped example catalog as data, for variants written to a temp dir (its relative paths no longer apply). */
function exampleCatalog(): Record<string, any> {
  const parsed = parseJsonc(readFileSync(EXAMPLE, "utf8"));
  assert.ok(parsed.ok);
  const { $schema: _, defaults: __, ...catalog } = parsed.value as Record<string, any>;
  return { ...catalog, defaults: { workspace: "ws", context_policy: "bounded" } };
}

/** The edit_file arguments of the recorded workflow, in order. */
function recordedEdits(): unknown[] {
  return lines(readFileSync(FIX_BUG, "utf8"))
    .map((line) => JSON.parse(line))
    .filter((e) => e.type === "execution" && e.action === "edit_file")
    .map((e) => e.args);
}

function assertOneLine(stderr: string, pattern: RegExp): void {
  assert.equal(lines(stderr).length, 1, `expected one stderr line, got: ${stderr}`);
  assert.ok(stderr.endsWith("\n"));
  assert.match(stderr.trimEnd(), pattern);
}

function assertNoJson(stderr: string): void {
  for (const line of lines(stderr)) {
    assert.ok(!line.includes("{"), `stderr line looks like JSON: ${line}`);
    let parsed = false;
    try {
      JSON.parse(line);
      parsed = true;
    } catch { /* not JSON: good */ }
    assert.ok(!parsed, `stderr line parses as JSON: ${line}`);
  }
}

// ---- runs that complete ----

test(
  "stream-json of a routed run: run-started, the classification call, route-chosen, then steps naming their targets",
  E2E,
  async (t) => {
    const s = await sandbox(t, {
      openai: [
        openAIAnswer({ slice: "explain" }),
        openAIAnswer({ action: "read_file", reason: "Look at truncateSlug" }),
        openAIAnswer({ path: "src/slug.mjs" }),
        openAIAnswer({ action: "finish" }),
        openAIAnswer({ status: "success", summary: "Explained truncateSlug." }),
      ],
    });
    const reportPath = join(s.dir, "routed-report.json");
    const run = await s.loom(
      [
        "-",
        "--catalog",
        EXAMPLE,
        "--workspace",
        "ws",
        "--output-format",
        "stream-json",
        "--context-report",
        reportPath,
      ],
      { stdin: "What does truncateSlug do?\n" },
    );
    assert.equal(run.code, 0, run.stderr);
    const events = lines(run.stdout).map((line) => JSON.parse(line));
    // The report, classification call included, is the fold of the stream.
    assert.equal(
      `${JSON.stringify(foldReport(events, { version: events[0].loom_version }), null, 2)}\n`,
      readFileSync(reportPath, "utf8"),
    );
    assert.deepEqual(events.slice(0, 3).map((e) => e.type), ["run-started", "model-called", "route-chosen"]);
    assert.equal(events[0].slice, "explain");
    assert.deepEqual([events[1].step, events[1].phase], [0, "classification"]);
    assert.deepEqual(events[2], { type: "route-chosen", slice: "explain", via: "classification", rule: null });
    const steps = events.filter((e) => e.type === "step-executed");
    assert.deepEqual(steps.map((e) => [e.action, e.target, e.status, e.revision]), [
      ["read_file", "src/slug.mjs", "ok", "r0"],
      ["finish", null, "ok", "r0"],
    ]);
    assert.ok(!run.stdout.includes("truncateSlug(slug"), "no file contents in the stream");
    assert.equal(events.at(-1).type, "result");
  },
);

test(
  "a request piped through stdin to dist/loom run --catalog … --json: one JSON object on stdout, classification-routed, stderr free of JSON",
  E2E,
  async (t) => {
    const s = await sandbox(t, {
      openai: [
        openAIAnswer({ slice: "explain" }),
        openAIAnswer({ action: "read_file", reason: "Look at truncateSlug" }),
        openAIAnswer({ path: "src/slug.mjs" }),
        openAIAnswer({ action: "print" }),
        openAIAnswer({ text: "truncateSlug shortens a slug to at most max characters, cutting at the last hyphen." }),
        openAIAnswer({ action: "finish" }),
        openAIAnswer({ status: "success", summary: "Explained truncateSlug." }),
      ],
    });
    const run = await s.loom([
      "-",
      "--catalog",
      EXAMPLE,
      "--workspace",
      "ws",
      "--context-report",
      "report.json",
      "--json",
    ], {
      stdin: "What does truncateSlug do?\n",
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(lines(run.stdout).length, 1, `stdout: ${run.stdout}`);
    const result = JSON.parse(run.stdout);
    assert.equal(result.outcome, "completed");
    assert.equal(result.exit_code, 0);
    assert.equal(result.slice, "explain");
    assert.deepEqual(result.route, { via: "classification", rule: null });
    assert.equal(result.summary, "Explained truncateSlug.");
    assert.deepEqual(result.printed, [
      "truncateSlug shortens a slug to at most max characters, cutting at the last hyphen.",
    ]);
    assert.equal(result.report_path, join(s.dir, "report.json"));

    // stderr: human progress only, as plain lines (not a terminal).
    assertNoJson(run.stderr);
    for (const line of lines(run.stderr)) assert.match(line, PROGRESS);
    assert.ok(!run.stderr.includes("\x1b"), "no escape codes off a terminal");
    assert.match(run.stderr, /^route: explain \(classification\)$/m);
    const announced = Number(
      /^classification ([\d,]+) B \(2 candidate slices\)$/m.exec(run.stderr)?.[1].replaceAll(",", ""),
    );

    // The classification call: the request text, both candidates, the answer schema enforced.
    assert.equal(s.claude.requests.length, 0);
    const classification = s.gpt.requests[0];
    assert.ok(classification.rawBody.includes("What does truncateSlug do?"));
    const format = (classification.body as any).response_format;
    assert.equal(format.type, "json_schema");
    assert.ok(JSON.stringify(format.json_schema.schema).includes('"fix-tests"'));
    assert.ok(JSON.stringify(format.json_schema.schema).includes('"explain"'));

    const report = s.report();
    assert.equal(report.outcome, "completed");
    assert.equal(report.slice, "explain");
    assert.equal(report.policy, "bounded", "the catalog's default policy");
    assert.equal(report.phases.classification.requests, 1);
    assert.equal(report.phases.classification.request_bytes.total, announced);
    assert.ok(announced > 0 && announced <= CEILING_BYTES);
    assert.equal(report.calls[0].phase, "classification");
    assert.equal(report.model_calls, s.gpt.requests.length);
    // Usage summed over the classification and the slice's calls, as the server reported it.
    const n = s.gpt.requests.length;
    assert.deepEqual(report.usage, {
      input: n * (FULL_OPENAI_USAGE.prompt_tokens - FULL_OPENAI_USAGE.prompt_tokens_details.cached_tokens),
      cache_read: n * FULL_OPENAI_USAGE.prompt_tokens_details.cached_tokens,
      cache_write: null,
      output: n * FULL_OPENAI_USAGE.completion_tokens,
    });
  },
);

test("a pattern-routed run fixes the example project against the Anthropic-shaped server", E2E, async (t) => {
  const [collapse, trim] = recordedEdits();
  const s = await sandbox(t, {
    anthropic: [
      anthropicAnswer({ action: "read_file", reason: "See how slugify builds the slug" }),
      anthropicAnswer({ path: "src/slug.mjs" }),
      anthropicAnswer({ action: "run_tests" }),
      anthropicAnswer({ action: "edit_file", reason: "Collapse runs of separators" }),
      anthropicAnswer(collapse),
      anthropicAnswer({ action: "run_tests" }),
      anthropicAnswer({ action: "edit_file", reason: "Trim separators at both ends" }),
      anthropicAnswer(trim),
      anthropicAnswer({ action: "run_tests" }),
      anthropicAnswer({ action: "finish" }),
      anthropicAnswer({ status: "success", summary: "Fixed slugify." }),
    ],
  });
  const run = await s.loom([
    "Fix the failing slugify tests",
    "--catalog",
    EXAMPLE,
    "--workspace",
    "ws",
    "--context-report",
    "report.json",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^run fix-tests: completed \(success\) after 7 steps, revision r2, verified$/m);
  assert.match(run.stdout, /^ {2}last test: passed on the current revision$/m);
  assert.match(run.stderr, /^route: fix-tests \(pattern rule 1\)$/m);
  for (const line of lines(run.stderr)) assert.match(line, PROGRESS);
  assert.equal(s.gpt.requests.length, 0, "a pattern match makes no classification call");
  assert.equal(s.claude.requests.length, 11);
  for (const request of s.claude.requests) {
    assert.equal((request.body as any).model, "claude-sonnet-5-5", "the catalog's model id");
    assert.ok(
      request.rawBody.includes(
        "Fix the failing slugify tests\\n\\nThe change is done when every test in test.mjs passes.",
      ),
    );
  }
  assert.equal(spawnSync("node", ["test.mjs"], { cwd: s.workspace }).status, 0, "the workspace copy's tests pass");
  const report = s.report();
  assert.equal(report.outcome, "completed");
  assert.equal(report.slice, "fix-tests");
  assert.equal(report.phases.classification.requests, 0);
  assert.equal(report.model_calls, 11);
});

// ---- startup and routing failures: exit 3, one stderr line, a report ----

type FailureCase = {
  name: string;
  /** Arguments after "run"; a report is asked for as report.json unless the case says otherwise. */
  args: (s: Sandbox) => string[];
  stdin?: string;
  env?: Record<string, string | undefined>;
  openai?: Script;
  line: RegExp;
  outcome: "startup_failed" | "routing_failed";
  code: string;
  check?: (report: any, s: Sandbox) => void;
  /** Also check the --json pipeline contract (the catalog CLI's); false for a plain SliceRequest run. */
  piped?: boolean;
};

const noCalls = (report: any, s: Sandbox) => {
  assert.equal(report.model_calls, 0);
  assert.equal(s.claude.requests.length + s.gpt.requests.length, 0, "nothing was sent");
};

/** The classification ran once and its measurements are in the report. */
const classified = (report: any, s: Sandbox) => {
  assert.equal(s.gpt.requests.length, 1);
  assert.equal(report.model_calls, 1);
  assert.equal(report.phases.classification.requests, 1);
  assert.ok(report.phases.classification.request_bytes.max > 0);
  assert.equal(report.calls[0].phase, "classification");
  const usage = {
    input: FULL_OPENAI_USAGE.prompt_tokens - FULL_OPENAI_USAGE.prompt_tokens_details.cached_tokens,
    cache_read: FULL_OPENAI_USAGE.prompt_tokens_details.cached_tokens,
    cache_write: null,
    output: FULL_OPENAI_USAGE.completion_tokens,
  };
  assert.deepEqual(report.calls[0].usage, usage);
  assert.deepEqual(report.partial_usage, usage);
  assert.equal(report.final_usage, null);
};

/** A SliceRequest file for a plain `loom run` (no catalog): the bundled example with another model. */
function writeRequest(s: Sandbox, model: string): string {
  const slice = JSON.parse(readFileSync(resolve(ROOT, "testdata/example-request.json"), "utf8"));
  writeFileSync(join(s.dir, "request.json"), JSON.stringify({ ...slice, model, workspace: "ws" }));
  return "request.json";
}

const FAILURES: FailureCase[] = [
  {
    name: "an invalid catalog (a field of the wrong type)",
    args: (s) => {
      const catalog = exampleCatalog();
      catalog.slices["fix-tests"].test.timeout_ms = "30s";
      s.writeCatalog(catalog, "bad.json");
      return ["Fix the bug", "--catalog", "bad.json"];
    },
    line: /^loom run: Invalid catalog "bad\.json": slices\.fix-tests\.test\.timeout_ms: .*expected number/,
    outcome: "startup_failed",
    code: "catalog_invalid",
    check: noCalls,
  },
  {
    name: "an invalid catalog (an unknown key)",
    args: (s) => {
      const catalog = exampleCatalog();
      catalog.slices.explain.retries = 2;
      s.writeCatalog(catalog, "bad.json");
      return ["Fix the bug", "--catalog", "bad.json"];
    },
    line: /^loom run: Invalid catalog "bad\.json": slices\.explain\.retries: unknown key/,
    outcome: "startup_failed",
    code: "catalog_invalid",
    check: noCalls,
  },
  {
    name: "an invalid catalog (JSONC syntax)",
    args: (s) => {
      writeFileSync(join(s.dir, "broken.jsonc"), '{ "models": {},\n  "slices": {\n');
      return ["Fix the bug", "--catalog", "broken.jsonc"];
    },
    line: /^loom run: Invalid catalog "broken\.jsonc": line 3, column 1: /,
    outcome: "startup_failed",
    code: "catalog_invalid",
    check: noCalls,
  },
  {
    name: "an unreadable catalog (missing)",
    args: () => ["Fix the bug", "--catalog", "missing.jsonc"],
    line: /^loom run: Cannot read catalog "missing\.jsonc": no such file or folder$/,
    outcome: "startup_failed",
    code: "catalog_unreadable",
    check: noCalls,
  },
  {
    name: "an unreadable catalog (a directory)",
    args: () => ["Fix the bug", "--catalog", "ws"],
    line: /^loom run: Cannot read catalog "ws": it is a folder, not a file$/,
    outcome: "startup_failed",
    code: "catalog_unreadable",
    check: noCalls,
  },
  {
    name: "an unknown slice (--slice)",
    args: () => ["Fix the bug", "--catalog", EXAMPLE, "--workspace", "ws", "--slice", "deploy"],
    line: /^loom run: Unknown slice "deploy" \(the catalog has "fix-tests", "explain"\)$/,
    outcome: "startup_failed",
    code: "unknown_slice",
    check: noCalls,
  },
  {
    name: "an unknown model (a slice naming a model the catalog lacks)",
    args: (s) => {
      const catalog = exampleCatalog();
      catalog.slices.explain.model = "llama";
      s.writeCatalog(catalog);
      return ["What does truncateSlug do?", "--catalog", "catalog.json"];
    },
    line:
      /^loom run: Invalid catalog "catalog\.json": slices\.explain\.model: unknown model "llama" \(expected one of "claude", "gpt"\)$/,
    outcome: "startup_failed",
    code: "catalog_invalid",
    check: noCalls,
  },
  {
    name: "an unknown model provider in a SliceRequest (no catalog)",
    args: (s) => [writeRequest(s, "mistral/large")],
    line:
      /^loom run: Model "mistral\/large": expected PROVIDER\/MODEL with PROVIDER one of anthropic, openai, openai-compatible/,
    outcome: "startup_failed",
    code: "unknown_model",
    check: noCalls,
  },
  {
    name: "a missing credential variable for a SliceRequest (no catalog)",
    args: (s) => [writeRequest(s, "openai/gpt-4o-2024-08-06")],
    env: { OPENAI_API_KEY: undefined },
    line:
      /^loom run: Model "gpt-4o-2024-08-06" \(openai\) needs an API key: set the environment variable OPENAI_API_KEY$/,
    outcome: "startup_failed",
    code: "missing_credential",
    check: noCalls,
  },
  {
    name: "a missing credential variable",
    args: () => ["Fix the failing tests", "--catalog", EXAMPLE, "--workspace", "ws"],
    env: { ANTHROPIC_API_KEY: undefined },
    line:
      /^loom run: Model "claude-sonnet-5-5" \(anthropic\) needs an API key: set the environment variable ANTHROPIC_API_KEY$/,
    outcome: "startup_failed",
    code: "missing_credential",
    check: (report, s) => {
      noCalls(report, s);
      assert.equal(report.slice, "fix-tests", "routing had chosen the slice");
    },
  },
  {
    name: "a missing credential variable after classification ran",
    args: () => ["Make slugify handle accents", "--catalog", EXAMPLE, "--workspace", "ws"],
    env: { ANTHROPIC_API_KEY: "" },
    openai: () => openAIAnswer({ slice: "fix-tests" }),
    line: /needs an API key: set the environment variable ANTHROPIC_API_KEY$/,
    outcome: "startup_failed",
    code: "missing_credential",
    check: classified,
  },
  {
    name: "a missing workspace",
    args: () => ["Fix the bug", "--catalog", EXAMPLE, "--workspace", "nowhere"],
    line: /^loom run: Workspace ".*nowhere" is not a directory$/,
    outcome: "startup_failed",
    code: "workspace_missing",
    check: (report, s) => {
      noCalls(report, s);
      assert.equal(report.slice, "fix-tests");
    },
  },
  {
    name: "no route matched",
    args: (s) => {
      const catalog = exampleCatalog();
      delete catalog.routes.classification;
      delete catalog.routes.default;
      s.writeCatalog(catalog);
      return ["What does truncateSlug do?", "--catalog", "catalog.json"];
    },
    line: /^loom run: No route matched the request/,
    outcome: "routing_failed",
    code: "no_route",
    check: (report, s) => {
      noCalls(report, s);
      assert.equal(report.slice, null);
    },
  },
  {
    name: "a classification answer that is not a known slice",
    args: () => ["What does truncateSlug do?", "--catalog", EXAMPLE, "--workspace", "ws"],
    openai: () => openAIAnswer({ slice: "deploy" }),
    line:
      /^loom run: Classification chose "deploy", which is not a candidate slice \(expected one of "fix-tests", "explain"\)$/,
    outcome: "routing_failed",
    code: "classification_unknown_slice",
    check: (report, s) => {
      classified(report, s);
      // The report keeps only text Loom wrote; the classifier's answer is shown on stderr only.
      assert.ok(!report.error.message.includes("deploy"));
      assert.match(report.error.message, /not a candidate slice \(expected one of "fix-tests", "explain"\)$/);
    },
  },
  {
    name: "a classification request over the ceiling (bounded)",
    args: () => ["-", "--catalog", EXAMPLE, "--workspace", "ws"],
    stdin: `Please explain these slug rules: ${"the slug rules ".repeat(Math.ceil(CEILING_BYTES / 15))}`,
    line: /^loom run: Classification request is ([\d,]+) bytes, over the 65,536-byte ceiling of the bounded policy/,
    outcome: "routing_failed",
    code: "context_ceiling_exceeded",
    check: (report, s) => {
      noCalls(report, s);
      assert.equal(report.policy, "bounded");
      assert.equal(report.phases.classification.requests, 0);
    },
  },
];

for (const failure of FAILURES) {
  const pipedRule = failure.piped === false ? "" : "; with --json one JSON object on stdout";
  test(`${failure.name}: exit 3, one line on stderr, a ${failure.outcome} report${pipedRule}`, E2E, async (t) => {
    const s = await sandbox(t, { openai: failure.openai ?? [] });
    const args = failure.args(s);
    const options = { stdin: failure.stdin, env: failure.env };

    const quiet = await s.loom([...args, "--context-report", "report.json", "--quiet"], options);
    assert.equal(quiet.code, 3, quiet.stderr);
    assertOneLine(quiet.stderr, failure.line);
    assert.equal(quiet.stdout, "");
    for (const key of Object.values(KEYS)) assert.ok(!quiet.stderr.includes(key));
    const report = s.report();
    assert.equal(report.outcome, failure.outcome);
    assert.equal(report.error.code, failure.code);
    assert.ok(report.error.message.length > 0);
    failure.check?.(report, s);
    if (failure.code === "context_ceiling_exceeded") {
      const bytes = Number(failure.line.exec(quiet.stderr.trimEnd())![1].replaceAll(",", ""));
      assert.ok(bytes > CEILING_BYTES);
    }

    if (failure.piped === false) return;
    // Again in a pipeline: --json, progress not silenced. The one error line is still the only "loom run:" line,
    // stdout is one JSON object, and stderr carries no JSON.
    const piped = await s.loom([...args, "--context-report", "piped.json", "--json"], options);
    assert.equal(piped.code, 3, piped.stderr);
    assertNoJson(piped.stderr);
    const errorLines = lines(piped.stderr).filter((line) => !PROGRESS.test(line));
    assert.equal(errorLines.length, 1, `stderr: ${piped.stderr}`);
    assert.match(errorLines[0], failure.line);
    assert.equal(lines(piped.stdout).length, 1);
    const result = JSON.parse(piped.stdout);
    assert.equal(result.outcome, failure.outcome);
    assert.equal(result.exit_code, 3);
    assert.equal(result.error.code, failure.code);
    assert.equal(result.report_path, join(s.dir, "piped.json"));
    assert.equal(s.report("piped.json").outcome, failure.outcome);
  });
}

test(
  "a startup failure without a report path writes nothing and still ends with exit 3 and one line",
  E2E,
  async (t) => {
    const s = await sandbox(t);
    const run = await s.loom(["Fix the bug", "--catalog", EXAMPLE, "--workspace", "ws", "--slice", "deploy"]);
    assert.equal(run.code, 3);
    assertOneLine(run.stderr, /^loom run: Unknown slice "deploy"/);
    assert.ok(!existsSync(join(s.dir, "report.json")));
  },
);

// ---- interruption ----

// The slow test command writes its pid, starts a grandchild in its process group that writes its own pid and shares
// its output pipes, then waits a minute. Loom must kill both when interrupted.
const SLOW_TEST = `
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
writeFileSync("test.pid", String(process.pid));
const grandchild = spawn(process.execPath, ["-e", "require('fs').writeFileSync('grandchild.pid', String(process.pid)); setTimeout(() => {}, 60000)"], { stdio: "inherit" });
setTimeout(() => {}, 60000);
`;

function slowCatalog(): Record<string, any> {
  const catalog = exampleCatalog();
  catalog.slices["slow-tests"] = {
    description: "Run the slow test suite",
    intent: "{{request}}",
    instructions: "Run the tests, then finish.",
    actions: ["run_tests", "finish"],
    test: { command: ["node", "slow-test.mjs"], timeout_ms: 300_000 },
    model: "claude",
    limits: { max_steps: 3 },
  };
  catalog.routes.rules.unshift({ pattern: "slow", slice: "slow-tests" });
  return catalog;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  test(
    `${signal} during a slow test command: exit 130, an interrupted report, no child process left`,
    E2E,
    async (t) => {
      const s = await sandbox(t, {
        anthropic: [anthropicAnswer({ action: "run_tests", reason: "Run the slow suite" })],
      });
      writeFileSync(join(s.workspace, "slow-test.mjs"), SLOW_TEST);
      s.writeCatalog(slowCatalog());
      // A pid file may exist before its content is written: only a whole positive number counts.
      const readPid = (name: string) => {
        const text = existsSync(join(s.workspace, name)) ? readFileSync(join(s.workspace, name), "utf8") : "";
        return /^[1-9]\d*$/.test(text) ? Number(text) : null;
      };
      const pids: number[] = [];
      const loom = startLoom([
        "run",
        "Run the slow suite",
        "--catalog",
        "catalog.json",
        "--context-report",
        "report.json",
        "--json",
      ], {
        cwd: s.dir,
        env: s.env,
      });
      t.after(() => {
        for (const pid of [loom.pid, ...pids]) {
          try {
            if (isAlive(pid)) process.kill(pid, "SIGKILL");
          } catch { /* already gone */ }
        }
      });
      await waitFor(() => readPid("test.pid") !== null && readPid("grandchild.pid") !== null, {
        what: "the slow test command to start",
      });
      pids.push(hostPid(readPid("test.pid")!, s.workspace), hostPid(readPid("grandchild.pid")!, s.workspace));
      for (const pid of pids) assert.ok(isAlive(pid), "the test command is running");

      process.kill(loom.pid, signal);
      const run = await loom.done;
      assert.equal(run.code, 130, `stderr: ${run.stderr}\nstdout: ${run.stdout}`);
      assert.equal(run.signal, null, "Loom exits by itself, not by the signal");
      // Loom killed the whole process group. A killed process may still be on its way out when Loom exits (the kernel
      // and its new parent finish the job); one that was never killed would run for a minute.
      try {
        await waitFor(() => pids.every((pid) => !isAlive(pid)), {
          what: "the killed processes to end",
          limitMs: 30_000, // unkilled, they would run a minute: not a speed measure
        });
      } catch {
        assert.fail(`processes left running: ${pids.filter(isAlive).join(", ")}`);
      }

      assert.match(lines(run.stderr).at(-1)!, /^loom run: Interrupted/);
      assert.equal(lines(run.stderr).filter((line) => line.startsWith("loom run:")).length, 1);
      const result = JSON.parse(run.stdout);
      assert.equal(result.outcome, "interrupted");
      assert.equal(result.exit_code, 130);
      assert.equal(result.slice, "slow-tests");
      const report = s.report();
      assert.equal(report.outcome, "interrupted");
      assert.equal(report.error.code, "interrupted");
      assert.equal(report.slice, "slow-tests");
      assert.equal(report.model_calls, 1);
      assert.equal(report.partial_usage.input, 2095, "usage observed before the interrupt");
      assert.equal(report.final_usage, null);
    },
  );
}
