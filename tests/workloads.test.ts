// The ceiling over every shipped workload: each real trajectory in ../shared/workloads (80 mini-swe-agent, 13
// SWE-agent) and each recorded workflow in testdata/ is replayed under both policies. Every bounded request stays
// within 64 KiB, measured independently of the loop's own count, retained events show the SPEC's preview floor,
// and the two policies end the same way with the same execution reports. Without the workloads folder only the
// recorded workflows run (tests/helpers/workloads.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { emptyAnatomy, measureRequest, MeasuringProvider } from "../bench/anatomy.ts";
import { listWorkloads, loadWorkload, replayRecording, runNumbers, type System, SYSTEMS } from "../bench/workloads.ts";
import { CEILING_BYTES } from "../lib/context/budget.ts";
import { WORKLOADS, workloadTests } from "./helpers/workloads.ts";

const workloads = listWorkloads(WORKLOADS);
const workloadTest = workloadTests(import.meta.url);

workloadTest("the shipped workloads are all found: 80 mini-swe-agent, 13 SWE-agent, Loom's recorded workflows", () => {
  const count = (system: System) => workloads.filter((w) => w.system === system).length;
  assert.equal(count("mini-swe-agent"), 80);
  assert.equal(count("swe-agent"), 13);
  assert.ok(count("loom testdata") >= 2, `${count("loom testdata")} recorded workflows in testdata/workflows`);
  assert.deepEqual([...new Set(workloads.map((w) => w.system))], [...SYSTEMS]);
});

test("the preview-floor check flags a short preview: 512 B in the events, 8 KiB with the newest event's view", () => {
  const ref = `sha256:${"0".repeat(64)}`;
  const preview = (bytes: number, shown: number) => ({
    ref,
    bytes,
    head: "h".repeat(shown / 2),
    tail: "t".repeat(shown / 2),
    omitted: bytes - shown,
  });
  const request = (events: unknown[], view?: Record<string, unknown>) => ({
    phase: "selection" as const,
    response_schema: {},
    sections: [
      { section: "events" as const, events },
      ...(view ? [{ section: "newest" as const, step: 2, view }] : []),
    ],
  });
  const check = (events: unknown[], view?: Record<string, unknown>) => {
    const anatomy = emptyAnatomy();
    measureRequest(request(events, view), anatomy);
    return anatomy.floor;
  };
  const older = { step: 1, action: "run_command", output: preview(4000, 512) };
  const newest = { step: 2, action: "run_command", output: preview(20_000, 512) };
  const continued = (shown: number) => ({
    ref,
    from: 256,
    to: 19_744,
    head: "h".repeat(shown / 2),
    tail: "t".repeat(shown / 2),
    omitted: 19_488 - shown,
    rest: `${ref}#bytes=1-2`,
  });
  assert.deepEqual(check([older, newest], { output: continued(8192 - 512) }), {
    checked: 3,
    violations: 0,
    worst: null,
  });
  assert.equal(check([{ ...older, output: preview(4000, 256) }, { step: 2, action: "print" }]).violations, 1);
  // The newest execution's output needs 8 KiB, its preview and its view together.
  assert.deepEqual(check([older, newest], { output: continued(512) }).worst, { needed: 8192, shown: 1024 });
});

for (const workload of workloads) {
  test(`${workload.system} ${workload.name}: bounded requests stay within 64 KiB, same execution reports as legacy`, async () => {
    const { recording } = loadWorkload(workload);
    const legacy = runNumbers(await replayRecording(recording, "legacy"));
    let measuring: MeasuringProvider | undefined;
    const bounded = runNumbers(
      await replayRecording(recording, "bounded", { wrap: (p) => (measuring = new MeasuringProvider(p)) }),
    );
    const anatomy = measuring!.anatomy;

    assert.equal(anatomy.requests, bounded.calls);
    assert.equal(anatomy.bytes, bounded.requestBytes, "the loop counts request bytes exactly");
    assert.ok(anatomy.maxBytes <= CEILING_BYTES, `largest bounded request: ${anatomy.maxBytes} bytes`);
    assert.equal(bounded.maxRequestBytes, anatomy.maxBytes);
    // A transcript past the ceiling has outputs the tail must cut: the floor check below is not vacuous there.
    if (legacy.maxRequestBytes > CEILING_BYTES) {
      assert.ok(anatomy.floor.checked > 0, "retained events show cut previews");
    }
    assert.equal(
      anatomy.floor.violations,
      0,
      `previews shorter than the floor: ${anatomy.floor.violations}, worst ${JSON.stringify(anatomy.floor.worst)}`,
    );

    if (workload.format !== "loom") assert.equal(legacy.outcome, "completed", legacy.error ?? "");
    assert.equal(bounded.outcome, legacy.outcome, bounded.error ?? "");
    assert.equal(bounded.calls, legacy.calls);
    assert.ok(bounded.reports === legacy.reports, "the execution reports differ between the policies");
    // a workflow long enough to retire costs fewer request bytes under bounded
    if (bounded.checkpoints > 0 || legacy.maxRequestBytes > CEILING_BYTES) {
      assert.ok(bounded.requestBytes < legacy.requestBytes);
    }
  });
}
