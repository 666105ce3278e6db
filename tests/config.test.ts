// Defaults people expect: LOOM_MODEL, LOOM_CONTEXT_POLICY, LOOM_PROVIDER_BASE_URL and a user config file
// ($XDG_CONFIG_HOME/loom/config.jsonc) under one precedence — flag > environment > config file > built-in — shown by
// `loom config` with where each value came from; --base-url for an OpenAI-compatible server on any port.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { z } from "zod";
import { formatZodError } from "../lib/text/zod-error.ts";
import { main } from "../main.ts";
import { resolveSettings, type SettingName, SETTINGS } from "../lib/config.ts";
import {
  anthropicAnswer,
  openAIAnswer,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";
import { ROOT } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";

function home(t: { after: (fn: () => void) => void }, config?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-config-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  if (config !== undefined) {
    mkdirSync(join(dir, "xdg", "loom"), { recursive: true });
    writeFileSync(join(dir, "xdg", "loom", "config.jsonc"), config);
  }
  return dir;
}

async function loom(argv: string[], { cwd, env }: { cwd: string; env: Record<string, string> }) {
  const { io, out } = fakeIo({ cwd, env });
  const code = await main(argv, io);
  return { code, ...out };
}

test("precedence: a flag over the environment over the config file over the built-in default", () => {
  const names = Object.keys(SETTINGS) as SettingName[];
  const values: Record<SettingName, string[]> = {
    model: ["anthropic/a", "openai/b"],
    context_policy: ["legacy", "bounded"],
    base_url: ["http://127.0.0.1:1/v1", "https://example.test/v1"],
  };
  fc.assert(fc.property(
    fc.record(Object.fromEntries(names.map((n) => [n, fc.tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.nat(1))]))),
    (given) => {
      const flags: Record<string, string> = {}, env: Record<string, string> = {}, config: Record<string, string> = {};
      for (const n of names) {
        const [flag, fromEnv, fromConfig, k] = given[n];
        if (flag) flags[n] = values[n][k];
        if (fromEnv) env[SETTINGS[n].env] = values[n][1 - k];
        if (fromConfig) config[SETTINGS[n].field] = values[n][k];
      }
      const resolved = resolveSettings({ flags, env, config });
      if (!resolved.ok) throw new Error(resolved.message);
      for (const n of names) {
        const [flag, fromEnv, fromConfig] = given[n];
        const s: { value: string | null; source: string | null } = resolved.settings[n];
        const expected = flag
          ? "flag"
          : fromEnv
          ? "environment"
          : fromConfig
          ? "config"
          : SETTINGS[n].builtIn
          ? "built-in"
          : null;
        assert.equal(s.source, expected, n);
        const value = flag
          ? flags[n]
          : fromEnv
          ? env[SETTINGS[n].env]
          : fromConfig
          ? config[SETTINGS[n].field]
          : SETTINGS[n].builtIn;
        assert.equal(s.value, value, n);
      }
    },
  ));
});

test("loom config shows each setting, its value and where it came from; --json says the same", async (t) => {
  const dir = home(t, `// my defaults\n{ "context_policy": "bounded", "model": "openai/gpt-from-config" }\n`);
  const env = { XDG_CONFIG_HOME: join(dir, "xdg"), LOOM_MODEL: "anthropic/claude-from-env" };
  const text = await loom(["config"], { cwd: dir, env });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`^config file: ${join(dir, "xdg", "loom", "config.jsonc")}$`, "m"));
  assert.match(text.stdout, /^model +anthropic\/claude-from-env +LOOM_MODEL$/m);
  assert.match(text.stdout, /^context_policy +bounded +config file$/m);
  assert.match(
    text.stdout,
    /^base_url +— +not set \(--base-url, LOOM_PROVIDER_BASE_URL or "base_url" in the config file\)$/m,
  );
  const json = JSON.parse((await loom(["config", "--json"], { cwd: dir, env })).stdout);
  assert.deepEqual(json.settings.model, {
    value: "anthropic/claude-from-env",
    source: "environment",
    from: "LOOM_MODEL",
  });
  assert.equal(json.settings.context_policy.source, "config");
  assert.deepEqual(json.file, { path: join(dir, "xdg", "loom", "config.jsonc"), found: true });
  // Without the file, the built-in default.
  const bare = JSON.parse(
    (await loom(["config", "--json"], { cwd: dir, env: { XDG_CONFIG_HOME: join(dir, "none") } })).stdout,
  );
  assert.deepEqual(bare.settings.context_policy, { value: "legacy", source: "built-in", from: null });
  assert.equal(bare.file.found, false);
});

