// End to end through the real binary: `dist/loom run` fixes the bundled example project against local servers that
// speak the Anthropic Messages, OpenAI Chat Completions and OpenAI Responses wire formats (Chat Completions also as an
// OpenAI-compatible local server, configured through a catalog), and reject what the real APIs reject (a forced tool
// on Claude Sonnet 5.5, identical first keys in a strict union, a Responses-only model on Chat Completions). The servers act like a model that fixes the bug (read the file, run the
// tests, edit as testdata/workflows/fix-bug.jsonl does, test again, print, finish), deciding from what each request
// shows, and answer with bodies shaped like the APIs' documented responses.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  anthropicAnswer,
  type FakeProviderServer,
  openAIAnswer,
  type ReceivedRequest,
  type ScriptedResponse,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";
import { lines, ROOT, runLoom } from "./helpers/binary.ts";

const PROJECT = resolve(ROOT, "testdata/example-project");
const EXAMPLE_REQUEST = resolve(ROOT, "testdata/example-request.json");
const FIX_BUG = resolve(ROOT, "testdata/workflows/fix-bug.jsonl");
const CEILING_BYTES = 65_536;
const E2E = { timeout: 600_000 };

/** "local": an OpenAI-compatible server (Ollama, vLLM, llama.cpp) that reports no cached tokens and needs no key.
 * "responses": OpenAI's Responses API, which the model table picks for GPT-5.6 (named by its alias, gpt-5.6). */
type Wire = "anthropic" | "openai" | "responses" | "local";
const WIRES: Wire[] = ["anthropic", "openai", "responses", "local"];
const NAMES: Record<Wire, string> = {
  anthropic: "Anthropic",
  openai: "OpenAI",
  responses: "OpenAI Responses",
  local: "OpenAI-compatible local",
};
/** The model the run names (PROVIDER/ is the wire's). */
const MODEL_IDS: Record<Wire, string> = {
  anthropic: "claude-sonnet-5-5",
  openai: "gpt-4o-2024-08-06",
  responses: "gpt-5.6",
  local: "qwen2.5-coder:7b",
};
/** The id on the wire: the table's own id for an alias. */
const WIRE_IDS: Record<Wire, string> = { ...MODEL_IDS, responses: "gpt-5.6-sol" };
/** Keys in the environment; the local server is configured without one, so OPENAI_API_KEY must not reach it. */
const KEYS: Record<Wire, string> = {
  anthropic: "sk-ant-e2e-SECRET-4f1d9c",
  openai: "sk-proj-e2e-SECRET-8b20aa",
  responses: "sk-proj-e2e-SECRET-77c3e1",
  local: "sk-proj-e2e-SECRET-unused",
};

type Usage = { input: number | null; cache_read: number | null; cache_write: number | null; output: number | null };

// ---- the scripted model ----

/** The edit_file arguments of the recorded workflow, in order: what a model that fixes the bug writes. */
function recordedEdits(): Record<string, string>[] {
  return readFileSync(FIX_BUG, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.type === "execution" && entry.action === "edit_file")
    .map((entry) => entry.args);
}

/**
 * The prompt text of a request body, whichever wire: every section / message, in order. Anthropic (and the Responses
 * API for GPT-5.6 and later) send the events one block per event (for the cache breakpoint), so blocks that do not
 * start a section are joined back on.
 */
function promptText(wire: Wire, body: any): string {
  if (wire === "anthropic") {
    const blocks = [...(body.system ?? []), ...body.messages.flatMap((m: any) => m.content)];
    return blocks.map((b: any, i: number) => (i > 0 && b.text.startsWith("## ") ? "\n" : "") + b.text).join("");
  }
  // GPT-5.6 and later also get the events one part per event (for prompt_cache_breakpoint): joined back on the same way.
  if (wire === "responses") {
    const parts = body.input.flatMap((m: any) => m.content.map((c: any) => c.text));
    return parts.map((t: string, i: number) => (i > 0 && (t.startsWith("## ") || t === "Answer now.") ? "\n" : "") + t)
      .join("");
  }
  return body.messages.map((m: any) => m.content).join("\n");
}

