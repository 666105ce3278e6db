// No runaway (issue 36): a model that never gives a usable answer — out of the schema, malformed lookups, lookups of
// things that are not there, one lookup too many — stops the run with invalid_answers (exit 7) after MAX_INVALID_STEPS
// steps, on every provider path; and no step, whatever the model answers, makes more than MAX_CALLS_PER_STEP calls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { MAX_CALLS_PER_STEP, MAX_INVALID_STEPS } from "../lib/loop/limits.ts";
import { ResultStore } from "../lib/context/store.ts";
import { NULL_USAGE, type Provider, type TurnRequest } from "../lib/vocabulary/turn.ts";
import { StepProtocol } from "../lib/policy.ts";

const STEP_PROTOCOLS = StepProtocol.options;
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { runLoopReported, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";
import {
  anthropicAnswer,
  openAIAnswer,
  type ReceivedRequest,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";

// ---- in the loop: every kind of useless answer, in any mix ----

type Kind = "valid-lookup" | "bad-lookup" | "missing-lookup" | "invalid" | "decide";
const useless: Kind[] = ["valid-lookup", "bad-lookup", "missing-lookup", "invalid"];

function valueOf(kind: Kind, request: TurnRequest): unknown {
  switch (kind) {
    case "valid-lookup":
      return { $list_history: 0 };
    case "bad-lookup":
      return { $result: 42 };
    case "missing-lookup":
      return { $result: `sha256:${"0".repeat(64)}` };
    case "invalid":
      return { nonsense: true };
    case "decide":
      return request.phase === "arguments" ? { path: "a.txt" } : { action: "read_file", args: { path: "a.txt" } };
  }
}

/** A provider that answers `kinds` in turn (then the last one forever), whatever it is asked. */
function answering(kinds: Kind[], protocol: StepProtocol): Provider & { calls: { step: number | undefined }[] } {
  const calls: { step: number | undefined }[] = [];
  return {
    name: "runaway",
    capabilities: { prompt_caching: false, schema_enforcement: false },
    calls,
    complete(request, { step }) {
      const kind = kinds[Math.min(calls.length, kinds.length - 1)] ?? "invalid";
      calls.push({ step });
      const value = kind === "decide" && request.phase === "selection" && protocol === "two-call"
        ? { action: "read_file" }
        : valueOf(kind, request);
      return Promise.resolve({ value, usage: NULL_USAGE });
    },
  };
}

async function loopWith(kinds: Kind[], protocol: StepProtocol) {
  const store = new ResultStore();
  const provider = answering(kinds, protocol);
  let t = 0;
  const result = await runLoopReported(sliceRequest({ step_protocol: protocol, limits: { max_steps: 30 } }), {
    policy: "bounded",
    provider,
    executor: new ScriptedExecutor(store, Array.from({ length: 40 }, () => "x"), []),
    store,
    now: () => (t += 1),
  });
  return { result, provider };
}

for (const protocol of STEP_PROTOCOLS) {
  for (const kind of useless) {
    test(`${protocol}: a model answering only ${kind} stops with invalid_answers or suspends within ${MAX_INVALID_STEPS} steps`, async () => {
      const { result, provider } = await loopWith([kind], protocol);
      assert.ok(["invalid_answers", "suspended"].includes(result.outcome), result.outcome);
      assert.ok(result.steps <= MAX_INVALID_STEPS, `${result.steps} steps`);
      assert.ok(provider.calls.length <= MAX_INVALID_STEPS * MAX_CALLS_PER_STEP);
    });
  }
}

test("whatever the model answers, no step makes more than MAX_CALLS_PER_STEP calls, and the run always ends", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom<Kind>(...useless, "decide"), { minLength: 1, maxLength: 200 }),
      fc.constantFrom(...STEP_PROTOCOLS),
      async (kinds, protocol) => {
        const { result, provider } = await loopWith(kinds, protocol);
        const perStep = new Map<number, number>();
        for (const { step } of provider.calls) perStep.set(step ?? 0, (perStep.get(step ?? 0) ?? 0) + 1);
        for (const [step, calls] of perStep) {
          assert.ok(calls <= MAX_CALLS_PER_STEP, `step ${step}: ${calls} calls`);
        }
        assert.ok(result.steps <= 30);
      },
    ),
    { numRuns: 60 },
  );
});

// ---- through the CLI, on every provider path: a model that answers the arguments call with a bad lookup ----

