// No test passes only on a fast machine (issue 36): a timeout in a test is a guard against a hang, sized for a loaded
// 2-core machine (CI ran 52.8 minutes there and failed on two 60 s timeouts), never a measure of speed. This holds the
// suite to it: every per-test timeout, the runner's default and every wait for an event are at least these.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** A test's own timeout, the runner's default, and a browser run's guard. */
const MIN_TEST_TIMEOUT_MS = 600_000;
/** A wait for an event (a process gone, a file written) gives up no sooner than this. */
const MIN_WAIT_MS = 30_000;

const number = (text: string) => Number(text.replaceAll("_", ""));

function sources(): { file: string; text: string }[] {
  const dirs = ["tests", "tests/helpers"];
  return dirs.flatMap((dir) =>
    readdirSync(join(ROOT, dir))
      .filter((name) => name.endsWith(".ts") && name !== "test-timeouts.test.ts")
      .map((name) => ({ file: `${dir}/${name}`, text: readFileSync(join(ROOT, dir, name), "utf8") }))
  );
}

test("every test's own timeout and the browser's guard are sized for a loaded 2-core machine", () => {
  const short: string[] = [];
  for (const { file, text } of sources()) {
    // `timeout: N` (a test's option, execFile's guard); values under a second are not timeouts of a test (a schema's
    // field in a fixture). timeout_ms and timeoutMs are what a test is about (a slice's or a provider's limit).
    for (const match of text.matchAll(/\btimeout: (\d[\d_]*)\b/g)) {
      const ms = number(match[1]!);
      if (ms >= 1_000 && ms < MIN_TEST_TIMEOUT_MS) short.push(`${file}: timeout: ${match[1]}`);
    }
    for (const match of text.matchAll(/\blimitMs(?: = |: )(\d[\d_]*)\b/g)) {
      if (number(match[1]!) < MIN_WAIT_MS) short.push(`${file}: limitMs ${match[1]}`);
    }
  }
  assert.deepEqual(short, []);
});

test("the runner's default per-test timeout (scripts/test.sh) is a hang guard too", () => {
  const script = readFileSync(join(ROOT, "scripts/test.sh"), "utf8");
  const match = /bun test --timeout (\d+)/.exec(script);
  assert.ok(match, "scripts/test.sh runs bun test with --timeout");
  assert.ok(Number(match[1]) >= MIN_TEST_TIMEOUT_MS, `--timeout ${match[1]}`);
});
