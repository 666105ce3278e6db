// A command resolves its settings once (issue 35): the flags, the environment and the config files are read and
// checked in one resolution, and a run's request, prompt or catalog (every slice, the classifier) is layered onto it.
// Counted through the environment: each resolution reads LOOM_CONTEXT_POLICY once, into a frozen copy it keeps, so
// the reads of that variable, less those of a command that resolves nothing (main reads every variable once to know
// the values it must redact), are the resolutions. Every command below runs in-process through main().
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { openAIAnswer, type ScriptedResponse, startOpenAIServer } from "./helpers/fake-provider-servers.ts";
import { resolveSettings } from "../lib/settings/settings.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The environment as a command sees it, counting the reads of one variable. */
function countingEnv(env: Record<string, string | undefined>, name: string) {
  const count = { reads: 0 };
  const proxy = new Proxy(env, {
    get(target, key, receiver) {
      if (key === name) count.reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { env: proxy, count };
}

const FINISH = [openAIAnswer({ action: "finish" }), openAIAnswer({ status: "success", summary: "Done." })];

/** A temp dir with the example project, a request file and a catalog whose model is a local stand-in server. */
async function setup(t: { after: (fn: () => unknown) => void }) {
  const dir = mkdtempSync(join(tmpdir(), "loom-once-"));
  cpSync(resolve(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
  const servers: Array<{ close: () => Promise<void> }> = [];
  t.after(async () => {
    for (const server of servers) await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const slice = (intent: string) => ({
    description: intent,
    intent: `${intent}: {{request}}`,
    instructions: "Finish.",
    actions: ["read_file", "finish"],
    test: { command: ["true"], timeout_ms: 5000 },
    model: "m",
    limits: { max_steps: 2 },
  });
  writeFileSync(
    join(dir, "request.json"),
    JSON.stringify({
      intent: "Look around.",
      instructions: "Finish.",
      workspace: "ws",
      actions: ["read_file", "finish"],
      test: { command: ["true"], timeout_ms: 5000 },
      model: "openai-compatible/m",
      limits: { max_steps: 2 },
    }),
  );
  /** Runs a command against a fresh server answering `script` (the catalog's model is that server). */
  const loom = async (args: string[], script: ScriptedResponse[] = []) => {
    const server = await startOpenAIServer(script);
    servers.push(server);
    writeFileSync(
      join(dir, "catalog.json"),
      JSON.stringify({
        models: { m: { kind: "openai-compatible", model: "m", base_url: server.baseUrl } },
        defaults: { workspace: "ws" },
        slices: { a: slice("Fix it"), b: slice("Explain it") },
        routes: { classification: { model: "m", slices: ["a", "b"] }, default: "b" },
      }),
    );
    const env = { XDG_CONFIG_HOME: join(dir, "xdg"), LOOM_CONTEXT_POLICY: "bounded" };
    const { io, out } = fakeIo({ cwd: dir, env });
    const counted = countingEnv(io.env, "LOOM_CONTEXT_POLICY");
    const code = await main(args.map((a) => a === "URL" ? server.baseUrl : a), { ...io, env: counted.env });
    return { code, ...out, reads: counted.count.reads, requests: server.requests.length };
  };
  // A command that resolves no setting: what main itself reads.
  const baseline = (await loom(["schema", "config"])).reads;
  return {
    loom: async (args: string[], script: ScriptedResponse[] = []) => {
      const r = await loom(args, script);
      return { ...r, resolutions: r.reads - baseline };
    },
  };
}

test("one resolution per command: run (request, prompt, catalog routed by a model call), config, replay, doctor", async (t) => {
  const { loom } = await setup(t);
  const cases: Array<[string, string[], ScriptedResponse[], number]> = [
    ["a request file", ["run", "request.json", "--base-url", "URL", "-q", "--context-report", "r1.json"], FINISH, 2],
    ["a prompt", ["run", "Look around", "-m", "openai-compatible/m", "--base-url", "URL", "-w", "ws", "-q"], FINISH, 2],
    [
      "a catalog, classified",
      ["run", "--catalog", "catalog.json", "what is this", "-q", "--context-report", "r2.json"],
      [openAIAnswer({ slice: "b" }), ...FINISH],
      3,
    ],
    ["a catalog, --slice", ["run", "--catalog", "catalog.json", "--slice", "a", "go", "-q"], FINISH, 2],
    ["config", ["config", "--json"], [], 0],
    ["config --request", ["config", "--request", "request.json", "--json"], [], 0],
    ["config --catalog --slice", ["config", "--catalog", "catalog.json", "--slice", "b", "--json"], [], 0],
  ];
  for (const [name, args, script, calls] of cases) {
    const r = await loom(args, script);
    assert.equal(r.code, 0, `${name}: ${r.stderr}${r.stdout}`);
    assert.equal(r.requests, calls, `${name}: model calls`);
    assert.equal(r.resolutions, 1, `${name}: the settings were resolved ${r.resolutions} times`);
  }
  // A replay of a recording (its slice is the request), and doctor (its calls fail against this stand-in; the
  // resolution is what is counted).
  const replay = await loom(["replay", resolve(ROOT, "testdata/workflows/fix-bug.jsonl"), "-q"]);
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal(replay.resolutions, 1, `replay: the settings were resolved ${replay.resolutions} times`);
  const doctor = await loom(["doctor", "-m", "openai-compatible/m", "--base-url", "URL"]);
  assert.ok(doctor.requests > 0, doctor.stderr + doctor.stdout);
  assert.equal(doctor.resolutions, 1, `doctor: the settings were resolved ${doctor.resolutions} times`);
  // A failed run resolves once too (its report still says the policy).
  const refused = await loom(["run", "--catalog", "catalog.json", "--slice", "nope", "go", "-q"]);
  assert.equal(refused.code, 3, refused.stderr);
  assert.equal(refused.resolutions, 1);
});

test("a resolution reads the environment once: a plan's layers never read it again", () => {
  const { env, count } = countingEnv({ LOOM_CONTEXT_POLICY: "bounded" }, "LOOM_CONTEXT_POLICY");
  const resolved = resolveSettings({ env });
  assert.ok(resolved.ok);
  assert.equal(count.reads, 1);
  const request = resolved.plan.request({ file: "r.json", model: "openai/gpt-6-luna" });
  const catalog = resolved.plan.catalog({
    file: "c.json",
    models: { m: { kind: "openai", model: "gpt-6-luna" } },
    slices: { a: { model: "m", context_policy: "legacy" }, b: { model: "m" } },
    classifier: "m",
  });
  assert.equal(count.reads, 1, "layering read the environment again");
  assert.ok(request.ok && catalog.catalog.ok && catalog.slices.a?.ok && catalog.slices.b?.ok);
  // The layers keep the one resolution's values and sources; a slice's own setting wins over the environment.
  assert.deepEqual(request.settings.context_policy, {
    value: "bounded",
    source: "environment",
    from: "LOOM_CONTEXT_POLICY",
  });
  assert.equal(catalog.slices.a.settings.context_policy.value, "legacy");
  assert.equal(catalog.slices.b.settings.context_policy.value, "bounded");
  assert.ok(catalog.classifier?.ok);
  assert.equal(catalog.classifier.provider.model, "gpt-6-luna");
  // The plan cannot be changed by a caller: it is frozen.
  assert.ok(Object.isFrozen(resolved.plan));
});