/** The response schema as the API got it (inside the {answer: …} wrapper): Anthropic's output_config.format (what
 * the table says Sonnet 5.5 takes), the Responses API's text.format, Chat Completions' response_format. */
function wrappedSchema(wire: Wire, body: any): any {
  if (wire === "anthropic") return body.output_config.format.schema;
  if (wire === "responses") return body.text.format.schema;
  return body.response_format.json_schema.schema;
}

function answerSchema(wire: Wire, body: any): any {
  return wrappedSchema(wire, body).properties.answer;
}

/** Structured sections render as "## Label\n<one line of JSON>". */
function section(text: string, label: string): any {
  const start = text.indexOf(`## ${label}\n`);
  if (start === -1) return null;
  const from = start + label.length + 4;
  const end = text.indexOf("\n", from);
  return JSON.parse(text.slice(from, end === -1 ? undefined : end));
}

/**
 * Decides like a model that fixes the example project, from the request alone: read the file, run the tests, look the
 * faulty lines up once, make the recorded edits one by one while the tests fail on the latest revision, then print
 * and finish.
 */
function fixerAnswer(wire: Wire, body: any, edits: Record<string, string>[]): unknown {
  const text = promptText(wire, body);
  const candidates = section(text, "Candidates");
  // A single-call step: the selection this model would make, with the arguments it would give for it.
  if (typeof candidates.task === "string" && candidates.task.startsWith("Step:")) {
    const chosen = decide(wire, body, text, edits, candidates) as Record<string, unknown>;
    if (typeof chosen.action !== "string" || chosen.action === "run_tests") return chosen;
    const args = decide(wire, body, text, edits, { action: chosen.action });
    return { ...chosen, args };
  }
  return decide(wire, body, text, edits, candidates);
}

function decide(wire: Wire, body: any, text: string, edits: Record<string, string>[], candidates: any): unknown {
  const state = section(text, "Working state");
  const events: any[] = section(text, "Events (oldest first)") ?? [];
  // What it has read it remembers from the events (working state lists only the few most recent artifacts).
  const read = events.find((e) => e.action === "read_file" && e.args.path === "src/slug.mjs");
  if (candidates.action === undefined) {
    if (!read) return { action: "read_file", reason: "See how slugify builds the slug" };
    // While the test's event is in the tail the working state names it by step; the event shows the revision.
    const lastTest = state.last_test === undefined
      ? null
      : "step" in state.last_test
      ? events.find((e) => e.step === state.last_test.step)
      : state.last_test;
    if (lastTest == null || lastTest.revision !== state.latest_revision) {
      return { action: "run_tests", reason: "Test the latest revision" };
    }
    if (!state.tests_current) {
      if (candidates.lookups_used === 0 && state.latest_revision === "r0") {
        // The lookup key as this API's schema spells it ("$result", or an alias where "$" is not allowed).
        const key = answerSchema(wire, body).anyOf.flatMap((s: any) => Object.keys(s.properties ?? {})).find((
          k: string,
        ) => /^\W?_?result$/.test(k));
        return { [key]: `${read.result.ref}#lines=2-6` };
      }
      return { action: "edit_file", reason: "Change the slug separators" };
    }
    if (!events.some((e) => e.action === "print")) return { action: "print", reason: "Tell the user what changed" };
    return { action: "finish", reason: "The tests pass on the latest revision" };
  }
  switch (candidates.action) {
    case "read_file":
      return { path: "src/slug.mjs" };
    case "edit_file":
      return edits[Number(state.latest_revision.slice(1))];
    case "print":
      return { text: "slugify now collapses separators and trims them at both ends." };
    case "finish":
      return {
        status: "success",
        summary: "Fixed slugify: separators collapse to one hyphen and are trimmed at both ends.",
      };
    default:
      throw new Error(`The scripted model has no arguments for ${JSON.stringify(candidates.action)}`);
  }
}

