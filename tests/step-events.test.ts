// What a step event says of a step: the action's target (a path, or a command's argv clipped, credentials in URLs
// redacted, control characters escaped) and its status — never contents or output.
import { test } from "node:test";
import assert from "node:assert/strict";
import { stepOutcome } from "../lib/run-events.ts";
import { utf8Length } from "../lib/text/digest.ts";

const ref = `sha256:${"a".repeat(64)}`;

test("a path is the target; a command's argv is joined, clipped and stripped of credentials", () => {
  assert.deepEqual(stepOutcome({ path: "src/a.ts" }, { kind: "read", path: "src/a.ts", result: ref }), {
    target: "src/a.ts",
    status: "ok",
  });
  const argv = ["curl", "https://user:hunter2@example.com/x", "-d", "y".repeat(400), "\u001b[2J"];
  const command = stepOutcome({ argv }, { kind: "command", argv, exit_code: 0, timed_out: false, output: ref });
  assert.ok(command.target!.startsWith("curl https://"));
  assert.ok(!command.target!.includes("hunter2"), command.target!);
  assert.ok(utf8Length(command.target!) <= 120);
  assert.ok(!command.target!.includes("\u001b"));
  assert.equal(stepOutcome({}, { kind: "finish", status: "success", summary: "done" }).target, null);
});

test("status: ok, failed (non-zero exit, or a failed finish), timed_out, refused", () => {
  const command = (exit_code: number | null, timed_out: boolean) =>
    stepOutcome({ argv: ["x"] }, { kind: "command", argv: ["x"], exit_code, timed_out, output: ref }).status;
  assert.equal(command(0, false), "ok");
  assert.equal(command(2, false), "failed");
  assert.equal(command(null, true), "timed_out");
  assert.equal(stepOutcome({}, { kind: "finish", status: "failure", summary: "gave up" }).status, "failed");
  assert.equal(
    stepOutcome({ path: "../x" }, { kind: "refusal", step: 1, code: "path_outside_workspace", reason: "no" }).status,
    "refused",
  );
});
