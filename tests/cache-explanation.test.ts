// Every cache miss explained: runs replayed through stand-ins that report cache reads the way Anthropic and OpenAI
// do (test./helpers/prompt-cache-stand-ins.ts), and what the run report, its calls and the stream say of each miss.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadWorkload, replayRecording } from "../bench/workloads.ts";
import { parseRecording, type Recording } from "../lib/recording/recording.ts";
import { readdirSync, readFileSync } from "node:fs";
import { anthropicCache, cachingProvider, openaiCache } from "./helpers/prompt-cache-stand-ins.ts";
import { openhandsStyleRecording } from "./fixtures/openhands-style.ts";
import type { ContextPolicyName, StepProtocol } from "../lib/policy.ts";
import { CallCache } from "../lib/cache-explanation.ts";
import { RunEvent } from "../lib/run-events.ts";
import { ContextReport } from "../lib/report/context-report.ts";
import { BUILT_IN_PRICES, priceOf } from "../lib/prices.ts";
import { runLoop } from "../lib/loop/loop.ts";
import { ResultStore } from "../lib/context/store.ts";
import { RecordedExecutor, ScriptedProvider } from "../lib/recording/replay.ts";
import { type CacheBlock, type CacheLayout, NULL_USAGE, type Provider } from "../lib/vocabulary/turn.ts";
import { CacheLedger, summarizeCache } from "../lib/cache-explanation.ts";
import { workload, workloadTests } from "./helpers/workloads.ts";
import { summarizeReports } from "../lib/report/summary.ts";
import { renderSummaryText } from "../lib/report/summary-text.ts";
import { renderReportHtml } from "../lib/report/html.ts";

const workloadTest = workloadTests(import.meta.url);
const miniSweAgent = (name: string) =>
  loadWorkload({ system: "mini-swe-agent", name, path: workload(`mini-swe-agent/${name}`), format: "mini-swe-agent" })
    .recording;

const fixBug = (): Recording =>
  parseRecording(readFileSync(new URL("../testdata/workflows/fix-bug.jsonl", import.meta.url), "utf8"), {
    name: "fix-bug.jsonl",
  });

/** A clock that moves 1 ms per reading, and `gapMs` once before the call numbered `gapAt` (from 0) is sent. */
function clock({ gapAt = -1, gapMs = 0 } = {}) {
  let t = 1_000_000;
  let completed = 0;
  let applied = false;
  return {
    now: () => t,
    read: () => {
      if (completed === gapAt && !applied) {
        t += gapMs;
        applied = true;
      }
      return (t += 1);
    },
    called: () => void (completed += 1),
  };
}

/** `provider`, counting its calls on the clock. */
const counted = (provider: Provider, time: ReturnType<typeof clock>): Provider => ({
  ...provider,
  complete: async (request, options) => {
    const answer = await provider.complete(request, options);
    time.called();
    return answer;
  },
});

async function replayCached(
  recording: Recording,
  {
    policy = "bounded" as ContextPolicyName,
    protocol,
    kind = "anthropic" as "anthropic" | "openai",
    minTokens = 1024,
    ignore,
    gapAt,
    gapMs,
  }: {
    policy?: ContextPolicyName;
    protocol?: StepProtocol;
    kind?: "anthropic" | "openai";
    minTokens?: number;
    ignore?: (call: number, breakpoint: number) => boolean;
    gapAt?: number;
    gapMs?: number;
  } = {},
) {
  const time = clock({ gapAt, gapMs });
  const result = await replayRecording(recording, policy, {
    protocol,
    now: time.read,
    wrap: (scripted) =>
      counted(
        kind === "anthropic"
          ? cachingProvider(scripted, { kind, cache: anthropicCache({ minTokens, ignore }), now: time.now, minTokens })
          : cachingProvider(scripted, { kind, cache: openaiCache(), now: time.now }),
        time,
      ),
  });
  assert.equal(result.outcome, "completed", result.error?.message);
  return result;
}