test("a bad config file or variable is one line naming the file and field, or the variable (exit 2)", async (t) => {
  const dir = home(t, `{ "model": "gpt-4o", "colour": true }`);
  const env = { XDG_CONFIG_HOME: join(dir, "xdg") };
  const bad = await loom(["config"], { cwd: dir, env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^loom config: .*config\.jsonc: .*colour: unknown key/);
  assert.equal(bad.stderr.split("\n").length, 2);
  writeFileSync(join(dir, "xdg", "loom", "config.jsonc"), `{ "model": "gpt-4o" }`);
  assert.match((await loom(["config"], { cwd: dir, env })).stderr, /config\.jsonc: model: expected PROVIDER\/MODEL\n$/);
  writeFileSync(join(dir, "xdg", "loom", "config.jsonc"), `{}`);
  const policy = await loom(["replay", "x.jsonl"], { cwd: dir, env: { ...env, LOOM_CONTEXT_POLICY: "tight" } });
  assert.equal(policy.code, 2);
  assert.match(policy.stderr, /^loom replay: LOOM_CONTEXT_POLICY "tight": /);
});

test('LOOM_MODEL makes loom run "TEXT" a prompt; --base-url reaches an OpenAI-compatible server on any port; LOOM_CONTEXT_POLICY applies', async (t) => {
  const dir = home(t, `{ "base_url": "http://127.0.0.1:9/never" }`);
  cpSync(resolve(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
  const server = await startOpenAIServer((_r, i) =>
    openAIAnswer([{ action: "finish" }, { status: "success", summary: "Looked around." }][Math.min(i, 1)])
  );
  t.after(() => server.close());
  const env = {
    XDG_CONFIG_HOME: join(dir, "xdg"),
    LOOM_MODEL: "openai-compatible/qwen-test",
    LOOM_CONTEXT_POLICY: "bounded",
  };
  const r = await loom(
    [
      "run",
      "Say what this project does",
      "-w",
      "ws",
      "--base-url",
      server.baseUrl,
      "--json",
      "-q",
      "--context-report",
      "r.json",
    ],
    { cwd: dir, env },
  );
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.equal(JSON.parse(r.stdout).summary, "Looked around.");
  assert.equal(server.requests.length, 2);
  assert.equal(JSON.parse(readFileSync(join(dir, "r.json"), "utf8")).policy, "bounded");
  // Without the flag, the config's base_url is used: nothing listens there, and the error names it once.
  const unreachable = await loom(["run", "Say what this project does", "-w", "ws", "-q"], { cwd: dir, env });
  assert.equal(unreachable.code, 1);
  assert.match(
    unreachable.stderr,
    /^loom run: Could not reach OpenAI-compatible server at http:\/\/127\.0\.0\.1:9\/never: [^\n]+$/m,
  );
  assert.equal(unreachable.stderr.match(/127\.0\.0\.1:9/g)?.length, 1, "the server is named once");
  // A missing request file stays a request file, never a prompt.
  const missing = await loom(["run", "request.json"], { cwd: dir, env });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Cannot read request "request\.json"/);
  const badUrl = await loom(["run", "x y", "--base-url", "localhost:8080"], { cwd: dir, env });
  assert.match(badUrl.stderr, /^loom run: --base-url "localhost:8080": expected an http\(s\) URL\n$/);
});

test("enum errors are worded, not zod's raw text: in the config file, a variable and any validated file", async (t) => {
  const dir = home(t, `{ "context_policy": "tight" }`);
  const bad = await loom(["config"], { cwd: dir, env: { XDG_CONFIG_HOME: join(dir, "xdg") } });
  assert.match(bad.stderr, /config\.jsonc: context_policy: expected one of "legacy", "bounded"\n$/);
  assert.doesNotMatch(bad.stderr, /Invalid option|\|/);
  const env = await loom(["config"], {
    cwd: dir,
    env: { LOOM_CONTEXT_POLICY: "tight", XDG_CONFIG_HOME: join(dir, "none") },
  });
  assert.equal(env.stderr, 'loom config: LOOM_CONTEXT_POLICY "tight": expected legacy or bounded\n');
  const parsed = z.strictObject({ mode: z.enum(["auto", "off"]) }).safeParse({ mode: "on" });
  assert.ok(!parsed.success);
  assert.equal(formatZodError(parsed.error, { worded: true }), 'mode: expected one of "auto", "off"');
  const sizes = z.strictObject({
    command: z.array(z.string()).min(1),
    timeout: z.number().positive(),
    name: z.string(),
  })
    .safeParse({ command: [], timeout: 0 });
  assert.ok(!sizes.success);
  assert.equal(
    formatZodError(sizes.error, { worded: true }),
    "command: expected a non-empty list; timeout: expected more than 0; name: required field missing (expected string)",
  );
  // The loop's re-asks keep zod's wording, so replays of earlier recordings send the same bytes.
  assert.match(formatZodError(parsed.error), /^mode: Invalid option: expected one of "auto"\|"off"$/);
});

test("the config's base_url is below the provider's own variable; --base-url is above it", async (t) => {
  const dir = home(t, `{ "base_url": "http://127.0.0.1:9/v1" }`);
  cpSync(resolve(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
  const answers = [{ action: "finish" }, { status: "success", summary: "Done." }];
  const server = await startAnthropicServer((_r, i) => anthropicAnswer(answers[i % 2]));
  t.after(() => server.close());
  const env = {
    XDG_CONFIG_HOME: join(dir, "xdg"),
    ANTHROPIC_API_KEY: "sk-ant-config-test-0123456789",
    ANTHROPIC_BASE_URL: server.baseUrl,
  };
  const viaVariable = await loom(["run", "Look around", "-m", "anthropic/claude-test", "-w", "ws", "-q"], {
    cwd: dir,
    env,
  });
  assert.equal(viaVariable.code, 0, viaVariable.stderr);
  assert.equal(server.requests.length, 2, "ANTHROPIC_BASE_URL won over the config file");
  const viaFlag = await loom(
    [
      "run",
      "Look around",
      "-m",
      "anthropic/claude-test",
      "-w",
      "ws",
      "-q",
      "--base-url",
      "http://127.0.0.1:9",
      "--provider-deadline-ms",
      "2000",
    ],
    { cwd: dir, env },
  );
  assert.equal(viaFlag.code, 1);
  assert.match(viaFlag.stderr, /Could not reach .*127\.0\.0\.1:9/, "--base-url won over ANTHROPIC_BASE_URL");
  assert.equal(server.requests.length, 2);
});

test("with a default model, loom run - is a prompt unless stdin holds a JSON object (a request)", async (t) => {
  const dir = home(t);
  cpSync(resolve(ROOT, "testdata/example-project"), join(dir, "ws"), { recursive: true });
  const server = await startOpenAIServer((_r, i) =>
    openAIAnswer([{ action: "finish" }, { status: "success", summary: "Read it." }][Math.min(i, 1)])
  );
  t.after(() => server.close());
  const env = {
    XDG_CONFIG_HOME: join(dir, "none"),
    LOOM_MODEL: "openai-compatible/m",
    LOOM_PROVIDER_BASE_URL: server.baseUrl,
  };
  const run = async (stdin: string) => {
    const { io, out } = fakeIo({ cwd: dir, env, stdin });
    return { code: await main(["run", "-", "-w", "ws", "-q", "--json"], io), ...out };
  };
  const prompt = await run("Read the README\n");
  assert.equal(prompt.code, 0, prompt.stderr);
  assert.equal(JSON.parse(prompt.stdout).summary, "Read it.");
  const request = await run('{ "intent": "x" }');
  assert.equal(request.code, 2);
  assert.match(request.stderr, /^loom run: stdin: invalid SliceRequest: instructions: required field missing/);
});
