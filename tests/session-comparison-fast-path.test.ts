// The session comparison renders each event once for a whole replay (lib/recording/cache-blocks.ts's
// CacheBlockRenderer) instead of rendering every request whole: the table's numbers must not move by a cent or a byte.
// Held on the fixtures (Claude Code and Codex sessions, real and hand-written) and on generated Claude Code sessions.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import fc from "fast-check";
import { compareFile } from "../commands/replay-compare.ts";
import { CacheBlockRenderer, cacheBlocks, type CacheModel } from "../lib/recording/cache-blocks.ts";
import { importSession } from "../lib/recording/importers/index.ts";
import type { Recording } from "../lib/recording/recording.ts";
import { replayRecording } from "../bench/workloads.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));

/** Every session file of the fixture folders named claude-code* and codex, with its path from tests/fixtures/. */
function fixtureSessions(): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  const walk = (dir: string, name: string) => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path, `${name}/${entry}`);
      else if (entry.endsWith(".jsonl")) out.push({ name: `${name}/${entry}`, text: readFileSync(path, "utf8") });
    }
  };
  for (const folder of readdirSync(FIXTURES).sort()) {
    if (folder.startsWith("claude-code") || folder === "codex") walk(join(FIXTURES, folder), folder);
  }
  return out;
}

/** The two layouts a session's model can have: Anthropic's breakpoints and OpenAI's automatic prefix. */
const MODELS: CacheModel[] = [
  { id: "claude-sonnet-4-5-20250929", layout: "breakpoints", minTokens: 1024 },
  { id: "claude-haiku-4-5", layout: "breakpoints", minTokens: 4096 },
  { id: "gpt-5", layout: "automatic", minTokens: 1024 },
];

/** Replays under both policies; at every request, the blocks rendered once per event equal the request's whole rendering. */
async function assertSameBlocks(
  recording: Recording,
  label: string,
): Promise<{ requests: number; checkpointed: number }> {
  let requests = 0;
  let checkpointed = 0;
  for (const policy of ["legacy", "bounded"] as const) {
    const renderers = MODELS.map((model) => ({ model, renderer: new CacheBlockRenderer(model) }));
    await replayRecording(recording, policy, {
      wrap: (inner) => ({
        name: inner.name,
        capabilities: inner.capabilities,
        complete(request, options) {
          requests += 1;
          if (request.sections.some((s) => s.section === "checkpoint")) checkpointed += 1;
          for (const { model, renderer } of renderers) {
            assert.deepEqual(
              renderer.blocks(request),
              cacheBlocks(request, model),
              `${label}, ${policy}, ${model.id}: request ${requests}`,
            );
          }
          return inner.complete(request, options);
        },
      }),
    });
  }
  return { requests, checkpointed };
}

test("every fixture session compares to the same row whether each event is rendered once or every request whole", async () => {
  const sessions = fixtureSessions();
  assert.ok(sessions.length >= 6, `fixture sessions found: ${sessions.map((s) => s.name).join(", ")}`);
  let compared = 0;
  for (const { name, text } of sessions) {
    const fast = await compareFile(text, { name, from: "auto" });
    const whole = await compareFile(text, { name, from: "auto" }, { rendering: "whole-request" });
    assert.deepEqual(fast, whole, name);
    if (fast.error === null) compared += 1;
  }
  assert.ok(compared >= 5, "most fixtures compare (a refused one would prove nothing)");
});

test("on every fixture session, each request's cache blocks are the whole rendering's, under both layouts", async () => {
  let requests = 0;
  for (const { name, text } of fixtureSessions()) {
    const format = name.startsWith("codex") ? "codex" : "claude-code";
    let recording: Recording;
    try {
      ({ recording } = importSession(text, { format, name }));
    } catch {
      continue; // a fixture the importer refuses has no requests
    }
    requests += (await assertSameBlocks(recording, name)).requests;
  }
  assert.ok(requests > 100, `requests checked: ${requests}`);
});

// ---- generated sessions ----

type Call = { tool: "Read" | "Bash" | "Grep" | "Edit" | "Write" | "WebFetch"; output: string; error: boolean };