const causes = (report: ContextReport) => report.calls.map((c) => c.cache?.miss?.cause ?? null);

test("cache explanation: every call of a bounded run through the Anthropic stand-in reads what Loom expected", async () => {
  const { report } = await replayCached(openhandsStyleRecording(1, { steps: 24 }));
  assert.equal(report.calls.length, report.model_calls);
  for (const [i, call] of report.calls.entries()) {
    assert.ok(call.cache, `call ${i} explained`);
    CallCache.parse(call.cache);
    // Loom's expectation is the stand-in's read, to the token (both count bytes / 4 here).
    assert.ok(Math.abs((call.cache.expected_tokens ?? -1) - (call.usage.cache_read ?? 0)) <= 2, `call ${i}`);
  }
  assert.equal(causes(report)[0], "first_call");
  assert.equal(causes(report).filter((c) => c === "provider_ignored_breakpoint").length, 0);
  assert.equal(report.calls[0].cache!.first_difference, null);
  assert.ok(report.cache, "the run's cache block");
  const input = report.calls.reduce(
    (s, c) => s + (c.usage.input ?? 0) + (c.usage.cache_read ?? 0) + (c.usage.cache_write ?? 0),
    0,
  );
  const read = report.calls.reduce((s, c) => s + (c.usage.cache_read ?? 0), 0);
  assert.ok(Math.abs(report.cache.read_share! - read / input) < 1e-9);
  assert.ok(report.cache.read_share! > 0.5, `read share ${report.cache.read_share}`);
});

test("cache explanation: a provider that ignores a breakpoint is named, with the tokens it did not read", async () => {
  // Call 5 (a selection call of step 3) ignores every breakpoint it was sent.
  const { report } = await replayCached(fixBug(), { ignore: (call) => call === 5 });
  const miss = report.calls[5].cache!.miss;
  assert.equal(miss?.cause, "provider_ignored_breakpoint");
  assert.equal(miss!.tokens, report.calls[5].cache!.expected_tokens! - (report.calls[5].usage.cache_read ?? 0));
  assert.equal(report.cache!.breaks.provider_ignored_breakpoint!.count, 1);
  // No other call is blamed on the provider.
  assert.equal(causes(report).filter((c) => c === "provider_ignored_breakpoint").length, 1);
});

test("cache explanation: a call more than five minutes after the last is a TTL expiry", async () => {
  const { report } = await replayCached(fixBug(), { gapAt: 7, gapMs: 6 * 60_000 });
  const expired = report.calls.findIndex((c) => c.cache?.miss?.cause === "ttl_expiry");
  assert.ok(expired > 0, JSON.stringify(causes(report)));
  assert.equal(report.calls[expired].usage.cache_read, 0);
  assert.ok(report.calls[expired].cache!.miss!.tokens > 0);
});

test("cache explanation: on a 4,096-token model the short prefix is a break below the model's minimum", async () => {
  const { report } = await replayCached(fixBug(), { minTokens: 4096 });
  assert.ok(causes(report).includes("below_minimum"), JSON.stringify(causes(report)));
  assert.equal(causes(report).filter((c) => c === "provider_ignored_breakpoint").length, 0);
});

workloadTest(
  "cache explanation: prefixes within a few percent of a 4,096-token minimum are blamed on it, never on the provider or the TTL",
  async () => {
    const dir = workload("swe-agent");
    const file = readdirSync(dir).find((f) => f.startsWith("replay__marshmallow-code__marshmallow-1867__default"))!;
    const path = `${dir}/${file}`;
    const recording = loadWorkload({ system: "swe-agent", name: file, path, format: "swe-agent" }).recording;
    const { report } = await replayCached(recording, { minTokens: 4096 });
    const blamed = causes(report).filter((c) => c === "provider_ignored_breakpoint" || c === "ttl_expiry");
    assert.deepEqual(blamed, [], JSON.stringify(causes(report)));
    assert.ok(report.cache!.breaks.below_minimum!.count > 0);
  },
);