/**
 * Usage as each API reports it, different per call. Anthropic never sends cache writes; OpenAI reports cached tokens
 * from the second call on; the local server reports none.
 */
function wireUsage(wire: Wire, i: number): Record<string, unknown> {
  // GPT-5.6 reports the tokens it wrote to the cache, and bills them (the prompt-caching guide).
  if (wire === "responses") {
    const prompt = 1500 + 23 * i;
    const details = i === 0
      ? { cached_tokens: 0, cache_write_tokens: 1024 }
      : { cached_tokens: 1024, cache_write_tokens: 23 };
    return {
      prompt_tokens: prompt,
      completion_tokens: 30 + i,
      total_tokens: prompt + 30 + i,
      prompt_tokens_details: details,
    };
  }
  if (wire === "anthropic") {
    return {
      input_tokens: 310 + 17 * i,
      cache_read_input_tokens: i === 0 ? 0 : 1024 + i,
      output_tokens: 21 + i,
      service_tier: "standard",
    };
  }
  const prompt = 1500 + 23 * i;
  // Local servers report prompt and completion tokens only.
  if (wire === "local") return { prompt_tokens: prompt, completion_tokens: 30 + i, total_tokens: prompt + 30 + i };
  const completion = 30 + 2 * i;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(i === 0 ? {} : { prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 } }),
  };
}

/** The four counters a report should show for one call's usage as sent. */
function expectedUsage(wire: Wire, u: any): Usage {
  if (wire === "anthropic") {
    return {
      input: u.input_tokens ?? null,
      cache_read: u.cache_read_input_tokens ?? null,
      cache_write: u.cache_creation_input_tokens ?? null,
      output: u.output_tokens ?? null,
    };
  }
  // OpenAI's prompt_tokens includes the cached and the written tokens; Loom's input includes neither.
  const details = u.prompt_tokens_details ?? {};
  return {
    input: u.prompt_tokens === undefined
      ? null
      : u.prompt_tokens - (details.cached_tokens ?? 0) - (details.cache_write_tokens ?? 0),
    cache_read: details.cached_tokens ?? null,
    cache_write: details.cache_write_tokens ?? null,
    output: u.completion_tokens ?? null,
  };
}

function sumUsage(all: Usage[]): Usage {
  const add = (k: keyof Usage) => (all.every((u) => u[k] === null) ? null : all.reduce((s, u) => s + (u[k] ?? 0), 0));
  return { input: add("input"), cache_read: add("cache_read"), cache_write: add("cache_write"), output: add("output") };
}

// ---- a run in a sandbox ----

type Sandbox = {
  dir: string;
  workspace: string;
  /** What `loom run` gets: a SliceRequest file, or the catalog and request text for the local server. */
  runArgs: string[];
  server: FakeProviderServer;
  /** Usage bodies the server sent, one per call. */
  sent: Record<string, unknown>[];
  env: Record<string, string>;
  loom: (args: string[]) => ReturnType<typeof runLoom>;
  freshCopy: (name: string) => string;
};