/** A Claude Code session file of these tool calls, one assistant message each, and an optional compaction. */
function claudeSession(calls: Call[], { model, compactAt }: { model: string; compactAt: number | null }): string {
  const base = { sessionId: "s", cwd: "/repo", version: "2.1.39", isSidechain: false };
  const lines: unknown[] = [{ ...base, type: "user", uuid: "u", message: { role: "user", content: "Fix the bug." } }];
  calls.forEach((call, i) => {
    if (compactAt === i) {
      lines.push({
        ...base,
        type: "system",
        subtype: "compact_boundary",
        uuid: `c${i}`,
        content: "Conversation compacted",
      });
    }
    const input = {
      Read: { file_path: `/repo/src/f${i % 4}.py` },
      Bash: { command: i % 2 === 0 ? `grep -n x src/f${i}.py` : "pytest -q" },
      Grep: { pattern: "def ", path: "/repo/src" },
      Edit: { file_path: `/repo/src/f${i % 4}.py`, old_string: "a = 1", new_string: "a = 2" },
      Write: { file_path: `/repo/src/new${i}.py`, content: call.output },
      WebFetch: { url: "https://example.com/" },
    }[call.tool];
    lines.push({
      ...base,
      type: "assistant",
      uuid: `a${i}`,
      message: {
        id: `msg_${i}`,
        role: "assistant",
        model,
        content: [{ type: "text", text: `Step ${i}.` }, { type: "tool_use", id: `t${i}`, name: call.tool, input }],
        usage: {
          input_tokens: 3,
          cache_read_input_tokens: 2_000 * i,
          cache_creation_input_tokens: 500,
          output_tokens: 40,
        },
      },
    });
    lines.push({
      ...base,
      type: "user",
      uuid: `r${i}`,
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `t${i}`, content: call.output, is_error: call.error }],
      },
    });
  });
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

/** Outputs from a small pool (repeats are shown by reference under bounded) or fresh, some large enough to retire. */
const output = fc.oneof(
  fc.constantFrom("", "ok", "ü€ — non-ASCII\n".repeat(300), "x".repeat(9_000)),
  fc.tuple(fc.string({ maxLength: 30 }), fc.nat({ max: 30_000 })).map(([head, n]) => `${head}${"y".repeat(n)}`),
);
const call: fc.Arbitrary<Call> = fc.record({
  tool: fc.constantFrom("Read", "Bash", "Grep", "Edit", "Write", "WebFetch"),
  output,
  error: fc.boolean(),
});
const session = fc.record({
  calls: fc.array(call, { minLength: 1, maxLength: 10 }),
  model: fc.constantFrom("claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-opus-4-6"),
  compactAt: fc.option(fc.nat({ max: 9 }), { nil: null }),
});

test("generated Claude Code sessions (property): the fast rendering gives the whole rendering's row and blocks", async () => {
  let checkpointed = 0;
  await fc.assert(
    fc.asyncProperty(session, async ({ calls, model, compactAt }) => {
      const text = claudeSession(calls, { model, compactAt });
      const fast = await compareFile(text, { name: "generated.jsonl", from: "claude-code" });
      const whole = await compareFile(text, { name: "generated.jsonl", from: "claude-code" }, {
        rendering: "whole-request",
      });
      assert.deepEqual(fast, whole);
      assert.equal(fast.error, null, `the generated session compares: ${fast.error}`);
      const { recording } = importSession(text, { format: "claude-code", name: "generated.jsonl" });
      checkpointed += (await assertSameBlocks(recording, "generated")).checkpointed;
    }),
    {
      numRuns: 30,
      // One session long enough for bounded to retire events (a checkpoint then joins the prefix), compacted on the way.
      examples: [[{
        calls: Array.from(
          { length: 70 },
          (_, i): Call => ({ tool: "Bash", output: `${i}`.padEnd(3_000, "z"), error: false }),
        ),
        model: "claude-sonnet-4-5-20250929",
        compactAt: 3,
      }]],
    },
  );
  assert.ok(checkpointed > 0, "some generated requests carry a checkpoint");
});