workloadTest(
  "cache explanation: a checkpoint is named as the cause of its break, the checkpoint section as the difference",
  async () => {
    const { report } = await replayCached(miniSweAgent("django__django-11138.json"));
    assert.ok(report.checkpoints > 0);
    const at = report.calls.findIndex((c) => c.checkpoint);
    assert.equal(report.calls[at].cache!.first_difference, "checkpoint");
    assert.equal(report.calls[at].cache!.miss?.cause, "checkpoint");
    assert.equal(report.cache!.breaks.checkpoint!.count, report.checkpoints);
  },
);

test("cache explanation: two-call selection calls write the working state its arguments call reads; single-call only after a lookup", async () => {
  const two = await replayCached(fixBug());
  assert.ok((two.report.cache!.breaks.working_state?.count ?? 0) > 0, "two-call: the next step re-writes it");
  const single = await replayCached(fixBug(), { protocol: "single-call" });
  // Only a call after one that looked something up (or was re-asked) finds a written working state gone.
  const afterLookup = single.report.calls.filter((_, i) => i > 0 && single.report.calls[i - 1].lookup).length +
    single.report.retrievals.errors;
  const breaks = single.report.cache!.breaks.working_state?.count ?? 0;
  assert.ok(breaks <= afterLookup, `${breaks} breaks, ${afterLookup} calls after a lookup or re-ask`);
  assert.ok(breaks < (two.report.cache!.breaks.working_state?.count ?? 0));
});

test("cache explanation: OpenAI's automatic cache is expected from the longest shared prefix, and matches", async () => {
  const { report } = await replayCached(openhandsStyleRecording(2, { steps: 24 }), { kind: "openai" });
  for (const [i, call] of report.calls.entries()) {
    assert.equal(call.cache!.write, null, "OpenAI reports no writes");
    // The stand-in compares characters, Loom blocks: Loom never expects more than the provider can serve.
    assert.ok((call.cache!.expected_tokens ?? 0) <= (call.usage.cache_read ?? 0) + 2, `call ${i}`);
  }
  assert.ok(report.cache!.read_share! > 0.5);
});

test("cache explanation: model-called carries it, the events schema takes it, and a miss has a price", async () => {
  const events: RunEvent[] = [];
  const recording = fixBug();
  const store = new ResultStore();
  const time = clock();
  const provider: Provider = cachingProvider(new ScriptedProvider(recording.answers), {
    kind: "anthropic",
    cache: anthropicCache(),
    now: time.now,
  });
  await runLoop({ ...recording.header.slice, workspace: "." }, {
    policy: "bounded",
    provider,
    executor: new RecordedExecutor(recording.executions, { store }),
    store,
    now: time.read,
    onEvent: (e) => events.push(e),
    price: priceOf(BUILT_IN_PRICES, "anthropic/claude-sonnet-4-5"),
  });
  const called = events.filter((e) => e.type === "model-called");
  assert.ok(called.length > 0);
  for (const e of called) RunEvent.parse(e);
  const first = called[0] as Extract<RunEvent, { type: "model-called" }>;
  assert.equal(first.cache?.miss?.cause, "first_call");
  // Written at 1.25x where a read costs 0.1x: $3.75 - $0.30 per million tokens at Sonnet 4.5's list price.
  assert.ok(Math.abs(first.cache!.miss!.cost! - (first.cache!.miss!.tokens * 3.45) / 1e6) < 1e-12);
});

