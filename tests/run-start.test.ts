// A run's start speaks with one voice (issue 45): one warning function, which never shows a held key, whoever
// receives it; one shape of a run that never started, for the lifecycle's result and a command's result object.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRun } from "../lib/run/start-run.ts";
import { libraryPlan } from "./helpers/library-plan.ts";
import { NOT_STARTED } from "../lib/loop/loop.ts";
import { holdKeys } from "../lib/io/held-keys.ts";
import { ScriptedProvider } from "../lib/recording/replay.ts";
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { answer, ScriptedExecutor, sliceRequest } from "./helpers/loop-builders.ts";

const KEY = "sk-ant-api03-heldkeyforthewarningtest0123456789";

test("a run's warnings never show a held key: the default (stderr) and a caller's function alike", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-warn-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  holdKeys([KEY]);
  // The diff path is a folder named with the key: the patch cannot be written, and the warning names the path.
  const diff = join(dir, KEY);
  mkdirSync(diff);
  const finish = [answer("selection", { action: "finish" }), answer("arguments", { status: "success", summary: "ok" })];
  const run = (warn?: (message: string) => void) =>
    startRun({ request: sliceRequest({ workspace: dir }) }, libraryPlan({ diff }), {
      provider: new ScriptedProvider(finish),
      executor: (store) => new ScriptedExecutor(store),
      ...(warn ? { warn } : {}),
    });
  const given: string[] = [];
  await run((message) => given.push(message));
  const written: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
  try {
    await run();
  } finally {
    process.stderr.write = write;
  }
  for (const [who, lines] of [["the caller's function", given], ["stderr", written]] as const) {
    const text = lines.join("\n");
    assert.match(text, /Cannot write the diff/, `${who}: ${text}`);
    assert.ok(!text.includes(KEY), `${who} was shown the key: ${text}`);
  }
});

test("a run that never started: the lifecycle's result and a command's result object say the same", async () => {
  const result = await startRun({ request: sliceRequest({ workspace: "/nonexistent/loom-never" }) }, libraryPlan(), {
    provider: new ScriptedProvider([]),
  });
  assert.equal(result.outcome, "startup_failed");
  const { finish, steps, revision, last_test, tests_current, verified, printed, reports } = result;
  assert.deepEqual({ finish, steps, revision, last_test, tests_current, verified, printed, reports }, NOT_STARTED);
  // A usage error has no run: its result object (--json) is NOT_STARTED's too.
  const { io, out } = fakeIo({ cwd: tmpdir() });
  assert.equal(await main(["run", "--json", "--max-steps", "0", "x", "-m", "openai/gpt-5"], io), 2);
  const summary = JSON.parse(out.stdout);
  assert.deepEqual(
    [summary.status, summary.summary, summary.steps, summary.revision, summary.last_test, summary.tests_current],
    [NOT_STARTED.finish, NOT_STARTED.finish, steps, revision, last_test, tests_current],
  );
  assert.deepEqual([summary.verified, summary.printed], [verified, printed]);
});

test("a run is configured one way, by its plan: a setting is never a hook, and a refused setting fails the run's start", async () => {
  const plan = libraryPlan({ contextPolicy: "bounded" });
  const provider = new ScriptedProvider([]);
  // @ts-expect-error a setting option beside the plan: only the plan configures a run
  const mixed: Parameters<typeof startRun>[2] = { provider, contextPolicy: "legacy" };
  // @ts-expect-error the sandbox grants beside the plan (the plan carries the user's)
  const granted: Parameters<typeof startRun>[2] = { provider, sandboxGrants: { network: true } };
  assert.ok(mixed && granted && plan.settings.ok);
  // Settings the resolution refuses are the run's startup failure, with its report: the plan carries the refusal.
  const refused = libraryPlan({}, { env: { LOOM_SANDBOX: "bogus" } });
  assert.equal(refused.settings.ok, false);
  const result = await startRun({ request: sliceRequest() }, refused, { provider });
  assert.equal(result.outcome, "startup_failed");
  assert.match(result.error?.message ?? "", /LOOM_SANDBOX "bogus"/);
  assert.equal(result.report.outcome, "startup_failed");
});
