// loom replay FOLDER --compare: every session of a folder under legacy and bounded, with what each really spent. The
// recorded spend is checked against an independent sum of the file's own usage fields at the model table's prices.
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { replayCommand } from "../commands/replay.ts";
import { compareFile, replayCompare } from "../commands/replay-compare.ts";
import { UsageError } from "../lib/errors.ts";
import { BUILT_IN_PRICES, priceOf } from "../lib/prices.ts";
import { SessionComparison, sessionModel } from "../lib/recording/session-comparison.ts";
import { cacheBlocks } from "../lib/recording/cache-blocks.ts";
import { CacheEstimate } from "../lib/recording/cache-estimate.ts";
import { CacheLedger } from "../lib/cache-explanation.ts";
import { importSession } from "../lib/recording/importers/index.ts";
import { anthropicCacheLayout } from "../lib/providers/anthropic/anthropic-cache-layout.ts";
import { openaiCacheLayout } from "../lib/providers/openai/openai-cache-layout.ts";
import { convertToAnthropicRequest } from "../lib/providers/anthropic/convert-to-anthropic-request.ts";
import { convertToOpenAIRequest } from "../lib/providers/openai/convert-to-openai-request.ts";
import { NULL_USAGE } from "../lib/vocabulary/turn.ts";
import { replayRecording } from "../bench/workloads.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url);
const SESSION_ID = "4f1c0000-0000-4000-8000-000000000001";
const read = (path: string) => readFileSync(new URL(path, FIXTURES), "utf8");
const SESSION = read(`claude-code/${SESSION_ID}.jsonl`);
const TOOL_HEAVY = read("claude-code-spotter/tool_heavy.jsonl");
const CODEX = read("codex/2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl");

/** The file's own usage, summed without the importer: one bill per message id (its largest counters), priced here. */
function independentSpend(text: string): number {
  const byId = new Map<string, { model: string; u: Record<string, number> }>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const entry = JSON.parse(line);
    if (entry.type !== "assistant" || entry.isSidechain === true) continue;
    const m = entry.message;
    if (m.model === "<synthetic>") continue;
    const u = m.usage;
    const seen = byId.get(m.id);
    const fields = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"];
    const one = Object.fromEntries(fields.map((f) => [f, u[f] ?? 0]));
    one.hour = u.cache_creation?.ephemeral_1h_input_tokens ?? 0;
    if (!seen) byId.set(m.id, { model: m.model, u: one });
    else for (const f of Object.keys(one)) seen.u[f] = Math.max(seen.u[f] ?? 0, one[f] ?? 0);
  }
  let total = 0;
  for (const { model, u } of byId.values()) {
    const p = priceOf(BUILT_IN_PRICES, `anthropic/${model}`);
    assert.ok(p, `a price for ${model}`);
    const writes5m = (u.cache_creation_input_tokens ?? 0) - (u.hour ?? 0);
    total += ((u.input_tokens ?? 0) * p.input + writes5m * (p.cache_write_5m ?? p.input) +
      (u.hour ?? 0) * (p.cache_write_1h ?? p.input) + (u.cache_read_input_tokens ?? 0) * p.cache_read +
      (u.output_tokens ?? 0) * p.output) / 1e6;
  }
  return total;
}

test("the recorded spend is the file's own usage fields priced by the model table", async () => {
  for (const [name, text] of [["session.jsonl", SESSION], ["tool_heavy.jsonl", TOOL_HEAVY]] as const) {
    const row = await compareFile(text, { name, from: "auto" });
    assert.equal(row.error, null, row.error ?? "");
    const cost = row.recorded?.cost;
    assert.ok(typeof cost === "number" && cost > 0, name);
    const expected = independentSpend(text);
    assert.ok(Math.abs(cost - expected) < 1e-9, `${name}: ${cost} = ${expected}`);
  }
});

