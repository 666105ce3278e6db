// Credentials never reach the model through a test or command process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runWithOptions } from "../api.ts";
import { secretEnvNames } from "../lib/run/start-run.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { give, pick, sliceRequest } from "./helpers/loop-builders.ts";

test("a variable named in secretEnvNames and the providers' key variables are not visible to the slice's processes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-secret-"));
  const names = ["LLM_CREDS_CUSTOM", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PLAIN_SETTING"];
  const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  try {
    for (const n of names) process.env[n] = `value-of-${n}`;
    writeFileSync(
      join(dir, "env.mjs"),
      `for (const n of ${JSON.stringify(names)}) console.log(n + "=" + (process.env[n] ?? "(unset)"));\n`,
    );
    const provider = new ScriptedProvider([
      pick("run_tests"),
      pick("finish"),
      give({ status: "success", summary: "s" }),
    ], { keepRequests: true });
    const result = await runWithOptions(
      sliceRequest({
        workspace: dir,
        test: { command: ["node", "env.mjs"], timeout_ms: 30_000 },
        sandbox: { env: ["PLAIN_SETTING", "LLM_CREDS_CUSTOM", "OPENAI_API_KEY"] },
      }),
      {
        provider,
        secretEnvNames: ["LLM_CREDS_CUSTOM"],
        contextPolicy: "bounded",
        sandboxGrants: { env: ["PLAIN_SETTING", "LLM_CREDS_CUSTOM", "OPENAI_API_KEY"] },
      },
    );
    assert.equal(result.outcome, "completed");
    const sent = JSON.stringify(provider.requests);
    assert.match(sent, /PLAIN_SETTING=value-of-PLAIN_SETTING/, "the test output did reach the model");
    for (const n of ["LLM_CREDS_CUSTOM", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"]) {
      assert.match(sent, new RegExp(`${n}=\\(unset\\)`));
      assert.ok(!sent.includes(`value-of-${n}`), `${n} leaked`);
    }
  } finally {
    for (const n of names) {
      if (saved[n] === undefined) delete process.env[n];
      else process.env[n] = saved[n];
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

test("secretEnvNames always includes the providers' default key variables", () => {
  const all = secretEnvNames(["X_TOKEN_NAME"]);
  assert.ok(all.includes("ANTHROPIC_API_KEY") && all.includes("OPENAI_API_KEY") && all.includes("X_TOKEN_NAME"));
});
