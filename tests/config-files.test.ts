// Settings people expect (issue 36; issue 35's defect 4): the run limits in the user's config.jsonc, a project's
// `.loom/config.jsonc` found from the workspace upward (below flags and environment, above the user's file) that can
// never widen a run, `loom config` showing every value a run uses with its source (defaults included), and
// --require-passing-tests without a test a usage error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { anthropicAnswer, startAnthropicServer } from "./helpers/fake-provider-servers.ts";

type Row = { value: unknown; source: string | null; from: string | null };

function folders(t: { after: (fn: () => unknown) => void }) {
  const root = mkdtempSync(join(tmpdir(), "loom-config-files-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, "home"), project = join(root, "project"), deep = join(project, "src", "deep");
  mkdirSync(join(home, ".config", "loom"), { recursive: true });
  mkdirSync(deep, { recursive: true });
  const user = (config: unknown) => writeFileSync(join(home, ".config/loom/config.jsonc"), JSON.stringify(config));
  const projectFile = (config: unknown) => {
    mkdirSync(join(project, ".loom"), { recursive: true });
    writeFileSync(join(project, ".loom/config.jsonc"), JSON.stringify(config));
  };
  const loom = async (args: string[], cwd = deep, env: Record<string, string> = {}) => {
    const { io, out } = fakeIo({ cwd, env: { HOME: home, ...env } });
    const code = await main(args, io);
    return { code, ...out };
  };
  const config = async (args: string[] = []) => {
    const r = await loom(["config", "--model", "anthropic/claude-sonnet-5-5", "--json", ...args]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).settings as Record<string, Row>;
  };
  return { root, project, deep, user, projectFile, loom, config };
}

test("loom config shows the defaults a run applies: max_steps 30 and the provider's 60,000 ms deadline, source default", async (t) => {
  const f = folders(t);
  const s = await f.config();
  assert.deepEqual(s.max_steps, { value: 30, source: "default", from: null });
  assert.deepEqual(s.provider_deadline_ms, { value: 60_000, source: "default", from: null });
  assert.deepEqual(s.provider_idle_timeout_ms, { value: 30_000, source: "default", from: null });
});

test("config.jsonc takes max_steps and the provider limits; the project's file is above it, flags above both", async (t) => {
  const f = folders(t);
  f.user({ max_steps: 12, provider_deadline_ms: 90_000 });
  let s = await f.config();
  assert.equal(s.max_steps?.value, 12);
  assert.equal(s.max_steps?.source, "config");
  assert.equal(s.provider_deadline_ms?.value, 90_000);
  f.projectFile({ max_steps: 4, provider_deadline_ms: 20_000, context_policy: "bounded" });
  s = await f.config();
  assert.deepEqual([s.max_steps?.value, s.max_steps?.source], [4, "project"], "found from a folder below the project");
  assert.match(String(s.max_steps?.from), /project\/\.loom\/config\.jsonc: max_steps$/);
  assert.deepEqual([s.provider_deadline_ms?.value, s.provider_deadline_ms?.source], [20_000, "project"]);
  assert.deepEqual([s.context_policy?.value, s.context_policy?.source], ["bounded", "project"]);
  s = await f.config(["--max-steps", "7"]);
  assert.deepEqual([s.max_steps?.value, s.max_steps?.source], [7, "flag"]);
});

test("a project's file can never widen a run: no base URL, key variable, model or sandbox; no step limit above the user's", async (t) => {
  const f = folders(t);
  for (
    const [field, value] of [
      ["base_url", "http://127.0.0.1:9/v1"],
      ["api_key_env", "OTHER_API_KEY"],
      ["model", "openai/gpt-5.6"],
      ["sandbox", "off"],
    ] as const
  ) {
    f.projectFile({ [field]: value });
    const r = await f.loom(["config", "--model", "anthropic/claude-sonnet-5-5"]);
    assert.equal(r.code, 2, field);
    assert.match(
      r.stderr,
      new RegExp(`\\.loom/config\\.jsonc: ${field} cannot be set in a project's file: `),
      r.stderr,
    );
    assert.equal(r.stderr.trim().split("\n").length, 1, "one line");
  }
  f.projectFile({ max_steps: 31 });
  let r = await f.loom(["config"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /max_steps 31 is above the user's limit 30 \(the default\): a project's file may only lower/);
  // The user's own file may raise it, and then the project may use up to that.
  f.user({ max_steps: 40 });
  r = await f.loom(["config", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).settings.max_steps.value, 31);
});

test("a prompt run uses the resolved step limit (run-started says it, from the project's file)", async (t) => {
  const f = folders(t);
  f.projectFile({ max_steps: 3 });
  const answers = [{ action: "finish" }, { status: "success", summary: "done" }];
  const server = await startAnthropicServer((_r, i) => anthropicAnswer(answers[Math.min(i, 1)]));
  t.after(() => server.close());
  const r = await f.loom(
    ["run", "Do it", "--model", "anthropic/claude-test", "--output-format", "stream-json", "--quiet"],
    f.deep,
    { ANTHROPIC_API_KEY: "sk-ant-config-0123456789", ANTHROPIC_BASE_URL: server.baseUrl },
  );
  const events = r.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line));
  assert.equal(events.find((e) => e.type === "run-started")?.max_steps, 3, r.stdout);
});

test("--require-passing-tests without a test command is a usage error (it could never be verified)", async (t) => {
  const f = folders(t);
  const r = await f.loom(["run", "Do it", "--model", "anthropic/claude-test", "--require-passing-tests"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--require-passing-tests needs --test-command CMD: without a test to run, the run can never/);
});
