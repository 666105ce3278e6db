// Defaults people expect: LOOM_MODEL, LOOM_CONTEXT_POLICY, LOOM_PROVIDER_BASE_URL and a user config file
// ($XDG_CONFIG_HOME/loom/config.jsonc) under one precedence — flag > environment > config file > default — shown by
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
import { PRECEDENCE, resolveSettings } from "../lib/settings/settings.ts";
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

test("precedence: every setting takes the first source its PRECEDENCE row lists, in every combination", () => {
  // Two values per source, so a wrong pick shows; each source present or not.
  const catalogFile = "c.json", requestFile = "r.json";
  fc.assert(fc.property(
    fc.record({
      flag: fc.boolean(),
      env: fc.boolean(),
      config: fc.boolean(),
      catalog: fc.constantFrom("none", "defaults", "slice"),
      request: fc.boolean(),
      providerEnv: fc.boolean(),
    }),
    (given) => {
      const flags = given.flag
        ? {
          context_policy: "bounded" as const,
          step_protocol: "single-call" as const,
          previews: "wide" as const,
          sandbox: "off" as const,
          base_url: "http://flag.test/v1",
        }
        : {};
      const env: Record<string, string> = {};
      if (given.env) {
        Object.assign(env, { LOOM_CONTEXT_POLICY: "legacy", LOOM_SANDBOX: "required", LOOM_MODEL: "openai/env" });
      }
      if (given.providerEnv) env.OPENAI_BASE_URL = "http://provider-env.test/v1";
      const config = given.config
        ? { context_policy: "bounded" as const, model: "openai/config", base_url: "http://config.test/v1" }
        : {};
      const level = {
        context_policy: "legacy" as const,
        step_protocol: "two-call" as const,
        previews: "compact" as const,
      };
      const catalog = given.catalog === "none" || given.request ? null : {
        file: catalogFile,
        models: { m: { kind: "openai" as const, model: "cat-model" } },
        defaults: given.catalog === "defaults" ? level : {},
        slice: { name: "s", entry: { model: "m", ...(given.catalog === "slice" ? level : {}) } },
      };
      const request = given.request
        ? {
          file: requestFile,
          model: "openai/request",
          step_protocol: "two-call" as const,
          previews: "compact" as const,
        }
        : null;
      const resolved = resolveSettings({ flags, env, userConfig: { config, file: "cfg" }, catalog, request });
      if (!resolved.ok) throw new Error(resolved.message);
      const s = resolved.settings;
      const present = (name: keyof typeof PRECEDENCE): Record<string, boolean> => ({
        flag: given.flag && name !== "model" && name !== "max_steps" && name !== "api_key_env",
        request: given.request && ["model", "step_protocol", "previews"].includes(name),
        catalog: catalog !== null &&
          (name === "model" ||
            (given.catalog !== "none" && ["context_policy", "step_protocol", "previews"].includes(name))),
        environment: (given.env && ["context_policy", "sandbox", "model"].includes(name)) ||
          (name === "base_url" && given.providerEnv),
        config: given.config && ["context_policy", "model", "base_url"].includes(name),
        default: true,
      });
      const expect = (name: keyof typeof PRECEDENCE) =>
        (PRECEDENCE[name] as readonly string[]).find((source) => present(name)[source]) ?? null;
      for (const name of ["context_policy", "step_protocol", "previews", "sandbox", "model"] as const) {
        assert.equal(s[name].source, expect(name), name);
      }
      // A catalog model's URL comes from the catalog entry (none here), the provider's variable or the built-in.
      if (s.provider !== null && catalog === null) assert.equal(s.provider.base_url.source, expect("base_url"));
      if (catalog !== null) assert.equal(s.provider?.base_url.source, given.providerEnv ? "environment" : "default");
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
  assert.match(text.stdout, /^base_url +https:\/\/api\.anthropic\.com +default$/m);
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
  assert.deepEqual(bare.settings.context_policy, { value: "legacy", source: "default", from: null });
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
