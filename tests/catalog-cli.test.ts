// loom run --catalog through main(): routed runs against local provider-shaped servers, and every startup and
// routing failure ending with exit 3, one stderr line and a context report with the right outcome.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../main.ts";
import { CEILING_BYTES } from "../lib/context/budget.ts";
import { parseJsonc } from "../lib/catalog/catalog.ts";
import {
  anthropicAnswer,
  openAIAnswer,
  openAIError,
  type ScriptedResponse,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const EXAMPLE = resolve(ROOT, "testdata/catalog/example.jsonc");
const PROJECT = resolve(ROOT, "testdata/example-project");

type Run = { code: number; out: string; err: string };

/** A temp dir with a copy of the example project; removed (with any servers) when the test ends. */
async function sandbox(
  t: { after: (fn: () => unknown) => void },
  { anthropic = [], openai = [] }: {
    anthropic?: ScriptedResponse[];
    openai?: ScriptedResponse[] | ((i: number) => ScriptedResponse);
  } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), "loom-catalog-"));
  const workspace = join(dir, "ws");
  cpSync(PROJECT, workspace, { recursive: true });
  const claude = await startAnthropicServer(anthropic);
  const gpt = await startOpenAIServer(typeof openai === "function" ? (_r, i) => openai(i) : openai);
  t.after(async () => {
    await claude.close();
    await gpt.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env: Record<string, string | undefined> = {
    ANTHROPIC_API_KEY: "test-anthropic-key",
    ANTHROPIC_BASE_URL: claude.baseUrl,
    OPENAI_API_KEY: "test-openai-key",
    OPENAI_BASE_URL: gpt.baseUrl,
  };
  const report = join(dir, "report.json");
  const loom = async (
    args: string[],
    { stdin = "", signal = new AbortController().signal, envOverride = {} }: {
      stdin?: string;
      signal?: AbortSignal;
      envOverride?: Record<string, string | undefined>;
    } = {},
  ): Promise<Run> => {
    const { io, out } = fakeIo({ cwd: dir, env: { ...env, ...envOverride }, stdin, signal });
    const code = await main(["run", ...args], io);
    return { code, out: out.stdout, err: out.stderr };
  };
  const readReport = (path = report) => JSON.parse(readFileSync(path, "utf8"));
  const writeCatalog = (value: unknown, name = "catalog.json") => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value, null, 2));
    return path;
  };
  return { dir, workspace, report, claude, gpt, loom, readReport, writeCatalog };
}

/** The example catalog's content, for variants written to a temp dir. */
function exampleCatalog(): Record<string, any> {
  const parsed = parseJsonc(readFileSync(EXAMPLE, "utf8"));
  assert.ok(parsed.ok);
  const { $schema: _, ...catalog } = parsed.value as Record<string, any>;
  return catalog;
}

function assertOneLine(err: string, pattern: RegExp) {
  assert.equal(err.split("\n").filter(Boolean).length, 1, `expected one stderr line, got: ${err}`);
  assert.ok(err.endsWith("\n"));
  assert.match(err.trimEnd(), pattern);
}

