// The command line at its edges: output paths checked before anything runs, a stdin that never closes, usage on
// stderr, and an invalid request file under --json.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { Readable } from "node:stream";
import { main, readAll } from "../main.ts";
import { parseJsonc } from "../lib/catalog/catalog.ts";
import { InterruptedError } from "../lib/errors.ts";
import {
  anthropicAnswer,
  openAIAnswer,
  type ScriptedResponse,
  startAnthropicServer,
  startOpenAIServer,
} from "./helpers/fake-provider-servers.ts";
import { assertBinaryBuilt, LOOM_BINARY, ROOT, waitFor } from "./helpers/binary.ts";
import { fakeIo } from "./helpers/fake-io.ts";

if (!existsSync("/proc/self/status")) {
  console.log(
    "cli-robustness.test.ts: skipping the signal tests: they need /proc to know when the binary handles signals",
  );
}

const EXAMPLE_CATALOG = resolve(ROOT, "testdata/catalog/example.jsonc");
const EXAMPLE_REQUEST = resolve(ROOT, "testdata/example-request.json");
const PROJECT = resolve(ROOT, "testdata/example-project");

/** A model that finishes at once: if a run starts when it should not, it completes and the test sees requests. */
const finishing = (i: number, answer: (value: unknown) => ScriptedResponse) =>
  answer(i % 2 === 0 ? { action: "finish" } : { status: "success", summary: "Done." });

type Run = { code: number; out: string; err: string };

