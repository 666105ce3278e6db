// The run report is a fold of the run's event stream: the lifecycle writes foldReport(the events it delivered), so
// folding what a caller received — through onEvent, or printed by stream-json and parsed back — gives the written
// report byte for byte after JSON serialisation (timings included), on every shipped workflow, under both policies
// and both step protocols, for completed, suspended, limited, failed and interrupted runs and for startup failures.
// (Before the lifecycle switched to the fold, this same test held the fold equal to the report the loop built.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../main.ts";
import { type RunHooks, type RunPlan, startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { digestOf } from "../lib/text/digest.ts";
import { parseRecording, type Recording } from "../lib/recording/recording.ts";
import type { RunEvent } from "../lib/run-events.ts";
import { foldReport, UnendedStreamError } from "../lib/report/fold.ts";
import { VERSION } from "../lib/version.ts";
import { ProviderError } from "../lib/errors.ts";
import type { ContextPolicyName, StepProtocol } from "../lib/policy.ts";
import type { SliceRequest } from "../lib/slice.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WORKFLOWS = `${ROOT}testdata/workflows`;
const workflows = readdirSync(WORKFLOWS).filter((name) => name.endsWith(".jsonl")).sort();
const POLICIES: ContextPolicyName[] = ["legacy", "bounded"];
const PROTOCOLS: StepProtocol[] = ["two-call", "single-call"];

const serialised = (value: unknown) => JSON.stringify(value, null, 2);

/** Runs, collecting the events delivered; asserts their fold is the report the run returned, and returns both. */
async function foldHolds(
  input: Parameters<typeof startRun>[0],
  plan: RunPlan,
  hooks: RunHooks = {},
): Promise<{ events: RunEvent[]; outcome: string }> {
  const events: RunEvent[] = [];
  const onEvent = hooks.onEvent;
  const result = await startRun(input, plan, {
    ...hooks,
    onEvent: (event) => {
      events.push(event);
      onEvent?.(event);
    },
  });
  assert.equal(events.at(-1)?.type, "run-ended", "the stream ends with run-ended");
  assert.equal(serialised(foldReport(events, { version: VERSION })), serialised(result.report));
  return { events, outcome: result.outcome };
}

function load(name: string): { text: string; recording: Recording; request: SliceRequest } {
  const text = readFileSync(join(WORKFLOWS, name), "utf8");
  const recording = parseRecording(text);
  return { text, recording, request: { ...recording.header.slice, workspace: "." } as SliceRequest };
}

test("there are shipped workflows to fold", () => {
  assert.ok(workflows.length >= 2, `only ${workflows.length} workflows`);
});

for (const name of workflows) {
  for (const policy of POLICIES) {
    for (const protocol of PROTOCOLS) {
      test(`${name}, ${policy}, ${protocol}: the fold of the stream is the report`, async () => {
        const { text, recording, request } = load(name);
        const { events, outcome } = await foldHolds(
          { request },
          libraryPlan({ contextPolicy: policy, stepProtocol: protocol }),
          {
            replay: { recording, execute: false, digest: digestOf(text) },
          },
        );
        assert.ok(["completed", "suspended"].includes(outcome), outcome);
        assert.ok(events.some((e) => e.type === "step-executed"));
      });
    }
  }

  test(`${name}: a step limit, a provider that runs out of answers, an interrupt and a bug fold too`, async () => {
    const { text, recording, request } = load(name);
    const replay = { recording, execute: false, digest: digestOf(text) };
    const limited = await foldHolds(
      { request: { ...request, limits: { ...request.limits, max_steps: 1 } } },
      libraryPlan({ contextPolicy: "bounded" }),
      {
        replay,
      },
    );
    assert.equal(limited.outcome, "step_limit");

    const cut = { ...recording, answers: recording.answers.slice(0, 3) };
    const failed = await foldHolds({ request }, libraryPlan({ contextPolicy: "bounded" }), {
      replay: { recording: cut, execute: false },
    });
    assert.equal(failed.outcome, "failed");
    assert.ok(failed.events.some((e) => e.type === "model-called"));

    // A call that went out and failed counts in the report; the stream says so with a model-called of null usage.
    const refused = await foldHolds({ request }, libraryPlan({ contextPolicy: "legacy" }), {
      replay,
      provider: {
        name: "unavailable",
        capabilities: { prompt_caching: false, schema_enforcement: false },
        complete: () => Promise.reject(new ProviderError("HTTP 503 from the provider", { status: 503 })),
      },
    });
    assert.equal(refused.outcome, "failed");
    const called = refused.events.filter((e) => e.type === "model-called");
    assert.equal(called.length, 1);
    assert.deepEqual(called[0].usage, { input: null, cache_read: null, cache_write: null, output: null });

    const controller = new AbortController();
    let seen = 0;
    const interrupted = await foldHolds({ request }, libraryPlan({ contextPolicy: "legacy" }), {
      replay,
      signal: controller.signal,
      onEvent: () => {
        if (++seen === 4) controller.abort();
      },
    });
    assert.equal(interrupted.outcome, "interrupted");

    const buggy = await foldHolds({ request }, libraryPlan({ contextPolicy: "bounded" }), {
      replay,
      executor: () => ({
        revision: "r0",
        execute: () => Promise.reject(new TypeError("a bug in an executor")),
      }),
    });
    assert.equal(buggy.outcome, "failed");
  });
}

test("startup failures fold: an invalid request, a missing workspace", async () => {
  const invalid = await foldHolds(
    { request: { intent: "x" } as unknown as SliceRequest },
    libraryPlan({ contextPolicy: "bounded" }),
  );
  assert.equal(invalid.outcome, "startup_failed");
  assert.deepEqual(invalid.events.map((e) => e.type), ["run-ended"]);

  const { request } = load(workflows[0]);
  const missing = await foldHolds(
    { request: { ...request, workspace: join(tmpdir(), "loom-no-such-workspace") } },
    libraryPlan({ contextPolicy: "legacy" }),
  );
  assert.equal(missing.outcome, "startup_failed");
});

test("a stream that never ended does not fold", () => {
  assert.throws(() => foldReport([], { version: VERSION }), UnendedStreamError);
});

test("stream-json, folded, is the report file the command wrote, byte for byte", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-fold-"));
  try {
    for (const name of workflows) {
      const reportPath = join(dir, `${name}.report.json`);
      const { io, out } = fakeIo({ cwd: ROOT });
      await main([
        "replay",
        join(WORKFLOWS, name),
        "--context-policy",
        "bounded",
        "--output-format",
        "stream-json",
        "--quiet",
        "--context-report",
        reportPath,
      ], io);
      const events = out.stdout.trim().split("\n").map((line) => JSON.parse(line) as RunEvent);
      assert.equal(events.at(-1)?.type, "result");
      assert.equal(`${serialised(foldReport(events, { version: VERSION }))}\n`, readFileSync(reportPath, "utf8"));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
