// A SliceRequest is put together in one place (sliceRequest): a catalog slice, a prompt and an eval task give the same
// request for the same parts, with no undefined optional field (a recording's header and the report show it as is).
import { test } from "node:test";
import assert from "node:assert/strict";
import { SliceRequest, sliceRequest } from "../lib/slice.ts";
import { promptRequest } from "../lib/prompt-request.ts";

const parts = {
  intent: "Fix the bug",
  instructions: "Work carefully",
  workspace: "/tmp/w",
  actions: ["read_file" as const, "finish" as const],
  test: { command: ["npm", "test"], timeout_ms: 1000 },
  model: "anthropic/claude-sonnet-5-5",
  limits: { max_steps: 5 },
};

test("optional parts left undefined are left out; the ones given are kept", () => {
  const plain = sliceRequest({ ...parts, commands: undefined, sandbox: undefined, effort: undefined });
  assert.deepEqual(Object.keys(plain).sort(), Object.keys(parts).sort());
  assert.equal(SliceRequest.safeParse(plain).success, true);
  const full = sliceRequest({ ...parts, commands: [["node"]], require_passing_tests: false, effort: "high" });
  assert.deepEqual(full, { ...parts, commands: [["node"]], require_passing_tests: false, effort: "high" });
});

test("a prompt's request is the builder's", () => {
  const request = promptRequest({
    text: parts.intent,
    model: parts.model,
    workspace: parts.workspace,
    instructions: parts.instructions,
    actions: ["read_file", "finish"],
    testCommand: ["npm", "test"],
    testTimeoutSeconds: 1,
    maxSteps: 5,
  });
  assert.deepEqual(request, sliceRequest({ ...parts, actions: ["read_file", "finish"] }));
});