/** A temp dir with a copy of the example project and both provider-shaped servers; all removed when the test ends. */
async function sandbox(t: { after: (fn: () => unknown) => void }) {
  const dir = mkdtempSync(join(tmpdir(), "loom-cli-"));
  cpSync(PROJECT, join(dir, "ws"), { recursive: true });
  const claude = await startAnthropicServer((_r, i) => finishing(i, anthropicAnswer));
  const gpt = await startOpenAIServer((_r, i) => finishing(i, openAIAnswer));
  t.after(async () => {
    await claude.close();
    await gpt.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const request = join(dir, "request.json");
  writeFileSync(request, JSON.stringify({ ...JSON.parse(readFileSync(EXAMPLE_REQUEST, "utf8")), workspace: "ws" }));
  const loom = async (argv: string[], { stdin = "" }: { stdin?: string } = {}): Promise<Run> => {
    const env = {
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: claude.baseUrl,
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: gpt.baseUrl,
    };
    const { io, out } = fakeIo({ cwd: dir, env, stdin });
    const code = await main(argv, io);
    return { code, out: out.stdout, err: out.stderr };
  };
  const requestsSent = () => claude.requests.length + gpt.requests.length;
  return { dir, request, loom, requestsSent };
}

function oneLine(err: string): string {
  const lines = err.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, `expected one stderr line, got: ${err}`);
  return lines[0];
}

// ---- output paths ----

test("loom run refuses an unwritable --context-report or --record before any model request (exit 2, flag and path named)", async (t) => {
  const s = await sandbox(t);
  mkdirSync(join(s.dir, "reports"));
  writeFileSync(join(s.dir, "a-file"), "");
  const cases: [string, string, RegExp][] = [
    ["--context-report", "reports", /^loom run: --context-report "reports": is a directory, not a file$/],
    [
      "--context-report",
      "a-file/r.json",
      /^loom run: --context-report "a-file\/r\.json": its folder cannot be created: ".*a-file" is not a directory$/,
    ],
    ["--record", "reports", /^loom run: --record "reports": is a directory, not a file$/],
    [
      "--record",
      "a-file/deeper/run.jsonl",
      /^loom run: --record "a-file\/deeper\/run\.jsonl": its folder cannot be created: ".*a-file" is not a directory$/,
    ],
  ];
  for (const [flag, path, pattern] of cases) {
    for (
      const argv of [["run", s.request], ["run", "Fix the bug", "--catalog", EXAMPLE_CATALOG, "--workspace", "ws"]]
    ) {
      const run = await s.loom([...argv, flag, path, "--quiet", "--json"]);
      assert.equal(run.code, 2, `${argv.join(" ")} ${flag} ${path}: ${run.err}`);
      assert.match(oneLine(run.err), pattern);
      // --json still gets one result object, saying it was a usage error.
      const result = JSON.parse(run.out);
      assert.deepEqual([result.outcome, result.exit_code, result.model_calls], ["usage_error", 2, 0]);
      assert.equal(s.requestsSent(), 0, "nothing ran against the model");
    }
  }
  // A folder that does not exist yet is fine: it is created, and stderr says so first.
  const fine = await s.loom([
    "run",
    s.request,
    "--context-report",
    "new/deeper/r.json",
    "--record",
    "new/run.jsonl",
    "--quiet",
  ]);
  assert.equal(fine.code, 0, fine.err);
  assert.match(fine.err, /^loom run: --context-report: creating the folder ".*new[\\/]deeper"$/m);
  assert.match(fine.err, /^loom run: --record: creating the folder ".*new"$/m);
  assert.equal(JSON.parse(readFileSync(join(s.dir, "new/deeper/r.json"), "utf8")).outcome, "completed");
  assert.ok(existsSync(join(s.dir, "new/run.jsonl")));
});

test("a catalog whose context_report is a directory fails at startup (exit 3) before routing, writing no report", async (t) => {
  const s = await sandbox(t);
  const parsed = parseJsonc(readFileSync(EXAMPLE_CATALOG, "utf8"));
  assert.ok(parsed.ok);
  const { $schema: _, ...catalog } = parsed.value as Record<string, any>;
  catalog.defaults = { workspace: "ws", context_report: "reports" };
  mkdirSync(join(s.dir, "reports"));
  writeFileSync(join(s.dir, "catalog.json"), JSON.stringify(catalog));
  const run = await s.loom(["run", "What does truncateSlug do?", "--catalog", "catalog.json", "--json", "--quiet"]);
  assert.equal(run.code, 3, run.err);
  assert.match(oneLine(run.err), /^loom run: The catalog's context_report ".*reports": is a directory, not a file$/);
  const result = JSON.parse(run.out);
  assert.equal(result.outcome, "startup_failed");
  assert.equal(result.error.code, "report_path_invalid");
  assert.equal(result.report_path, null);
  assert.equal(s.requestsSent(), 0, "no classification call was made");
  // The flag overrides the catalog's path, so the same catalog runs with --context-report.
  const flagged = await s.loom([
    "run",
    "Fix the bug",
    "--catalog",
    "catalog.json",
    "--context-report",
    "r.json",
    "--quiet",
  ]);
  assert.equal(flagged.code, 0, flagged.err);
});

// ---- invalid request files ----

test("an invalid request file stays a usage error (exit 2); with --json it still prints one result object", async (t) => {
  const s = await sandbox(t);
  writeFileSync(join(s.dir, "invalid.json"), JSON.stringify({ intent: "Fix it" }));
  writeFileSync(join(s.dir, "broken.json"), "{ not json");
  for (
    const [file, pattern] of [
      ["invalid.json", /^invalid\.json: invalid SliceRequest: instructions: /],
      ["broken.json", /^broken\.json: not valid JSON/],
      ["missing.json", /^Cannot read request "missing\.json": no such file or folder$/],
    ] as const
  ) {
    const json = await s.loom(["run", file, "--json", "--context-report", "report.json"]);
    assert.equal(json.code, 2, json.err);
    assert.equal(json.out.split("\n").filter(Boolean).length, 1, json.out);
    const result = JSON.parse(json.out);
    assert.equal(result.outcome, "usage_error");
    assert.equal(result.exit_code, 2);
    assert.equal(result.error.code, "usage");
    assert.match(result.error.message, pattern);
    assert.equal(result.report_path, null);
    assert.equal(result.model_calls, 0);
    assert.equal(oneLine(json.err), `loom run: ${result.error.message}`);
    assert.ok(!existsSync(join(s.dir, "report.json")), "a usage error writes no report");

    const text = await s.loom(["run", file]);
    assert.equal(text.code, 2);
    assert.equal(text.out, "");
    oneLine(text.err);
  }
  // The same through stdin.
  const piped = await s.loom(["run", "-", "--json"], { stdin: "[]" });
  assert.equal(piped.code, 2);
  assert.equal(JSON.parse(piped.out).exit_code, 2);
  assert.equal(s.requestsSent(), 0);
});

// ---- usage ----

test("loom with no command prints the usage on stderr and exits 2; --help prints it on stdout and exits 0", async (t) => {
  const s = await sandbox(t);
  const bare = await s.loom([]);
  assert.equal(bare.code, 2);
  assert.equal(bare.out, "");
  assert.match(bare.err, /^loom \S+ — runs LLM agent slices/);
  assert.match(bare.err, /Usage:\n {2}loom run /);
  for (const flag of ["--help", "-h", "help"]) {
    const help = await s.loom([flag]);
    assert.equal(help.code, 0);
    assert.equal(help.err, "");
    assert.equal(help.out, bare.err);
  }
});

test("one candidate slice is announced in the singular", async (t) => {
  const s = await sandbox(t);
  const parsed = parseJsonc(readFileSync(EXAMPLE_CATALOG, "utf8"));
  assert.ok(parsed.ok);
  const { $schema: _, ...catalog } = parsed.value as Record<string, any>;
  catalog.defaults = { workspace: "ws" };
  catalog.routes = { classification: { model: "gpt", slices: ["explain"] } };
  writeFileSync(join(s.dir, "catalog.json"), JSON.stringify(catalog));
  const run = await s.loom(["run", "What does truncateSlug do?", "--catalog", "catalog.json"]);
  assert.match(run.err, /^classification [\d,]+ B \(1 candidate slice\)$/m);
});

// ---- stdin ----

/** A stream that yields its chunks and then stays open until the test ends it. */
function openStream(chunks: Uint8Array[]): { stream: Readable; end: () => void } {
  const stream = new Readable({ read() {} });
  for (const chunk of chunks) stream.push(chunk);
  return { stream, end: () => stream.push(null) };
}

test("readAll joins the chunks of a stream as UTF-8, a character split across chunks included", async () => {
  const bytes = new TextEncoder().encode('{"intent": "café ✓"}');
  const split = bytes.indexOf(0xc3) + 1; // inside "é"
  const { stream, end } = openStream([bytes.slice(0, split), bytes.slice(split)]);
  end();
  assert.equal(await readAll(stream, new AbortController().signal), '{"intent": "café ✓"}');
});

test("readAll rejects with InterruptedError when the signal aborts while the stream stays open", async () => {
  const controller = new AbortController();
  const { stream, end } = openStream([new TextEncoder().encode("partial")]);
  try {
    const pending = readAll(stream, controller.signal);
    controller.abort();
    await assert.rejects(pending, (error: unknown) => error instanceof InterruptedError);
    await assert.rejects(readAll(stream, controller.signal), (error: unknown) => error instanceof InterruptedError);
  } finally {
    end();
    stream.destroy();
  }
});

/** Whether the process has a handler for the signal (Linux /proc; null where there is none to ask). */
function handlesSignal(pid: number, signo: number): boolean | null {
  if (!existsSync(`/proc/${pid}/status`)) return null;
  const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return caught ? (BigInt(`0x${caught[1]}`) & (1n << BigInt(signo - 1))) !== 0n : null;
}

const SIGNALS = [["SIGINT", 2], ["SIGTERM", 15]] as const;

for (const [name, signo] of SIGNALS) {
  test(
    `dist/loom run - waiting on a stdin that never closes ends at ${name} with exit 130`,
    { timeout: 600_000 },
    async (t) => {
      assertBinaryBuilt();
      if (!existsSync("/proc/self/status")) return t.skip("needs /proc to know when the binary handles signals");
      const dir = mkdtempSync(join(tmpdir(), "loom-stdin-"));
      // Like `sleep 30 | loom run -`: the writer keeps the pipe open and writes nothing.
      const child = spawn(LOOM_BINARY, ["run", "-"], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "" },
        stdio: ["pipe", "pipe", "pipe"],
      });
      t.after(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
      });
      child.stdin!.on("error", () => {});
      let stdout = "", stderr = "";
      child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const done = new Promise<number | null>((resolveExit) => child.on("close", (code) => resolveExit(code)));
      let exited = false;
      void done.then(() => (exited = true));
      // The signal must arrive after loom installed its handler, or the default action would end it without a say.
      await waitFor(() => exited || handlesSignal(child.pid!, signo) === true, { what: `loom to handle ${name}` });
      // process.kill, not child.kill: a runtime may then report the signal it sent instead of the exit status.
      process.kill(child.pid!, name);
      try {
        await waitFor(() => exited, { what: `loom to exit after ${name}` });
      } catch {
        child.stdin!.end(); // a blocked read ends only with the pipe; the assertions below then say what happened
      }
      const code = await done;
      assert.equal(code, 130, `exit ${code}, stderr: ${stderr}`);
      assert.equal(stderr, "loom run: Interrupted\n");
      assert.equal(stdout, "");
    },
  );
}