test("a session's row: events, compactions, legacy's large requests, and bounded against legacy", async () => {
  const row = await compareFile(SESSION, { name: "session.jsonl", from: "auto" });
  assert.equal(row.format, "claude-code");
  assert.equal(row.model, "claude-opus-4-6");
  assert.equal(row.events, 11);
  assert.equal(row.compactions, 1);
  assert.deepEqual(row.compaction_lines, [SESSION.split("\n").findIndex((l) => l.includes('"compact_boundary"')) + 1]);
  assert.equal(row.skipped_sidechain_lines, 1);
  assert.equal(row.recorded?.calls, 9);
  assert.deepEqual(row.recorded?.usage, { input: 25, cache_write: 26625, cache_read: 145833, output: 972 });
  assert.ok(row.legacy && row.bounded);
  // Two calls per step, except run_tests (no arguments call).
  assert.equal(row.legacy.requests, 2 * 11 - 2);
  assert.equal(row.bounded.requests, row.legacy.requests);
  assert.equal(row.legacy.over_64k, 0);
  assert.ok(row.legacy.modeled_cost !== null && row.legacy.modeled_cost > 0);
  assert.equal(row.bytes_ratio, row.bounded.bytes / row.legacy.bytes);
});

test("long outputs make legacy's requests pass 64 KiB while bounded's stay under it", async () => {
  const lines = [JSON.stringify({ type: "user", sessionId: "s", uuid: "u", message: { role: "user", content: "go" } })];
  for (let i = 0; i < 40; i++) {
    lines.push(JSON.stringify({
      type: "assistant",
      sessionId: "s",
      uuid: `a${i}`,
      message: {
        id: `m${i}`,
        role: "assistant",
        model: "claude-sonnet-4-5-20250929",
        content: [{ type: "tool_use", id: `t${i}`, name: "Bash", input: { command: `cat big${i}.log` } }],
        usage: {
          input_tokens: 1,
          cache_read_input_tokens: 1000 * i,
          cache_creation_input_tokens: 3000,
          output_tokens: 5,
        },
      },
    }));
    lines.push(JSON.stringify({
      type: "user",
      sessionId: "s",
      uuid: `r${i}`,
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `t${i}`, content: `${i} `.repeat(4000) }],
      },
    }));
  }
  const row = await compareFile(lines.join("\n"), { name: "long.jsonl", from: "auto" });
  assert.equal(row.error, null, row.error ?? "");
  assert.ok(row.legacy && row.bounded);
  assert.ok(row.legacy.over_64k > 10, `legacy over 64 KiB: ${row.legacy.over_64k}`);
  assert.equal(row.bounded.over_64k, 0);
  assert.ok((row.cost_ratio ?? 1) < 1 && (row.bytes_ratio ?? 1) < 0.5);
});