test("cache explanation: no text of the request is kept, only sizes and digests", async () => {
  const ledger = new CacheLedger();
  const secret = "TOPSECRET-PROMPT-TEXT";
  const explained = ledger.explain({
    layout: {
      mode: "breakpoints",
      min_tokens: 1,
      ttl_ms: 300_000,
      lookback: 20,
      blocks: [{ section: "instructions", bytes: secret.length, digest: "0123456789abcdef", breakpoint: true }],
    },
    usage: { input: 1, cache_read: 0, cache_write: 5, output: 1 },
    at: 0,
  });
  assert.ok(!JSON.stringify(explained).includes(secret));
  const run = await replayCached(
    loadWorkload({
      system: "synthetic openhands-calibrated",
      name: "s",
      path: "synthetic:3",
      format: "synthetic",
    }).recording,
  );
  const text = JSON.stringify(run.report);
  assert.ok(!text.includes(run.report.calls.length > 0 ? "Instructions\n" : "x"));
});

test("cache explanation: loom report shows the read share and the breaks in text, and a read/write/uncached chart", async () => {
  const { report } = await replayCached(fixBug(), { ignore: (call) => call === 5 });
  const named = { file: "run.json", kind: "run" as const, report };
  const text = renderSummaryText(summarizeReports([named]));
  const share = `${(report.cache!.read_share! * 100).toFixed(1)} %`;
  assert.ok(text.includes(`prompt cache: ${share} of input tokens read from the cache`), text);
  assert.match(text, /provider ignored breakpoint +1 /);
  assert.match(text, /first call +1 /);
  const html = renderReportHtml([named]);
  assert.ok(html.includes(`id="chart-cache-0"`));
  assert.equal((html.match(/class="cache-break" data-cause="provider_ignored_breakpoint"/g) ?? []).length, 2); // wide + narrow
  assert.equal(
    (html.match(/<g data-call="/g) ?? []).length,
    2 * report.calls.length,
    "one bar per call, drawn wide and narrow",
  );
});

test("cache explanation: a checkpoint after a prefix below the minimum is still named, with all it cost", () => {
  const ledger = new CacheLedger({ price: priceOf(BUILT_IN_PRICES, "anthropic/claude-sonnet-4-5") });
  const block = (section: CacheBlock["section"], bytes: number, digest: string, breakpoint = false): CacheBlock => ({
    section,
    bytes,
    digest,
    breakpoint,
  });
  const layout = (blocks: CacheBlock[]): CacheLayout => ({
    mode: "breakpoints",
    min_tokens: 1024,
    ttl_ms: 300_000,
    lookback: 20,
    blocks,
  });
  // Four bytes a token. The instructions' breakpoint ends 400 bytes in: far below 1,024 tokens, never cached alone.
  const instructions = block("instructions", 400, "i", true);
  const tasks = block("tasks", 200, "t");
  const first = ledger.explain({
    layout: layout([instructions, tasks, block("events", 7800, "e1", true)]),
    usage: { input: 0, cache_read: 0, cache_write: 2100, output: 10 },
    at: 0,
  });
  assert.equal(first.miss?.cause, "first_call");
  // A checkpoint retires the events: the body now differs right after the short prefix, and nothing can be read.
  const retired = ledger.explain({
    layout: layout([instructions, tasks, block("checkpoint", 1200, "c"), block("events", 6000, "e2", true)]),
    usage: { input: 0, cache_read: 0, cache_write: 1950, output: 10 },
    at: 1000,
  });
  assert.equal(retired.first_difference, "checkpoint");
  assert.equal(retired.expected_bytes, 0);
  // All the previous body cached that this one could have read: 7,800 bytes, 1,950 tokens, at the write price.
  assert.deepEqual(retired.miss && { cause: retired.miss.cause, tokens: retired.miss.tokens }, {
    cause: "checkpoint",
    tokens: 1950,
  });
  assert.ok(Math.abs(retired.miss!.cost! - (1950 * 3.45) / 1e6) < 1e-12);
  const run = summarizeCache([{ usage: NULL_USAGE, cache: first }, { usage: NULL_USAGE, cache: retired }]);
  assert.deepEqual(Object.keys(run!.breaks).sort(), ["checkpoint", "first_call"]);
  assert.equal(run!.breaks.checkpoint!.tokens, 1950);
});
