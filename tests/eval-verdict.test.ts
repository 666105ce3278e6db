// What a user acts on, from a real evaluation against the stand-in agent: settings written in full, the sandbox of
// every run (and the refusal to run without one unless --sandbox off is said), the disagreeing runs' artifacts in the
// text and as links in the HTML page (which leads with the verdict), check.txt of a check that timed out, and rescore
// after a check was fixed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { main } from "../main.ts";
import type { EvalFile } from "../lib/eval/eval-file.ts";
import { type EvalAgent, startEvalAgent, SUITE_DIR } from "./helpers/eval-agent.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { ROOT } from "./helpers/binary.ts";
import { findBubblewrap } from "../lib/workspace/sandbox.ts";

const MODEL = "anthropic/claude-sonnet-5-5";
const SLOW = { timeout: 600_000 };
const bwrap = findBubblewrap().found ? false : "bubblewrap is not installed";
if (bwrap) console.log(`eval-verdict.test.ts: skipping the sandboxed evaluations: ${bwrap}`);

async function withAgent(fn: (agent: EvalAgent, dir: string) => Promise<void>) {
  const agent = await startEvalAgent({});
  const dir = mkdtempSync(join(tmpdir(), "loom-eval-verdict-"));
  try {
    await fn(agent, dir);
  } finally {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function loom(agent: EvalAgent, args: string[], env: Record<string, string> = {}) {
  const { io, out } = fakeIo({
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      ANTHROPIC_BASE_URL: agent.server.baseUrl,
      ANTHROPIC_API_KEY: "sk-ant-eval-test",
      ...env,
    },
  });
  const code = await main(args, io);
  return { code, ...out };
}

/** A copy of two shipped tasks, with `edit` applied to the suite's tasks. */
function suiteCopy(dir: string, edit: (tasks: { id: string; check: Record<string, unknown> }[]) => void): string {
  const suite = join(dir, "suite");
  const ids = ["range-off-by-one", "clue-in-test-output"];
  mkdirSync(join(suite, "tasks"), { recursive: true });
  for (const id of ids) cpSync(join(SUITE_DIR, "tasks", id), join(suite, "tasks", id), { recursive: true });
  const shipped = JSON.parse(readFileSync(join(SUITE_DIR, "suite.jsonc"), "utf8").replace(/^\/\/.*\n/, ""));
  shipped.tasks = shipped.tasks.filter((t: { id: string }) => ids.includes(t.id));
  edit(shipped.tasks);
  writeFileSync(join(suite, "suite.json"), JSON.stringify(shipped));
  return suite;
}

const readEval = (dir: string): EvalFile => JSON.parse(readFileSync(join(dir, "eval.json"), "utf8"));

test(
  "settings in full, the sandbox of every run, the disagreeing runs' artifacts in text and HTML, then rescore",
  { ...SLOW, skip: bwrap },
  async () => {
    await withAgent(async (agent, dir) => {
      const suite = suiteCopy(dir, () => {});
      const out = join(dir, "out");
      // LOOM_SANDBOX=off in the environment does not turn the sandbox off (a planted .env could set it).
      const run = await loom(agent, ["eval", suite, "--model", MODEL, "--out", out, "--quiet"], {
        LOOM_SANDBOX: "off",
      });
      assert.equal(run.code, 0, run.stderr);
      const ran = readEval(out);
      assert.equal(ran.settings.step_protocol, "two-call");
      assert.equal(ran.settings.previews, "balanced");
      assert.equal(ran.settings.cost_margin, 0.05);
      assert.deepEqual(ran.settings.sandbox, { mode: "required", active: true });
      for (const row of ran.rows) assert.deepEqual(row.sandbox, { mode: "required", active: true });
      assert.ok(!run.stdout.includes("unsandboxed"));
      assert.match(run.stderr, /2 tasks cannot show a 5-point margin, even if the policies agree on every task/);
      // The stand-in's bounded runs usually miss clue-in-test-output's clue, but a loaded machine can cut the test's
      // output short enough to show it: the disagreement is made certain by rebuilding the file with that run
      // unsolved (its artifacts stay where they are).
      const { buildEvalFile } = await import("../lib/eval/assemble.ts");
      const { rows, summary: _, kind: _k, schema_version: _s, loom_version: _l, ...base } = readEval(out);
      const forced = rows.map((r) =>
        r.task === "clue-in-test-output" && r.policy === "bounded" ? { ...r, class: "unsolved" as const } : r
      );
      const file = buildEvalFile(base, { rows: forced, dropped: [], version: readEval(out).loom_version });
      writeFileSync(join(out, "eval.json"), JSON.stringify(file));
      const shown = await loom(agent, ["report", join(out, "eval.json")]);
      assert.equal(shown.code, 0, shown.stderr);
      const pair = file.summary.pairs[0];
      assert.equal(pair.verdict, "inconclusive");
      assert.match(pair.reason, /^2 tasks cannot show a 5-point margin \(that needs ≥ \d+ tasks\)/);
      assert.ok(shown.stdout.includes(pair.sentence), "the text prints the verdict sentence eval.json holds");
      // Numbers as people read them: counts agree with their noun and carry separators, nothing at full float width.
      assert.doesNotMatch(shown.stdout, /\b1 (tasks|calls|runs)\b|(?<![.\d])\d{5,}|\d\.\d{9,}/);
      assert.match(shown.stdout, /; [\d,]+ calls?; /);
      assert.deepEqual(pair.disagreements.map((d) => d.task), ["clue-in-test-output"]);
      // What next: the check output and recording of each disagreeing run, paths that exist.
      const paths = [...shown.stdout.matchAll(/(\S+\/(?:check\.txt|recording\.jsonl))/g)].map((m) => m[1]);
      assert.equal(paths.length, 4, shown.stdout);
      for (const path of paths) assert.ok(existsSync(resolve(ROOT, path)), path);

      // HTML: the verdict leads, the same sentence, links to every disagreeing run's artifacts that resolve.
      const page = join(dir, "pages", "eval.html");
      mkdirSync(dirname(page));
      const html = await loom(agent, ["report", join(out, "eval.json"), "--html", page]);
      assert.equal(html.code, 0, html.stderr);
      const text = readFileSync(page, "utf8");
      const body = text.slice(text.indexOf("<body>"));
      assert.ok(body.indexOf('class="verdict') < body.indexOf("<h2>"), "the verdict comes before every section");
      assert.ok(text.includes('<meta name="viewport"'));
      const links = [...text.matchAll(/href="([^"]+)"/g)].map((m) => decodeURI(m[1]));
      assert.equal(links.filter((l) => l.endsWith("check.txt")).length, 2);
      for (const link of links) assert.ok(existsSync(resolve(dirname(page), link)), link);
      // JSON: the same sentence and the same next line.
      const json = await loom(agent, ["report", join(out, "eval.json"), "--json"]);
      const summary = JSON.parse(json.stdout);
      assert.equal(summary.pairs[0].sentence, pair.sentence);
      assert.equal(summary.next.runs.length, 2);

      // A fixed check: rescore refuses to mix silently, and with --accept-changed-checks records both hashes.
      const check = join(suite, "tasks", "clue-in-test-output", "check", "check.mjs");
      writeFileSync(check, `${readFileSync(check, "utf8")}\n// fixed\n`);
      const refused = await loom(agent, ["eval", "rescore", out]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /check of task "clue-in-test-output" changed .* --accept-changed-checks/);
      const rescored = await loom(agent, ["eval", "rescore", out, "--accept-changed-checks"]);
      assert.equal(rescored.code, 0, rescored.stderr);
      const after = readEval(out);
      assert.equal(after.summary.rescored, true);
      assert.equal(after.rescore!.changed_checks.length, 1);
      const changed = after.rescore!.changed_checks[0];
      assert.equal(changed.task, "clue-in-test-output");
      assert.equal(changed.old, file.key.checks["clue-in-test-output"]);
      assert.notEqual(changed.new, changed.old);
      assert.equal(after.key.checks["clue-in-test-output"], changed.new);
      assert.match(rescored.stdout.split("\n")[0], /rescored with 1 changed check\(s\): clue-in-test-output/);
    });
  },
);

test(
  "loom eval refuses to run unsandboxed unless --sandbox off is said; then every summary line says so",
  { ...SLOW, skip: bwrap },
  async () => {
    await withAgent(async (agent, dir) => {
      const suite = suiteCopy(dir, (tasks) => {
        // A check that never ends: stopped at its timeout, and check.txt says so.
        tasks[0].check = { command: ["node", "-e", "setTimeout(() => {}, 60000)"], timeout_ms: 500 };
      });
      const missing = await loom(agent, ["eval", suite, "--model", MODEL, "--out", join(dir, "a"), "--quiet"], {
        LOOM_BWRAP: join(dir, "no-such-bwrap"),
      });
      assert.equal(missing.code, 3, missing.stderr);
      assert.match(missing.stderr, /evaluations run sandboxed unless you say --sandbox off/);
      assert.ok(!existsSync(join(dir, "a", "eval.json")), "nothing ran");

      const out = join(dir, "b");
      const off = await loom(agent, ["eval", suite, "--model", MODEL, "--out", out, "--quiet", "--sandbox", "off"]);
      assert.equal(off.code, 0, off.stderr);
      const file = readEval(out);
      assert.deepEqual(file.settings.sandbox, { mode: "off", active: false });
      for (const row of file.rows) assert.deepEqual(row.sandbox, { mode: "off", active: false });
      const summaryLines = off.stdout.split("\n").slice(0, 1 + file.summary.policies.length + 1);
      for (const line of summaryLines) assert.match(line, /unsandboxed: checks were exposed to the agent/);
      const timedOut = file.rows.find((r) => r.task === "range-off-by-one")!;
      assert.equal(timedOut.check!.timed_out, true);
      const text = readFileSync(join(out, "runs", timedOut.id, "attempt-1", "check.txt"), "utf8");
      assert.match(text, /timed out after 500 ms\n$/);
    });
  },
);
