// stream-json and a library caller's onEvent are one stream: the same events in the same order (routing included),
// from run-started to the last step; the command only adds the result line.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { main } from "../main.ts";
import { startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { digestOf } from "../lib/text/digest.ts";
import { parseRecording } from "../lib/recording/recording.ts";
import type { RunEvent } from "../lib/run-events.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Timings differ between two runs of the same recording; everything else must not. */
const timeless = (event: RunEvent) => {
  const { elapsed_ms: _, duration_ms: __, ...rest } = event as RunEvent & { elapsed_ms?: number; duration_ms?: number };
  return rest;
};

for (const workflow of ["fix-bug", "escape-and-suspend"]) {
  test(`replaying ${workflow}: stream-json prints exactly the events onEvent delivers, then the result`, async () => {
    const file = `${ROOT}testdata/workflows/${workflow}.jsonl`;
    const { io, out } = fakeIo({ cwd: ROOT });
    await main(["replay", file, "--context-policy", "bounded", "--output-format", "stream-json", "--quiet"], io);
    const printed = out.stdout.trim().split("\n").map((line) => JSON.parse(line) as RunEvent);
    assert.equal(printed.at(-1)?.type, "result");

    const text = readFileSync(file, "utf8");
    const recording = parseRecording(text);
    const delivered: RunEvent[] = [];
    await startRun(
      { request: { ...recording.header.slice, workspace: "." } },
      libraryPlan({ contextPolicy: "bounded" }),
      {
        replay: { recording, execute: false, digest: digestOf(text) },
        onEvent: (event) => delivered.push(event),
      },
    );
    assert.ok(delivered.length > 3, `only ${delivered.length} events`);
    assert.equal(delivered[0].type, "run-started");
    assert.deepEqual(printed.slice(0, -1).map(timeless), delivered.map(timeless));
    const steps = delivered.filter((e) => e.type === "step-executed");
    assert.ok(steps.length > 0 && steps.every((e) => typeof e.revision === "string" && e.status !== undefined));
  });
}

test("the progress line is a sink of the stream: one progress per call-started, announced before its model call", async () => {
  const text = readFileSync(`${ROOT}testdata/workflows/fix-bug.jsonl`, "utf8");
  const recording = parseRecording(text);
  const delivered: RunEvent[] = [];
  const progress: { at: number; step: number; phase: string; request_bytes: number; max_steps: number }[] = [];
  await startRun(
    { request: { ...recording.header.slice, workspace: "." } },
    libraryPlan({ contextPolicy: "bounded" }),
    {
      replay: { recording, execute: false },
      onEvent: (event) => delivered.push(event),
      onProgress: (p) => p.phase !== "execution" && progress.push({ at: delivered.length, ...p }),
    },
  );
  const started = delivered.flatMap((event, i) => event.type === "call-started" ? [{ event, i }] : []);
  assert.ok(started.length > 2, `${started.length} calls`);
  assert.equal(progress.length, started.length);
  for (const [k, { event, i }] of started.entries()) {
    const shown = progress[k];
    assert.equal(shown.at, i + 1, "the progress comes as its call-started is delivered");
    assert.deepEqual([shown.step, shown.phase, shown.request_bytes], [event.step, event.phase, event.request_bytes]);
    assert.equal(shown.max_steps, recording.header.slice.limits.max_steps);
    const next = delivered[i + 1];
    assert.ok(next.type === "model-called" && next.request_bytes === event.request_bytes, "its model-called follows");
  }
});