async function sandbox(t: { after: (fn: () => unknown) => void }, wire: Wire): Promise<Sandbox> {
  const dir = mkdtempSync(join(tmpdir(), `loom-e2e-${wire}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const freshCopy = (name: string) => {
    const path = join(dir, name);
    cpSync(PROJECT, path, { recursive: true });
    return path;
  };
  const workspace = freshCopy("ws");
  const edits = recordedEdits();
  const sent: Record<string, unknown>[] = [];
  const respond = (request: ReceivedRequest, i: number): ScriptedResponse => {
    const usage = wireUsage(wire, i);
    sent.push(usage);
    const value = fixerAnswer(wire, request.body, edits);
    return wire === "anthropic"
      ? anthropicAnswer(value, { usage, model: MODEL_IDS.anthropic })
      : openAIAnswer(value, { usage });
  };
  const server = await (wire === "anthropic" ? startAnthropicServer(respond) : startOpenAIServer(respond));
  t.after(() => server.close());
  // The bundled example request; for OpenAI the same slice with an openai/ model; for the local server the same slice
  // in a catalog, since only a catalog can give an openai-compatible model its base_url.
  const slice = JSON.parse(readFileSync(EXAMPLE_REQUEST, "utf8"));
  let runArgs = [EXAMPLE_REQUEST];
  if (wire === "openai" || wire === "responses") {
    const request = join(dir, "request.json");
    writeFileSync(request, JSON.stringify({ ...slice, model: `openai/${MODEL_IDS[wire]}` }, null, 2));
    runArgs = [request];
  } else if (wire === "local") {
    const { intent, workspace: _, model: __, $schema: ___, ...rest } = slice;
    const catalog = {
      models: { local: { kind: "openai-compatible", model: MODEL_IDS.local, base_url: server.baseUrl } },
      slices: { "fix-slug": { description: "Fix the slug library", intent: "{{request}}", ...rest, model: "local" } },
    };
    writeFileSync(join(dir, "catalog.json"), JSON.stringify(catalog, null, 2));
    runArgs = ["--catalog", "catalog.json", "--slice", "fix-slug", intent];
  }
  const env: Record<string, string> = wire === "anthropic"
    ? { ANTHROPIC_API_KEY: KEYS.anthropic, ANTHROPIC_BASE_URL: server.baseUrl }
    : wire === "openai" || wire === "responses"
    ? { OPENAI_API_KEY: KEYS[wire], OPENAI_BASE_URL: server.baseUrl }
    : { OPENAI_API_KEY: KEYS.local, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" };
  return { dir, workspace, runArgs, server, sent, env, loom: (args) => runLoom(args, { cwd: dir, env }), freshCopy };
}

/** Runs the example slice in the sandbox's workspace with the bounded policy. */
function runExample(s: Sandbox, extra: string[] = []) {
  return s.loom([
    "run",
    ...s.runArgs,
    "--workspace",
    s.workspace,
    "--context-policy",
    "bounded",
    "--context-report",
    "report.json",
    "--json",
    ...extra,
  ]);
}

function nodeTest(workspace: string): number | null {
  return spawnSync("node", ["test.mjs"], { cwd: workspace, encoding: "utf8" }).status;
}

function readJson(path: string): any {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** stderr of a run: only plain progress lines, no JSON, no key. */
function assertProgressOnly(stderr: string, key: string) {
  for (const line of lines(stderr)) {
    assert.match(
      line,
      /^(step \d+\/20 [a-z_]+|route: fix-slug \(--slice\))$/,
      `stderr: ${stderr}`,
    );
  }
  assert.ok(!stderr.includes(key));
}

// ---- tests ----

for (const wire of ["anthropic", "openai", "responses"] as const) {
  test(
    `dist/loom run --step-protocol single-call fixes the example project against the ${
      NAMES[wire]
    }-shaped server in one call per step, the schema enforced`,
    E2E,
    async (t) => {
      const s = await sandbox(t, wire);
      const run = await runExample(s, ["--step-protocol", "single-call"]);
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.equal(result.outcome, "completed");
      assert.equal(result.steps, 8, "read, test, edit, test, edit, test, print, finish");
      assert.equal(nodeTest(s.workspace), 0, "node test.mjs passes in the workspace copy");
      const report = readJson(join(s.dir, "report.json"));
      assert.equal(report.step_protocol, "single-call");
      assert.equal(report.phases.arguments.requests, 0);
      // One call per step, plus the one $result lookup.
      assert.equal(report.model_calls, 9);
      assert.equal(s.server.requests.length, 9);
      // Every request carries the same response schema, enforced: strict for OpenAI, output_config.format for Claude.
      const schemas = s.server.requests.map((r: any) => JSON.stringify(wrappedSchema(wire, r.body)));
      assert.equal(new Set(schemas).size, 1);
      assert.equal(s.server.rejections.length, 0, "the stand-in rejected nothing");
      if (wire === "openai") assert.equal((s.server.requests[0].body as any).response_format.json_schema.strict, true);
      if (wire === "responses") assert.equal((s.server.requests[0].body as any).text.format.strict, true);
    },
  );
}

for (const wire of WIRES) {
  const name = NAMES[wire];

  test(
    `dist/loom run fixes the example project against the ${name}-shaped server, bounded, and the report's usage is what the server sent`,
    E2E,
    async (t) => {
      const s = await sandbox(t, wire);
      const run = await runExample(s);
      assert.equal(run.code, 0, run.stderr);
      assertProgressOnly(run.stderr, KEYS[wire]);
      assert.equal(lines(run.stdout).length, 1, "--json prints one object");
      const result = JSON.parse(run.stdout);
      assert.equal(result.outcome, "completed");
      assert.equal(result.status, "success");
      assert.equal(result.exit_code, 0);
      assert.equal(result.steps, 8, "read, test, edit, test, edit, test, print, finish");
      assert.equal(result.revision, "r2");
      assert.deepEqual(result.last_test, { revision: "r2", exit_code: 0, timed_out: false });
      assert.equal(result.tests_current, true);
      assert.deepEqual(result.printed, ["slugify now collapses separators and trims them at both ends."]);
      assert.equal(result.report_path, join(s.dir, "report.json"));

      // The copy is fixed; the shipped project is not touched.
      assert.equal(nodeTest(s.workspace), 0, "node test.mjs passes in the workspace copy");
      assert.notEqual(nodeTest(PROJECT), 0, "testdata/example-project still has its bug");
      assert.equal(
        readFileSync(join(s.workspace, "src/slug.mjs"), "utf8").includes(
          '.replace(/[^a-z0-9]+/g, "-")\n    .replace(/^-+|-+$/g, "")',
        ),
        true,
      );

      const report = readJson(join(s.dir, "report.json"));
      assert.equal(report.outcome, "completed");
      assert.equal(report.policy, "bounded");
      assert.equal(report.error, null);
      assert.equal(report.model_calls, s.server.requests.length);
      assert.equal(report.calls.length, s.sent.length);
      assert.equal(report.phases.classification.requests, 0);
      assert.equal(report.phases.execution.requests, 8);
      assert.equal(report.retrievals.result, 1, "the one $result lookup");
      // Per call and summed over calls: exactly the counters the server reported, null for one it never sent.
      const perCall = s.sent.map((u) => expectedUsage(wire, u));
      assert.deepEqual(report.calls.map((c: any) => c.usage), perCall);
      const total = sumUsage(perCall);
      assert.deepEqual(report.usage, total);
      assert.deepEqual(report.final_usage, total);
      assert.equal(report.partial_usage, null);
      if (wire === "openai" || wire === "responses") {
        // Every call of an OpenAI API run carries its cache explanation (the Responses adapter's layout too).
        for (const [i, call] of report.calls.entries()) assert.ok(call.cache, `${wire} call ${i} has no cache entry`);
        assert.equal(typeof report.cache?.read_share, "number");
      }
      if (wire === "responses") assert.equal(report.usage.cache_write, 1024 + 23 * 13, "GPT-5.6 reports its writes");
      else assert.equal(report.usage.cache_write, null, "no call reported cache writes");
      assert.equal(s.server.rejections.length, 0, "the stand-in rejected nothing");
      if (wire === "openai") {
        assert.equal(report.calls[0].usage.cache_read, null, "the first call reported no cached tokens");
      }
      if (wire === "local") {
        assert.equal(report.usage.cache_read, null, "the local server never reported cached tokens");
      }
      for (const call of report.calls) {
        assert.ok(call.request_bytes > 0 && call.request_bytes <= CEILING_BYTES);
      }
      assert.ok(!readFileSync(join(s.dir, "report.json"), "utf8").includes(KEYS[wire]));
    },
  );

  const extra = wire === "anthropic" ? " and cache breakpoints on the prefix and the older events" : "";
  const keyRule = wire === "local" ? "no key at all" : "the key only in its header";
  test(`the ${name} request bodies carry schema enforcement${extra}, each section once, ${keyRule}`, E2E, async (t) => {
    const s = await sandbox(t, wire);
    const run = await runExample(s);
    assert.equal(run.code, 0, run.stderr);
    const slice = JSON.parse(readFileSync(EXAMPLE_REQUEST, "utf8"));
    assert.equal(s.server.requests.length, 14, "8 selections, 1 lookup, 5 argument calls");
    let sawLookupResponse = false;
    for (const [i, request] of s.server.requests.entries()) {
      const body = request.body as any;
      assert.ok(body, `request ${i} is JSON`);
      assert.ok(!request.rawBody.includes(KEYS[wire]), "the key never travels in the body");
      // Instructions and intent are sent once each.
      const text = promptText(wire, body);
      assert.equal(text.split(slice.intent).length - 1, 1, `request ${i}: the intent once`);
      assert.equal(text.split(slice.instructions).length - 1, 1, `request ${i}: the instructions once`);
      for (const label of ["Instructions", "Intent", "Events (oldest first)", "Working state", "Candidates"]) {
        assert.equal(text.split(`## ${label}\n`).length - 1, 1, `request ${i}: section ${label} once`);
      }
      if (text.includes("## Lookup responses\n")) {
        sawLookupResponse = true;
        assert.ok(text.includes('.replace(/[^a-z0-9]/g, \\"-\\");'), "the looked-up lines reach the model");
      }
      if (wire === "anthropic") {
        assert.equal(request.headers["x-api-key"], KEYS.anthropic);
        assert.equal(request.headers["anthropic-version"], "2026-10-21");
        // Sonnet 5.5 rejects a forced tool: the schema goes in output_config.format, the same on every call.
        assert.equal(body.tools, undefined);
        assert.equal(body.tool_choice, undefined);
        assert.equal(body.output_config.format.type, "json_schema");
        assert.deepEqual(wrappedSchema(wire, body).required, ["answer"]);
        assert.ok(Array.isArray(answerSchema(wire, body).anyOf), "the phase's response schema is enforced");
        // Breakpoints: the last system block (the end of the stable prefix), the last event (retained events are
        // append-only) and the block before the candidates when it is not the events (the step's next call reads it).
        const events = section(text, "Events (oldest first)");
        const content = body.messages[0].content;
        const markers = request.rawBody.split('"cache_control"').length - 1;
        const candidatesAt = content.findIndex((b: any) => b.text.startsWith("## Candidates\n"));
        const beforeIsEvents = content[candidatesAt - 1].text === "]" ||
          content[candidatesAt - 1].text.startsWith("## Events");
        assert.equal(markers, 1 + (events.length >= 1 ? 1 : 0) + (beforeIsEvents ? 0 : 1), `request ${i}: breakpoints`);
        assert.ok(markers <= 4, "the API allows four");
        assert.deepEqual(body.system.at(-1).cache_control, { type: "ephemeral" });
        assert.ok(body.system.at(-1).text.startsWith("## Tasks"));
        if (events.length >= 1) {
          assert.deepEqual(content[events.length - 1].cache_control, { type: "ephemeral" });
          assert.ok(content[events.length - 1].text.includes(JSON.stringify(events.at(-1))), "on the last event");
        }
        assert.ok(body.max_tokens > 0);
      } else if (wire === "responses") {
        assert.equal(request.path, "/v1/responses");
        assert.equal(request.headers.authorization, `Bearer ${KEYS.responses}`);
        assert.equal(body.store, false, "stateless: nothing of the run is kept on OpenAI's side");
        assert.equal(body.text.format.type, "json_schema");
        assert.equal(body.text.format.strict, true);
        assert.deepEqual(body.text.format.schema.required, ["answer"]);
        assert.deepEqual(body.input.map((m: any) => m.role), ["developer", "user"]);
        assert.match(body.prompt_cache_key, /^loom-/);
        assert.equal(body.prompt_cache_key, (s.server.requests[0].body as any).prompt_cache_key, "one key per run");
        // GPT-5.6 takes explicit breakpoints: the end of the prefix and the last event (before the closing "]",
        // which the next step does not re-send); a request with no event yet has only the first.
        assert.deepEqual(body.input[0].content.at(-1).prompt_cache_breakpoint, { mode: "explicit" });
        const parts = body.input[1].content;
        const marked = parts.filter((p: any) => p.prompt_cache_breakpoint);
        const hasEvents = parts.some((p: any) => p.text === "]");
        assert.equal(marked.length, hasEvents ? 1 : 0);
        if (hasEvents) assert.equal(parts[parts.indexOf(marked[0]) + 1].text, "]", "on the last event");
      } else {
        if (wire === "openai") assert.equal(request.headers.authorization, `Bearer ${KEYS.openai}`);
        else {assert.equal(
            request.headers.authorization,
            undefined,
            "a local server configured without api_key_env gets no key",
          );}
        assert.equal(body.response_format.type, "json_schema");
        assert.equal(body.response_format.json_schema.name, "answer");
        assert.equal(body.response_format.json_schema.strict, true);
        assert.deepEqual(body.response_format.json_schema.schema.required, ["answer"]);
        assert.equal(body.response_format.json_schema.schema.additionalProperties, false);
        assert.deepEqual(body.messages.map((m: any) => m.role), ["system", "user"]);
        if (wire === "openai") {
          assert.equal(body.max_tokens ?? body.max_completion_tokens, undefined, "no output limit unless configured");
        } else {
          // A local server's call is capped to what its answer needs: a selection 256 tokens, arguments 2,048.
          assert.ok([256, 2048].includes(body.max_tokens), `max_tokens ${body.max_tokens}`);
        }
      }
    }
    assert.ok(sawLookupResponse, "the lookup's answer was sent back");
    // The stable prefix is byte-identical from call to call (no checkpoint in so short a run), so caches can hit.
    const prefixes = new Set(
      s.server.requests.map((r) =>
        JSON.stringify(
          wire === "anthropic"
            ? (r.body as any).system
            : wire === "responses"
            ? (r.body as any).input[0]
            : (r.body as any).messages[0],
        )
      ),
    );
    assert.equal(prefixes.size, 1);
    if (wire === "anthropic") {
      // One cache chain: each call finds the previous call's cached prefix through its last event (retained events
      // are append-only), whatever the phase; the output format never changes.
      const cached = (
        body: any,
      ) => [
        JSON.stringify(body.output_config),
        ...[...body.system, ...body.messages[0].content].map((b: any) => b.text),
      ];
      let before: any = null;
      let reused = 0;
      for (const request of s.server.requests) {
        const body = request.body as any;
        if (before) {
          assert.equal(JSON.stringify(before.output_config), JSON.stringify(body.output_config));
          const blocks = [...before.system, ...before.messages[0].content];
          const close = blocks.findIndex((b: any) => b.text === "]");
          const end = 1 +
            (close === -1
              ? before.system.length - 1
              : blocks.slice(0, close).findLastIndex((b: any) => b.cache_control));
          assert.deepEqual(cached(body).slice(0, end + 1), cached(before).slice(0, end + 1));
          reused += 1;
        }
        before = body;
      }
      assert.ok(reused >= 8, `${reused} calls reuse a cached prefix`);
    }
  });

  const modelRule = wire === "local" ? "the catalog's model id" : "the MODEL part of PROVIDER/MODEL";
  test(`${name}: the model id on the wire is ${modelRule}`, E2E, async (t) => {
    const s = await sandbox(t, wire);
    const run = await runExample(s);
    assert.equal(run.code, 0, run.stderr);
    for (const request of s.server.requests) assert.equal((request.body as any).model, WIRE_IDS[wire]);
  });

  test(
    `${name}: a run --record'ed against the server replays to the same execution reports, recorded and re-executed`,
    E2E,
    async (t) => {
      const s = await sandbox(t, wire);
      const run = await runExample(s, ["--record", "run.jsonl"]);
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      const recordingText = readFileSync(join(s.dir, "run.jsonl"), "utf8");
      assert.ok(!recordingText.includes(KEYS[wire]), "the recording holds no key");
      const recording = lines(recordingText).map((line) => JSON.parse(line));
      assert.equal(recording[0].type, "header");
      assert.equal(recording.filter((e) => e.type === "answer").length, s.server.requests.length);
      const executions = recording.filter((e) => e.type === "execution");
      assert.deepEqual(executions.map((e) => e.report.kind), [
        "read",
        "test",
        "edit",
        "test",
        "edit",
        "test",
        "print",
        "finish",
      ]);
      // Each recorded answer keeps the usage the server reported for it.
      assert.deepEqual(
        recording.filter((e) => e.type === "answer").map((e) => e.usage),
        s.sent.map((u) => expectedUsage(wire, u)),
      );

      // Replayed from the recorded reports: the same result and the same requests, byte for byte.
      const replay = await s.loom([
        "replay",
        "run.jsonl",
        "--context-policy",
        "bounded",
        "--context-report",
        "replay.json",
        "--json",
      ]);
      assert.equal(replay.code, 0, replay.stderr);
      const replayed = JSON.parse(replay.stdout);
      // Routing (the catalog's slice name and route) is not part of a recorded workflow.
      // Nor is wall-clock time.
      // A replay without --execute runs nothing, so it says sandbox: null where the run said where it ran.
      const comparable = ({ report_path: _, slice: __, route: ___, duration_ms: ____, sandbox: _____, ...rest }: any) =>
        rest;
      // A replay's cost is the recorded run's, marked so: the same money, not spent again.
      assert.equal(replayed.cost === null || replayed.cost.recorded === true, true);
      if (replayed.cost) delete replayed.cost.recorded;
      assert.deepEqual(comparable(replayed), comparable(result));
      const original = readJson(join(s.dir, "report.json"));
      const again = readJson(join(s.dir, "replay.json"));
      assert.deepEqual(
        again.calls.map((c: any) => [c.phase, c.step, c.request_bytes, c.usage]),
        original.calls.map((c: any) => [c.phase, c.step, c.request_bytes, c.usage]),
      );
      assert.deepEqual(again.usage, original.usage);
      assert.equal(again.outcome, "completed");

      // Re-executed on a fresh copy of the project: every execution report equals the recorded one.
      const fresh = s.freshCopy("fresh");
      const executed = await s.loom([
        "replay",
        "run.jsonl",
        "--context-policy",
        "bounded",
        "--execute",
        "--workspace",
        "fresh",
      ]);
      assert.equal(executed.code, 0, executed.stderr);
      assert.match(
        executed.stdout,
        new RegExp(`^  re-executed: all ${executions.length} execution reports equal the recording$`, "m"),
      );
      assert.match(executed.stdout, /^replay run\.jsonl: completed \(success\) after 8 steps, revision r2, verified$/m);
      assert.equal(nodeTest(fresh), 0, "the re-executed copy's tests pass");
    },
  );
}
