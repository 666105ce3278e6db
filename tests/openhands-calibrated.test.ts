// The synthetic OpenHands-style population is calibrated to the shape of 361 real OpenHands runs (issue #30): checked
// by simulation over the benchmark's seeds and a larger sample, within tolerances a few percent wide.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  observationBytes,
  OPENHANDS_CALIBRATED_SEEDS,
  openhandsCalibratedRecording,
  runSteps,
  shapeOf,
} from "./fixtures/openhands-calibrated.ts";
import { replayRecording } from "../bench/workloads.ts";

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

function lcg(seed: number) {
  let s = seed;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 4294967296);
}

test("calibrated OpenHands-style: observation bytes have the real median, p90, p99 and share over 8 KiB", () => {
  const random = lcg(7);
  const sizes = Array.from({ length: 200_000 }, () => observationBytes(random));
  assert.ok(Math.abs(quantile(sizes, 0.5) / 961 - 1) < 0.05, `median ${quantile(sizes, 0.5)}`);
  assert.ok(Math.abs(quantile(sizes, 0.9) / 4844 - 1) < 0.12, `p90 ${quantile(sizes, 0.9)}`);
  assert.ok(Math.abs(quantile(sizes, 0.99) / 30047 - 1) < 0.12, `p99 ${quantile(sizes, 0.99)}`);
  const over = sizes.filter((b) => b > 8192).length / sizes.length;
  assert.ok(Math.abs(over - 0.078) < 0.01, `over 8 KiB ${over}`);
});

test("calibrated OpenHands-style: steps have the real median and p10 under the 50-step limit", () => {
  const random = lcg(11);
  const steps = Array.from({ length: 100_000 }, () => runSteps(random));
  assert.ok(Math.abs(quantile(steps, 0.5) - 49) <= 1, `median ${quantile(steps, 0.5)}`);
  assert.ok(Math.abs(quantile(steps, 0.1) - 23) <= 2, `p10 ${quantile(steps, 0.1)}`);
  assert.ok(Math.max(...steps) <= 50);
});

test("calibrated OpenHands-style: the benchmark's runs have the real action mix and history sizes, and replay", async () => {
  const shapes = OPENHANDS_CALIBRATED_SEEDS.map((seed) => shapeOf(openhandsCalibratedRecording(seed)));
  const actions = shapes.flatMap((s) => s.actions);
  const share = (a: string) => actions.filter((x) => x === a).length / actions.length;
  const editor = share("edit_file") + share("read_file") + share("write_file");
  assert.ok(Math.abs(editor - 0.58) < 0.05, `str_replace_editor ${editor}`);
  assert.ok(Math.abs(share("run_command") - 0.41) < 0.05, `execute_bash ${share("run_command")}`);
  assert.ok(Math.abs(share("edit_file") / editor - 0.61) < 0.08, `str_replace ${share("edit_file") / editor}`);
  const history = shapes.map((s) => s.historyBytes);
  assert.ok(Math.abs(quantile(history, 0.5) / 130_000 - 1) < 0.25, `history median ${quantile(history, 0.5)}`);
  assert.ok(history.filter((h) => h > 48 * 1024).length / history.length >= 0.9, "nearly every run passes 48 KiB");
  for (const seed of OPENHANDS_CALIBRATED_SEEDS.slice(0, 3)) {
    const result = await replayRecording(openhandsCalibratedRecording(seed), "bounded");
    assert.equal(result.outcome, "completed", result.error?.message);
  }
});