test("a file that is not a session is a refused row with one line naming where, and the exit code is 1", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-compare-"));
  try {
    cpSync(new URL("claude-code/", FIXTURES), join(dir, "project"), { recursive: true });
    writeFileSync(join(dir, "project", "notes.jsonl"), `${SESSION.split("\n").slice(0, 4).join("\n")}\n{"hello": 1}\n`);
    const { io, out } = fakeIo({ cwd: dir });
    const code = await replayCompare(["project"], { io, from: "auto", json: true, html: undefined, quiet: true });
    assert.equal(code, 1);
    const comparison = SessionComparison.parse(JSON.parse(out.stdout));
    assert.deepEqual(comparison.sessions.map((s) => s.file), [
      `${SESSION_ID}/subagents/agent-a1b2c3d.jsonl`,
      `${SESSION_ID}.jsonl`,
      "notes.jsonl",
    ]);
    const refused = comparison.sessions[2];
    assert.match(refused?.error ?? "", /^5: expected a Claude Code session .*found an object with keys hello$/);
    assert.equal(comparison.sessions[0]?.subagent, true);
    assert.equal(comparison.total.sessions, 2);
    assert.equal(comparison.total.refused, 1);
    assert.equal(comparison.total.events, 13);
    const text = fakeIo({ cwd: dir });
    await replayCompare(["project"], { io: text.io, from: "auto", json: false, html: undefined, quiet: true });
    assert.match(text.out.stdout, /\nrefused notes\.jsonl: 5: expected a Claude Code session .*keys hello\n/);
    assert.match(text.out.stdout, new RegExp(`\\n${SESSION_ID}\\.jsonl: 1 side-chain line left out`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("loom replay FOLDER --compare prints the table, --json the comparison, --html a page; never the content", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-compare-"));
  try {
    cpSync(new URL("codex/", FIXTURES), join(dir, "sessions"), { recursive: true });
    const text = fakeIo({ cwd: dir });
    assert.equal(await replayCommand(["sessions", "--compare"], text.io), 0);
    assert.match(text.out.stdout, /^session +model +events/);
    assert.match(text.out.stdout, /\ntotal \(2 sessions\)/);
    assert.match(text.out.stdout, /gpt-5-codex/);
    const json = fakeIo({ cwd: dir });
    assert.equal(await replayCommand(["sessions", "--compare", "--json"], json.io), 0);
    const comparison = SessionComparison.parse(JSON.parse(json.out.stdout));
    assert.equal(comparison.sessions.length, 2);
    assert.equal(comparison.total.compactions, 1);
    const html = fakeIo({ cwd: dir });
    assert.equal(await replayCommand(["sessions", "--compare", "--html", "out/compare.html"], html.io), 0);
    const page = readFileSync(join(dir, "out", "compare.html"), "utf8");
    assert.match(page, /^<!doctype html>/);
    for (const output of [text.out.stdout, json.out.stdout, page]) {
      for (const secret of ["off-by-one", "pager.py", "return items", "Python files", "a.py"]) {
        assert.ok(!output.includes(secret), `no content in the output: ${secret}`);
      }
    }
    assert.ok(existsSync(join(dir, "out", "compare.html")));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("--compare refuses the flags of a single replay, and --html without --compare, in one line", async () => {
  const { io } = fakeIo({ cwd: tmpdir() });
  for (
    const [argv, pattern] of [
      [
        ["x", "--compare", "--execute"],
        /^--compare replays under both policies and prints one table; it takes no --execute$/,
      ],
      [["x", "--compare", "--context-policy", "bounded"], /takes no --context-policy$/],
      [["x", "--html", "a.html"], /^--html is only used with --compare$/],
      [["--compare"], /^No folder given/],
      [["x", "--compare", "--json", "--html", "a.html"], /^Choose one of --json and --html/],
    ] as const
  ) {
    await assert.rejects(replayCommand([...argv], io), (error: unknown) => {
      assert.ok(error instanceof UsageError, String(error));
      assert.match(error.message, pattern);
      return true;
    });
  }
});

test("the comparison's cache estimate reads what the run report's cache explanation expects, call by call", async () => {
  let total = 0;
  for (const [format, text] of [["claude-code", TOOL_HEAVY], ["claude-code", SESSION], ["codex", CODEX]] as const) {
    const { recording, facts } = importSession(text, { format, name: "s.jsonl" });
    const model = sessionModel({ format, model: facts.model });
    for (const policy of ["legacy", "bounded"] as const) {
      const ledger = new CacheLedger();
      const estimate = new CacheEstimate({ mode: model.layout, minTokens: model.minTokens, lookback: 20 });
      let calls = 0;
      let read = 0;
      await replayRecording(recording, policy, {
        wrap: (inner) => ({
          name: inner.name,
          capabilities: inner.capabilities,
          complete(request, options) {
            const layout = model.layout === "breakpoints"
              ? anthropicCacheLayout(
                request,
                convertToAnthropicRequest(request, {
                  model: model.id,
                  maxTokens: 4096,
                  cache: { minTokens: model.minTokens },
                })
                  .body,
                { minTokens: model.minTokens, ttl: "5m" },
              )
              : openaiCacheLayout(request, convertToOpenAIRequest(request, { model: model.id }).body, {
                minTokens: model.minTokens,
              });
            const expected = ledger.explain({ layout, usage: NULL_USAGE, at: calls++ * 1000 });
            const mine = estimate.read(cacheBlocks(request, model));
            assert.equal(mine.prompt_bytes, expected.prompt_bytes, `${policy} call ${calls}: prompt`);
            assert.equal(mine.expected_bytes, expected.expected_bytes, `${policy} call ${calls}: expected read`);
            read += mine.expected_bytes;
            return inner.complete(request, options);
          },
        }),
      });
      assert.ok(calls > 0);
      total += read;
    }
  }
  assert.ok(total > 0, "some calls read from the cache");
});
