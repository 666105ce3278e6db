// `loom config` prints exactly what a run would use: in every combination of sources (flag, environment, config file,
// catalog, request file), the same flags and files given to `loom config --json` and to `loom run` agree on the
// policy, model, step protocol, previews, sandbox mode, step limit and the base URL the requests really reach. Both
// read lib/settings/settings.ts's one resolveSettings; before it, the config file's base_url was shown while the
// run went to the provider's variable, and a catalog's policy was merged at three more sites.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { type FakeProviderServer, openAIAnswer, startOpenAIServer } from "./helpers/fake-provider-servers.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { ROOT } from "./helpers/binary.ts";

/** The answers of one run: a finish, in the protocol the run uses (the one `loom config` announced). */
const script = { protocol: "two-call", call: 0 };
const answer = () =>
  openAIAnswer(
    script.protocol === "single-call"
      ? { action: "finish", reason: "done", args: { status: "success", summary: "Done." } }
      : script.call++ % 2 === 0
      ? { action: "finish" }
      : { status: "success", summary: "Done." },
  );

type Combination = {
  flags: boolean;
  env: boolean;
  providerEnv: boolean;
  config: boolean;
  input: "prompt" | "request" | "catalog";
};

function combinations(): Combination[] {
  const out: Combination[] = [];
  for (const input of ["prompt", "request", "catalog"] as const) {
    for (const flags of [false, true]) {
      for (const env of [false, true]) {
        for (const providerEnv of [false, true]) {
          for (const config of [false, true]) out.push({ flags, env, providerEnv, config, input });
        }
      }
    }
  }
  return out;
}

test("loom config --json and loom run agree on every setting in every source combination", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-settings-"));
  mkdirSync(join(dir, "ws"));
  writeFileSync(join(dir, "ws", "a.txt"), "a\n");
  // One server per place a base URL can come from: the run's requests show which one won.
  const servers: Record<string, FakeProviderServer> = {};
  for (const name of ["flag", "loomEnv", "providerEnv", "config", "catalog"]) {
    servers[name] = await startOpenAIServer(answer);
  }
  t.after(async () => {
    for (const server of Object.values(servers)) await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const catalogFile = join(dir, "catalog.json");
  const level = { context_policy: "bounded", step_protocol: "single-call", previews: "compact" };
  writeFileSync(
    catalogFile,
    JSON.stringify({
      models: { m: { kind: "openai-compatible", model: "cat-model", base_url: servers.catalog.baseUrl } },
      defaults: { ...level, workspace: "ws" },
      slices: {
        s: {
          description: "finish",
          intent: "{{request}}",
          instructions: "Finish.",
          actions: ["read_file", "finish"],
          test: { command: ["true"], timeout_ms: 5000 },
          model: "m",
          limits: { max_steps: 4 },
          previews: "wide",
        },
      },
      routes: { default: "s" },
    }),
  );
  const requestFile = join(dir, "request.json");
  writeFileSync(
    requestFile,
    JSON.stringify({
      intent: "Finish.",
      instructions: "Finish.",
      workspace: "ws",
      actions: ["read_file", "finish"],
      test: { command: ["true"], timeout_ms: 5000 },
      model: "openai/req-model",
      limits: { max_steps: 3 },
      step_protocol: "single-call",
    }),
  );
  mkdirSync(join(dir, "xdg", "loom"), { recursive: true });
  const configFile = join(dir, "xdg", "loom", "config.jsonc");
  writeFileSync(
    configFile,
    JSON.stringify({ context_policy: "legacy", base_url: servers.config.baseUrl, model: "openai/cfg" }),
  );

  let compared = 0;
  for (const c of combinations()) {
    const env: Record<string, string> = {
      XDG_CONFIG_HOME: c.config ? join(dir, "xdg") : join(dir, "none"),
      OPENAI_API_KEY: "sk-settings-test-0123456789",
    };
    if (c.env) {
      Object.assign(env, {
        LOOM_CONTEXT_POLICY: "bounded",
        LOOM_SANDBOX: "off",
        LOOM_PROVIDER_BASE_URL: servers.loomEnv.baseUrl,
      });
    }
    // The catalog's model is openai-compatible (its own base_url); the others are openai/…, whose variable this is.
    if (c.providerEnv) env.OPENAI_BASE_URL = servers.providerEnv.baseUrl;
    const flags = c.flags
      ? ["--context-policy", "legacy", "--step-protocol", "two-call", "--previews", "balanced", "--sandbox", "off"]
      : [];
    const input = c.input === "prompt"
      ? {
        run: ["Finish.", "--model", "openai/prompt-model", "-w", "ws", ...(c.flags ? ["--max-steps", "5"] : [])],
        config: ["--model", "openai/prompt-model", ...(c.flags ? ["--max-steps", "5"] : [])],
        baseUrl: c.flags ? ["--base-url", servers.flag.baseUrl] : [],
      }
      : c.input === "request"
      ? { run: ["request.json"], config: ["--request", "request.json"], baseUrl: [] }
      : {
        run: ["--catalog", "catalog.json", "go"],
        config: ["--catalog", "catalog.json", "--slice", "s"],
        baseUrl: [],
      };
    const label = JSON.stringify(c);

    const shown = fakeIo({ cwd: dir, env });
    const configCode = await main(["config", "--json", ...flags, ...input.config, ...input.baseUrl], shown.io);
    assert.equal(configCode, 0, `${label}: ${shown.out.stderr}`);
    const settings = JSON.parse(shown.out.stdout).settings;

    if (settings.base_url.source === "default") {
      // Nothing names a server: the run would go to the public API, which a test does not call.
      assert.equal(settings.base_url.value, "https://api.openai.com/v1", label);
      continue;
    }
    Object.assign(script, { protocol: settings.step_protocol.value, call: 0 });
    const before = Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, s.requests.length]));
    const ran = fakeIo({ cwd: dir, env });
    const runCode = await main(
      ["run", ...flags, ...input.run, ...input.baseUrl, "--output-format", "stream-json"],
      ran.io,
    );
    assert.equal(runCode, 0, `${label}: ${ran.out.stderr}`);
    const events = ran.out.stdout.trim().split("\n").map((line) => JSON.parse(line));
    const started = events.find((e) => e.type === "run-started");
    assert.ok(started, label);
    assert.equal(started.policy, settings.context_policy.value, `${label}: policy`);
    assert.equal(started.step_protocol, settings.step_protocol.value, `${label}: step protocol`);
    assert.equal(started.previews, started.policy === "bounded" ? settings.previews.value : null, `${label}: previews`);
    assert.equal(started.sandbox.mode, settings.sandbox.value, `${label}: sandbox`);
    assert.equal(started.max_steps, settings.max_steps.value ?? 30, `${label}: max_steps`);
    assert.equal(started.model, settings.model.value, `${label}: model`);
    const reached = Object.entries(servers).filter(([name, s]) => s.requests.length > (before[name] ?? 0));
    assert.deepEqual(reached.map(([, s]) => s.baseUrl), [settings.base_url.value], `${label}: base URL`);
    compared++;
  }
  // 48 combinations; the 3 with no base URL anywhere (a prompt without --base-url, a request file; nothing in the
  // environment or the config file) are shown, not run.
  assert.equal(compared, 45);
});

