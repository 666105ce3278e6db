// The real third-party trajectories (../shared/workloads, or LOOM_WORKLOADS=DIR) are not part of the repository:
// tests that replay them run when the folder is there and otherwise register as skipped, with one line per test file
// saying how to get it. Everything they check on real files is also checked on hand-made fixtures in tests/fixtures/.
import { join } from "node:path";
import { test } from "node:test";
import { missingWorkloads, workloadsDir } from "../../bench/workloads.ts";

const dir = workloadsDir();
const missing = missingWorkloads(dir);

/** The workloads folder, or null when it is missing. */
export const WORKLOADS: string | null = missing === null ? dir : null;

/** A path inside the workloads folder (only call it from a test registered by `workloadTests`). */
export function workload(path: string): string {
  if (WORKLOADS === null) throw new Error(missing!);
  return join(WORKLOADS, path);
}

type TestFn = () => void | Promise<void>;

/**
 * Returns `test` for tests that need the workloads: a plain test when the folder exists, otherwise a skipped one. The
 * first skip in a file prints one line naming the file and how to get the folder.
 */
export function workloadTests(file: string): (name: string, fn: TestFn) => void {
  const label = file.split("/").at(-1);
  let announced = false;
  return (name, fn) => {
    if (WORKLOADS !== null) return void test(name, fn);
    if (!announced) console.log(`${label}: skipping the tests on real trajectories: ${missing}`);
    announced = true;
    test.skip(`${name} (skipped: no workloads folder)`, () => {});
  };
}
