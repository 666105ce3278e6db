// A step table's rows (lib/report/step-rows.ts): long runs of similar steps and over-long tables collapse into
// "… K more steps" rows, and no step is lost or shown twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { STEP_ROWS, stepRows } from "../lib/report/step-rows.ts";
import type { StepRecord } from "../lib/report/context-report.ts";

const step = (n: number, action: string, status = "ok"): StepRecord => ({
  step: n,
  action,
  target: null,
  report: "read",
  status,
  exit_code: null,
  revision: "r0",
});

const kinds = fc.array(fc.constantFrom("read_file", "edit_file", "run_tests"), { minLength: 0, maxLength: 3000 });

test("every step is shown once or counted in exactly one gap, in order, and the rows stay within the limit", () => {
  fc.assert(
    fc.property(kinds, (actions) => {
      const steps = actions.map((action, i) => step(i + 1, action));
      const rows = stepRows(steps);
      let next = 1;
      for (const row of rows) {
        if (row.kind === "step") {
          assert.equal(row.step.step, next);
          next += 1;
        } else {
          assert.equal(row.first, next);
          assert.equal(row.last, next + row.count - 1);
          next += row.count;
        }
      }
      assert.equal(next, steps.length + 1);
      assert.ok(rows.length <= STEP_ROWS.rows + 1, `${rows.length} rows`);
    }),
    { numRuns: 200 },
  );
});

test("a short or varied table is shown whole; a run of similar steps keeps its ends", () => {
  const varied = ["read_file", "edit_file", "run_tests"].map((a, i) => step(i + 1, a));
  assert.deepEqual(stepRows(varied).map((r) => r.kind), ["step", "step", "step"]);
  const same = Array.from({ length: 20 }, (_, i) => step(i + 1, "read_file"));
  const rows = stepRows(same);
  assert.deepEqual(rows.map((r) => r.kind === "step" ? r.step.step : `gap ${r.count}`), [
    1,
    2,
    3,
    "gap 14",
    18,
    19,
    20,
  ]);
  // A refused step among them is never hidden in the gap of the ok ones.
  same[9] = step(10, "read_file", "refused");
  assert.ok(stepRows(same).some((r) => r.kind === "step" && r.step.status === "refused"));
});