test("loom replay uses what loom config shows for the recording's slice, in every flag/env/config combination", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-settings-replay-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const recording = join(ROOT, "testdata/workflows/fix-bug.jsonl");
  const header = JSON.parse(readFileSync(recording, "utf8").split("\n")[0] ?? "{}");
  writeFileSync(join(dir, "slice.json"), JSON.stringify({ ...header.slice, workspace: "." }));
  mkdirSync(join(dir, "xdg", "loom"), { recursive: true });
  writeFileSync(join(dir, "xdg", "loom", "config.jsonc"), JSON.stringify({ context_policy: "bounded" }));
  let compared = 0;
  for (const flag of [false, true]) {
    for (const env of [false, true]) {
      for (const config of [false, true]) {
        const environment: Record<string, string> = { XDG_CONFIG_HOME: join(dir, config ? "xdg" : "none") };
        if (env) environment.LOOM_CONTEXT_POLICY = "legacy";
        const flags = flag
          ? ["--context-policy", "bounded", "--step-protocol", "single-call", "--previews", "wide"]
          : [];
        const shown = fakeIo({ cwd: dir, env: environment });
        assert.equal(
          await main(["config", "--json", "--request", "slice.json", ...flags], shown.io),
          0,
          shown.out.stderr,
        );
        const settings = JSON.parse(shown.out.stdout).settings;
        const ran = fakeIo({ cwd: dir, env: environment });
        await main(["replay", recording, ...flags, "--output-format", "stream-json"], ran.io);
        const started = ran.out.stdout.trim().split("\n").map((l) => JSON.parse(l)).find((e) =>
          e.type === "run-started"
        );
        const label = JSON.stringify({ flag, env, config });
        assert.ok(started, `${label}: ${ran.out.stderr}`);
        assert.equal(started.policy, settings.context_policy.value, label);
        assert.equal(started.step_protocol, settings.step_protocol.value, label);
        assert.equal(started.previews, started.policy === "bounded" ? settings.previews.value : null, label);
        compared++;
      }
    }
  }
  assert.equal(compared, 8);
});

test("a local server's call deadline and idle timeout default to ten minutes, shown by loom config with source default", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-local-deadline-"));
  try {
    const env = { XDG_CONFIG_HOME: join(dir, "none") };
    const settingsOf = async (model: string) => {
      const shown = fakeIo({ cwd: dir, env });
      assert.equal(await main(["config", "--json", "-m", model, "--base-url", "http://127.0.0.1:9/v1"], shown.io), 0);
      return JSON.parse(shown.out.stdout).settings;
    };
    const local = await settingsOf("openai-compatible/smollm2-135m");
    assert.deepEqual(
      [local.provider_deadline_ms.value, local.provider_deadline_ms.source],
      [600_000, "default"],
    );
    assert.equal(local.provider_idle_timeout_ms.value, 600_000);
    const hosted = await settingsOf("openai/gpt-5.6-luna");
    assert.equal(hosted.provider_deadline_ms.value, 60_000);
    assert.equal(hosted.provider_idle_timeout_ms.value, 30_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