type Wire = "anthropic" | "openai" | "responses" | "local";

/** Every key any schema in the body offers (the lookup key is spelled per API: "$result", or an alias). */
function schemaKeys(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => schemaKeys(n, into));
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties" && value && typeof value === "object") Object.keys(value).forEach((k) => into.add(k));
      schemaKeys(value, into);
    }
  }
  return into;
}

/** The request's "## Candidates" section (every wire renders sections as "## Label\n<one line of JSON>"). */
function candidatesOf(node: unknown): Record<string, unknown> | null {
  if (typeof node === "string") {
    const at = node.indexOf("## Candidates\n");
    if (at === -1) return null;
    const from = at + "## Candidates\n".length;
    const end = node.indexOf("\n", from);
    return JSON.parse(node.slice(from, end === -1 ? undefined : end));
  }
  if (node !== null && typeof node === "object") {
    for (const value of Object.values(node)) {
      const found = candidatesOf(value);
      if (found) return found;
    }
  }
  return null;
}

/**
 * Selection: read a file; arguments (the candidates name the chosen action): a lookup of a result that does not exist
 * — what a small model may do, and did: 10 calls a step to the step limit before.
 */
function runawayAnswer(request: ReceivedRequest): unknown {
  const candidates = candidatesOf(request.body);
  if (typeof candidates?.action !== "string") return { action: "read_file", reason: "look" };
  const key = [...schemaKeys(request.body)].find((k) => /^\W?_?result$/.test(k)) ?? "$result";
  return { [key]: "ok" };
}

async function runaway(t: { after: (fn: () => unknown) => void }, wire: Wire) {
  const dir = mkdtempSync(join(tmpdir(), `loom-runaway-${wire}-`));
  writeFileSync(join(dir, "a.txt"), "a\n");
  const server =
    await (wire === "anthropic"
      ? startAnthropicServer((r) => anthropicAnswer(runawayAnswer(r), { model: "claude-sonnet-5-5" }))
      : startOpenAIServer((r) => openAIAnswer(runawayAnswer(r))));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const model = {
    anthropic: "anthropic/claude-sonnet-5-5",
    openai: "openai/gpt-4o-2024-08-06",
    responses: "openai/gpt-5.6",
  };
  let args: string[];
  let env: Record<string, string>;
  if (wire === "local") {
    const catalog = {
      models: { local: { kind: "openai-compatible", model: "qwen2.5-coder:7b", base_url: server.baseUrl } },
      slices: {
        work: {
          description: "Work",
          intent: "{{request}}",
          instructions: "Read what is asked.",
          actions: ["read_file", "finish"],
          workspace: ".",
          test: { command: ["node", "-e", ""], timeout_ms: 600_000 },
          limits: { max_steps: 30 },
          model: "local",
        },
      },
    };
    writeFileSync(join(dir, "catalog.json"), JSON.stringify(catalog));
    args = ["run", "--catalog", "catalog.json", "--slice", "work", "Read a.txt"];
    env = {};
  } else {
    args = ["run", "Read a.txt", "--model", model[wire], "--test-command", "node -e ''", "--max-steps", "30"];
    env = wire === "anthropic"
      ? { ANTHROPIC_API_KEY: "sk-ant-runaway-0123456789", ANTHROPIC_BASE_URL: server.baseUrl }
      : { OPENAI_API_KEY: "sk-proj-runaway-0123456789", OPENAI_BASE_URL: server.baseUrl };
  }
  const { io, out } = fakeIo({ cwd: dir, env });
  const code = await main([...args, "--output-format", "json", "--quiet"], io);
  return { code, json: JSON.parse(out.stdout), stderr: out.stderr, calls: server.requests.length };
}

for (const wire of ["anthropic", "openai", "responses", "local"] as const) {
  test(`${wire}: a model answering every arguments call with a bad lookup stops with exit 7 after ${MAX_INVALID_STEPS} steps`, async (t) => {
    const r = await runaway(t, wire);
    assert.equal(r.code, 7, r.stderr);
    assert.equal(r.json.outcome, "invalid_answers");
    assert.equal(r.json.steps, MAX_INVALID_STEPS);
    // Per step: the selection, the bad lookup, the same again (the one re-ask) — then the step is refused.
    assert.equal(r.calls, MAX_INVALID_STEPS * 3);
  });
}