test("a pattern-routed run completes against the Anthropic-shaped server, with the catalog's defaults", async (t) => {
  const s = await sandbox(t, {
    anthropic: [
      anthropicAnswer({ action: "read_file" }),
      anthropicAnswer({ path: "src/slug.mjs" }),
      anthropicAnswer({ action: "finish" }),
      anthropicAnswer({ status: "success", summary: "Read slugify; the fix is clear." }),
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
    "--json",
  ]);
  assert.equal(run.code, 0, run.err);
  const result = JSON.parse(run.out);
  assert.equal(result.outcome, "completed");
  assert.equal(result.exit_code, 0);
  assert.equal(result.slice, "fix-tests");
  assert.equal(result.summary, "Read slugify; the fix is clear.");
  assert.deepEqual(result.route, { via: "pattern", rule: 0 });
  assert.equal(result.report_path, s.report);
  assert.match(run.err, /^route: fix-tests \(pattern rule 1\)$/m);
  assert.equal(s.gpt.requests.length, 0, "a pattern match makes no classification call");
  assert.equal(s.claude.requests.length, 4);
  // The intent template got the request text.
  assert.ok(
    s.claude.requests[0].rawBody.includes(
      "Fix the failing slugify tests\\n\\nThe change is done when every test in test.mjs passes.",
    ),
  );
  const report = s.readReport();
  assert.equal(report.outcome, "completed");
  assert.equal(report.slice, "fix-tests");
  assert.equal(report.policy, "bounded", "policy from the catalog's defaults");
  assert.equal(report.phases.classification.requests, 0);
});

test("a classification-routed run from stdin with --json: stdout is one JSON object, progress only on stderr", async (t) => {
  const s = await sandbox(t, {
    openai: [
      openAIAnswer({ slice: "explain" }),
      openAIAnswer({ action: "print" }),
      openAIAnswer({ text: "truncateSlug shortens a slug at a hyphen." }),
      openAIAnswer({ action: "finish" }),
      openAIAnswer({ status: "success", summary: "Answered." }),
    ],
  });
  const run = await s.loom(
    [
      "-",
      "--catalog",
      EXAMPLE,
      "--workspace",
      "ws",
      "--context-policy",
      "legacy",
      "--context-report",
      "report.json",
      "--json",
    ],
    { stdin: "What does truncateSlug do?\n" },
  );
  assert.equal(run.code, 0, run.err);
  assert.equal(run.out.trim().split("\n").length, 1);
  const result = JSON.parse(run.out);
  assert.equal(result.outcome, "completed");
  assert.equal(result.slice, "explain");
  assert.deepEqual(result.route, { via: "classification", rule: null });
  assert.deepEqual(result.printed, ["truncateSlug shortens a slug at a hyphen."]);
  assert.ok(!run.err.includes("{"), `stderr carries no JSON: ${run.err}`);
  assert.match(run.err, /^classification [\d,]+ B \(2 candidate slices\)$/m);
  assert.match(run.err, /^route: explain \(classification\)$/m);

  // The classification request went to the classifier model with the candidates and a slice enum.
  const first = s.gpt.requests[0].body as any;
  assert.equal(first.model, "gpt-4.1-mini");
  assert.ok(s.gpt.requests[0].rawBody.includes("Answer a question about the code without changing anything"));
  assert.ok(s.gpt.requests[0].rawBody.includes("What does truncateSlug do?"));
  assert.ok(JSON.stringify(first.response_format).includes(`"fix-tests"`));

  const report = s.readReport();
  assert.equal(report.policy, "legacy", "the flag overrides the catalog");
  assert.equal(report.phases.classification.requests, 1);
  assert.ok(report.phases.classification.request_bytes.total > 0);
  assert.equal(report.calls[0].phase, "classification");
  assert.equal(report.model_calls, 5);
});

test("paths in a catalog are relative to the catalog file; --slice skips routing", async (t) => {
  const s = await sandbox(t, {
    openai: [openAIAnswer({ action: "finish" }), openAIAnswer({ status: "success", summary: "Nothing to do." })],
  });
  const catalog = exampleCatalog();
  catalog.defaults = { workspace: "../ws", context_report: "reports/run.json" };
  mkdirSync(join(s.dir, "conf"));
  s.writeCatalog(catalog, "conf/catalog.json");
  const run = await s.loom(["Fix the bug", "--catalog", "conf/catalog.json", "--slice", "explain"]);
  assert.equal(run.code, 0, run.err);
  assert.match(run.out, /^run explain: completed \(success\) after 1 step/);
  assert.match(run.out, /report: .*conf[\\/]reports[\\/]run\.json/);
  assert.match(run.err, /^route: explain \(--slice\)$/m);
  assert.equal(s.claude.requests.length, 0, "the pattern rule for fix-tests was not consulted");
  const report = s.readReport(join(s.dir, "conf/reports/run.json"));
  assert.equal(report.outcome, "completed");
  assert.equal(report.slice, "explain");
});

test("an invalid catalog: exit 3, one line naming the file and field path, report startup_failed", async (t) => {
  const s = await sandbox(t);
  const catalog = exampleCatalog();
  catalog.slices["fix-tests"].test.timeout_ms = "30s";
  s.writeCatalog(catalog, "bad.json");
  const run = await s.loom(["fix it", "--catalog", "bad.json", "--context-report", "report.json", "--quiet"]);
  assert.equal(run.code, 3);
  assertOneLine(
    run.err,
    /^loom run: Invalid catalog "bad\.json": slices\.fix-tests\.test\.timeout_ms: .*expected number/,
  );
  assert.equal(run.out, "");
  const report = s.readReport();
  assert.equal(report.outcome, "startup_failed");
  assert.equal(report.error.code, "catalog_invalid");
});

test("an unreadable catalog: exit 3 and a startup_failed report", async (t) => {
  const s = await sandbox(t);
  const run = await s.loom(["fix it", "--catalog", "missing.jsonc", "--context-report", "report.json"]);
  assert.equal(run.code, 3);
  assertOneLine(run.err, /^loom run: Cannot read catalog "missing\.jsonc": no such file or folder$/);
  assert.equal(s.readReport().outcome, "startup_failed");
  assert.equal(s.readReport().error.code, "catalog_unreadable");
});

test("an unknown model reference is caught when the catalog loads", async (t) => {
  const s = await sandbox(t);
  const catalog = exampleCatalog();
  catalog.slices.explain.model = "llama";
  s.writeCatalog(catalog);
  const run = await s.loom(["explain it", "--catalog", "catalog.json", "--context-report", "report.json"]);
  assert.equal(run.code, 3);
  assertOneLine(run.err, /slices\.explain\.model: unknown model "llama" \(expected one of "claude", "gpt"\)/);
  assert.equal(s.readReport().outcome, "startup_failed");
});

test("an unknown --slice: exit 3, report at the catalog's default path (relative to the catalog file)", async (t) => {
  const s = await sandbox(t);
  const catalog = exampleCatalog();
  catalog.defaults = { workspace: "ws", context_report: "reports/last.json" };
  s.writeCatalog(catalog);
  const run = await s.loom(["do it", "--catalog", "catalog.json", "--slice", "deploy"]);
  assert.equal(run.code, 3);
  assertOneLine(run.err, /^loom run: Unknown slice "deploy" \(the catalog has "fix-tests", "explain"\)$/);
  const report = s.readReport(join(s.dir, "reports/last.json"));
  assert.equal(report.outcome, "startup_failed");
  assert.equal(report.error.code, "unknown_slice");
  assert.equal(report.policy, "legacy");
});

test("a missing credential variable: exit 3, the variable named, no request sent, report startup_failed for the slice", async (t) => {
  const s = await sandbox(t);
  const run = await s.loom(
    ["Fix the bug in slugify", "--catalog", EXAMPLE, "--workspace", "ws", "--context-report", "report.json", "--quiet"],
    { envOverride: { ANTHROPIC_API_KEY: undefined } },
  );
  assert.equal(run.code, 3);
  assertOneLine(run.err, /^loom run: .*set the environment variable ANTHROPIC_API_KEY$/);
  assert.equal(s.claude.requests.length, 0);
  const report = s.readReport();
  assert.equal(report.outcome, "startup_failed");
  assert.equal(report.error.code, "missing_credential");
  assert.equal(report.slice, "fix-tests");
});

test("a missing credential for the classifier fails before classification", async (t) => {
  const s = await sandbox(t);
  const run = await s.loom(
    ["Summarise the README", "--catalog", EXAMPLE, "--context-report", "report.json", "--quiet"],
    {
      envOverride: { OPENAI_API_KEY: "" },
    },
  );
  assert.equal(run.code, 3);
  assertOneLine(run.err, /OPENAI_API_KEY/);
  assert.equal(s.gpt.requests.length, 0);
  assert.equal(s.readReport().error.code, "missing_credential");
});

test("a missing workspace: exit 3 and a startup_failed report; also when the catalog names none", async (t) => {
  const s = await sandbox(t);
  const run = await s.loom([
    "x",
    "--catalog",
    EXAMPLE,
    "--slice",
    "explain",
    "--workspace",
    "nope",
    "--context-report",
    "report.json",
    "--quiet",
  ]);
  assert.equal(run.code, 3);
  assertOneLine(run.err, /^loom run: Workspace ".*nope" is not a directory$/);
  const report = s.readReport();
  assert.equal(report.outcome, "startup_failed");
  assert.equal(report.error.code, "workspace_missing");
  assert.equal(report.slice, "explain");

  const catalog = exampleCatalog();
  delete catalog.defaults;
  s.writeCatalog(catalog);
  const none = await s.loom([
    "x",
    "--catalog",
    "catalog.json",
    "--slice",
    "explain",
    "--context-report",
    "none.json",
    "--quiet",
  ]);
  assert.equal(none.code, 3);
  assertOneLine(
    none.err,
    /^loom run: Slice "explain" names no workspace: set "workspace" in the catalog or pass --workspace DIR$/,
  );
  assert.equal(s.readReport(join(s.dir, "none.json")).error.code, "workspace_missing");
});

test("no route matched: exit 3 and a routing_failed report", async (t) => {
  const s = await sandbox(t);
  const catalog = exampleCatalog();
  delete catalog.routes.classification;
  delete catalog.routes.default;
  s.writeCatalog(catalog);
  const run = await s.loom([
    "What does truncateSlug do?",
    "--catalog",
    "catalog.json",
    "--context-report",
    "report.json",
  ]);
  assert.equal(run.code, 3);
  assertOneLine(run.err, /^loom run: No route matched the request/);
  const report = s.readReport();
  assert.equal(report.outcome, "routing_failed");
  assert.equal(report.error.code, "no_route");
  assert.equal(report.slice, null);
});

test("a classification answer that is not a known slice: exit 3, routing_failed, with the classification measured", async (t) => {
  const s = await sandbox(t, { openai: [openAIAnswer({ slice: "deploy" })] });
  const run = await s.loom([
    "What does truncateSlug do?",
    "--catalog",
    EXAMPLE,
    "--context-report",
    "report.json",
    "--quiet",
  ]);
  assert.equal(run.code, 3);
  assertOneLine(run.err, /^loom run: Classification chose "deploy", which is not a candidate slice/);
  const report = s.readReport();
  assert.equal(report.outcome, "routing_failed");
  assert.equal(report.error.code, "classification_unknown_slice");
  assert.equal(report.phases.classification.requests, 1);
  assert.ok(report.phases.classification.request_bytes.max > 0);
  assert.equal(report.model_calls, 1);
  // The classification call's usage: 2,006 prompt tokens of which 1,920 were cached.
  assert.equal(report.usage.input, 86, "provider-reported usage of the classification call");
  assert.equal(report.partial_usage.input, 86);
});

test("a classification over the ceiling under the bounded policy: exit 3, routing_failed, nothing sent", async (t) => {
  const s = await sandbox(t);
  const request = "Please explain: " + "the slug rules ".repeat(Math.ceil(CEILING_BYTES / 15));
  const run = await s.loom(["-", "--catalog", EXAMPLE, "--context-report", "report.json", "--quiet"], {
    stdin: request,
  });
  assert.equal(run.code, 3);
  assertOneLine(run.err, /^loom run: Classification request is [\d,]+ bytes, over the 65,536-byte ceiling/);
  assert.equal(s.gpt.requests.length, 0);
  const report = s.readReport();
  assert.equal(report.outcome, "routing_failed");
  assert.equal(report.error.code, "context_ceiling_exceeded");
  assert.equal(report.policy, "bounded");
  assert.equal(report.model_calls, 0);
});

test("a classification call the server rejects is a routing failure (exit 3)", async (t) => {
  const s = await sandbox(t, {
    openai: [openAIError(400, { type: "invalid_request_error", message: "Unsupported model" })],
  });
  const run = await s.loom([
    "What does truncateSlug do?",
    "--catalog",
    EXAMPLE,
    "--context-report",
    "report.json",
    "--quiet",
  ]);
  assert.equal(run.code, 3);
  assertOneLine(run.err, /^loom run: Classification call failed: .*Unsupported model/);
  const report = s.readReport();
  assert.equal(report.error.code, "classification_failed");
  // The failed call is measured: one request of the classification's size, usage unknown (null, not 0).
  assert.equal(report.model_calls, 1);
  assert.equal(report.phases.classification.requests, 1);
  assert.equal(s.gpt.requests.length, 1);
  assert.ok(report.calls[0].request_bytes > 0);
  assert.equal(report.phases.classification.request_bytes.total, report.calls[0].request_bytes);
  assert.deepEqual(report.calls[0].usage, { input: null, cache_read: null, cache_write: null, output: null });
  assert.equal(report.usage.input, null);
});

test("with --json a startup or routing failure still prints one JSON result object on stdout", async (t) => {
  const s = await sandbox(t, { openai: [openAIAnswer({ slice: "deploy" })] });
  const run = await s.loom([
    "What does truncateSlug do?",
    "--catalog",
    EXAMPLE,
    "--context-report",
    "report.json",
    "--json",
    "--quiet",
  ]);
  assert.equal(run.code, 3);
  const result = JSON.parse(run.out);
  assert.equal(result.outcome, "routing_failed");
  assert.equal(result.exit_code, 3);
  assert.equal(result.slice, null);
  assert.equal(result.error.code, "classification_unknown_slice");
  assert.equal(result.report_path, s.report);
  assert.equal(result.model_calls, 1);
  assertOneLine(run.err, /^loom run: Classification chose/);
});

test("without a report path nothing is written, and the failure is still exit 3 with one line", async (t) => {
  const s = await sandbox(t);
  const run = await s.loom(["x", "--catalog", EXAMPLE, "--slice", "nope"]);
  assert.equal(run.code, 3);
  assertOneLine(run.err, /Unknown slice "nope"/);
  assert.ok(!existsSync(s.report));
});

test("an interrupt during classification ends with exit 130 and an interrupted report", async (t) => {
  const s = await sandbox(t, { openai: [{ hang: true }] });
  const controller = new AbortController();
  const running = s.loom([
    "What does truncateSlug do?",
    "--catalog",
    EXAMPLE,
    "--context-report",
    "report.json",
    "--quiet",
  ], {
    signal: controller.signal,
  });
  while (s.gpt.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
  controller.abort();
  const run = await running;
  assert.equal(run.code, 130);
  assertOneLine(run.err, /^loom run: Interrupted/);
  const report = s.readReport();
  assert.equal(report.outcome, "interrupted");
  assert.equal(report.error.code, "interrupted");
});

test("usage errors: no request, an empty request, a bad policy (exit 2, no report)", async (t) => {
  const s = await sandbox(t);
  for (
    const [args, stdin, pattern] of [
      [["--catalog", EXAMPLE], "", /Expected one REQUEST/],
      [["-", "--catalog", EXAMPLE], "  \n", /The request is empty/],
      [
        ["x", "--catalog", EXAMPLE, "--context-policy", "tight"],
        "",
        /--context-policy "tight": expected legacy or bounded/,
      ],
    ] as const
  ) {
    const run = await s.loom([...args, "--context-report", "report.json"], { stdin });
    assert.equal(run.code, 2);
    assertOneLine(run.err, pattern);
  }
  assert.ok(!existsSync(s.report));
});
