// scripts/live-model.sh and scripts/gguf-meta.py, without building or downloading anything: argument errors are one
// line, the server's cache key is the one the pinned build uses, a missing tool is named, and with a stand-in
// llama-server (a small Node HTTP server at the cache path) and a tiny GGUF the script starts it, hands its URL to a
// command, returns the command's exit code and stops the server. Also the live section of bench/RESULTS.md and the
// honesty of the live suite's checks (evals/live-suite.jsonc).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { countInvalidAnswers, keepLiveSection, LIVE_END, LIVE_START, withLiveSection } from "../bench/live-markdown.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const SCRIPT = join(root, "scripts/live-model.sh");
const META = join(root, "scripts/gguf-meta.py");
// The folder the pinned build lands in: llama.cpp de3ff81 with the pinned cmake flags. A change to either must change
// it (a new build); nothing else may (the binary a machine built would be rebuilt for nothing).
const KEY = "llama-server-de3ff81-eeec3308c185";
const SMOLLM2_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

function run(args: string[], env: Record<string, string> = {}, timeout = 120_000) {
  const r = spawnSync("bash", [SCRIPT, ...args], {
    encoding: "utf8",
    // No AVX-512 in the flag list: the portable build's key, whatever this machine's CPU has.
    env: { ...process.env, LOOM_LIVE_CACHE: join(tmpdir(), "loom-live-unused"), LOOM_LIVE_CPU_FLAGS: "", ...env },
    timeout,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A GGUF v3 header with string and uint32 metadata and no tensors. */
function gguf(meta: Record<string, string | number>): Buffer {
  const parts: Buffer[] = [Buffer.from("GGUF")];
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  const u64 = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    return b;
  };
  const str = (s: string) => Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);
  parts.push(u32(3), u64(0), u64(Object.keys(meta).length));
  for (const [key, value] of Object.entries(meta)) {
    parts.push(str(key));
    parts.push(typeof value === "number" ? Buffer.concat([u32(4), u32(value)]) : Buffer.concat([u32(8), str(value)]));
  }
  return Buffer.concat(parts);
}

const SMOL_META = {
  "general.architecture": "llama",
  "general.name": "Tiny test model",
  "general.finetune": "instruct",
  "llama.context_length": 8192,
  "tokenizer.chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}",
};

test("argument errors are one line on stderr, exit 2, nothing on stdout", () => {
  const cases: [string[], RegExp][] = [
    [
      ["--model", "llama"],
      /^live-model: --model: expected smollm2, gemma3, qwen2\.5-coder-0\.5b or qwen2\.5-coder-1\.5b, got "llama"$/,
    ],
    [["--ctx", "12"], /^live-model: --ctx: expected a whole number of tokens >= 256, got "12"$/],
    [["--slots", "0"], /^live-model: --slots: expected 1 to 16, got "0"$/],
    [["--port", "70000"], /^live-model: --port: expected 1 to 65535, got "70000"$/],
    [["--threads", "x"], /^live-model: --threads: expected 1 to 256, got "x"$/],
    [["--port"], /^live-model: --port needs a value$/],
    [["--"], /^live-model: -- needs a command to run$/],
    [["--frobnicate"], /^live-model: unknown argument "--frobnicate" \(see --help\)$/],
  ];
  for (const [args, expected] of cases) {
    const r = run(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stdout, "", args.join(" "));
    assert.match(r.stderr.trimEnd(), expected);
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, args.join(" "));
  }
});

test("the cache key is the pinned build's folder, whatever the cache folder", () => {
  const a = run(["--print-cache-key"]);
  const b = run(["--print-cache-key"], { LOOM_LIVE_CACHE: join(tmpdir(), "elsewhere") });
  assert.equal(a.code, 0);
  assert.equal(a.stdout, `${KEY}\n`);
  assert.equal(b.stdout, a.stdout);
});

test("a missing tool is one line naming it, before anything is downloaded or built", () => {
  const cache = mkdtempSync(join(tmpdir(), "loom-live-test-"));
  const bin = join(cache, "bin");
  mkdirSync(bin);
  try {
    const which = (tool: string) => spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    const link = (tools: string[]) => {
      for (const tool of tools) {
        const at = which(tool);
        if (at !== "" && !existsSync(join(bin, tool))) symlinkSync(at, join(bin, tool));
      }
    };
    link(["sha256sum", "cut", "dirname", "mkdir", "nproc", "flock"]);
    const noPython = spawnSync(join(which("bash")), [SCRIPT, "--prepare"], {
      encoding: "utf8",
      env: { PATH: bin, HOME: cache, LOOM_LIVE_CACHE: join(cache, "c") },
    });
    assert.equal(noPython.status, 1);
    assert.match(noPython.stderr, /^live-model: missing python3: install Python 3/m);
    // Python, npm, tar and git are here, cmake is not: the build stops before npm pack.
    link(["python3", "npm", "node", "tar", "git", "mktemp", "rm", "date", "cat"]);
    const noCmake = spawnSync(which("bash"), [SCRIPT, "--prepare"], {
      encoding: "utf8",
      env: { PATH: bin, HOME: cache, LOOM_LIVE_CACHE: join(cache, "c") },
    });
    assert.equal(noCmake.status, 1);
    assert.match(noCmake.stderr, /^live-model: missing cmake: install cmake/m);
    assert.doesNotMatch(noCmake.stderr, /npm pack/);
    assert.ok(!existsSync(join(cache, "c", KEY)), "nothing was built");
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test("gguf-meta.py reads name, finetune, context and template kind; a non-GGUF file is one line", () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-gguf-"));
  try {
    writeFileSync(join(dir, "m.gguf"), gguf(SMOL_META));
    const r = spawnSync("python3", [META, join(dir, "m.gguf")], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.ok(lines.includes("general.name=Tiny test model"));
    assert.ok(lines.includes("general.finetune=instruct"));
    assert.ok(lines.includes("context_length=8192"));
    assert.ok(lines.includes("chat_template.kind=chatml"));
    writeFileSync(join(dir, "base.gguf"), gguf({ "general.architecture": "gemma3", "gemma3.context_length": 32768 }));
    const base = spawnSync("python3", [META, join(dir, "base.gguf")], { encoding: "utf8" });
    assert.match(base.stdout, /^chat_template\.chars=0$/m);
    assert.doesNotMatch(base.stdout, /general\.finetune/);
    writeFileSync(join(dir, "not.gguf"), "hello");
    const bad = spawnSync("python3", [META, join(dir, "not.gguf")], { encoding: "utf8" });
    assert.equal(bad.status, 1);
    assert.equal(bad.stderr.trim().split("\n").length, 1);
    assert.match(bad.stderr, /not a GGUF file|cannot read GGUF header/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A cache with a stand-in llama-server at the pinned key and a tiny SmolLM2-named GGUF marked as installed. */
function fakeCache(): { cache: string; argsFile: string } {
  const cache = mkdtempSync(join(tmpdir(), "loom-live-test-"));
  const bin = join(cache, KEY, "bin");
  mkdirSync(bin, { recursive: true });
  const argsFile = join(cache, "server-args.json");
  const server = join(bin, "llama-server");
  writeFileSync(
    server,
    `#!/usr/bin/env node
const http = require("node:http");
const fs = require("node:fs");
const args = process.argv.slice(2);
fs.writeFileSync(${JSON.stringify(argsFile)}, JSON.stringify({ args, pid: process.pid }));
const port = Number(args[args.indexOf("--port") + 1]);
http.createServer((req, res) => { res.writeHead(req.url === "/health" ? 200 : 404); res.end("{}"); })
  .listen(port, "127.0.0.1");
process.on("SIGTERM", () => { fs.writeFileSync(${JSON.stringify(argsFile + ".stopped")}, "yes"); process.exit(0); });
`,
  );
  chmodSync(server, 0o755);
  mkdirSync(join(cache, "models"));
  const model = join(cache, "models", "SmolLM2-135M-Instruct.Q4_1.gguf");
  writeFileSync(model, gguf(SMOL_META));
  writeFileSync(`${model}.ok`, `${SMOLLM2_GGUF_SHA256}\n`);
  return { cache, argsFile };
}

test("with -- CMD it starts the server, hands CMD the URL and alias, returns CMD's exit code and stops the server", () => {
  const { cache, argsFile } = fakeCache();
  try {
    const r = run(
      [
        "--ctx",
        "4096",
        "--slots",
        "2",
        "--threads",
        "1",
        "--",
        "bash",
        "-c",
        'echo "cmd $LOOM_LIVE_BASE_URL $LOOM_LIVE_MODEL"; exit 7',
      ],
      { LOOM_LIVE_CACHE: cache },
    );
    assert.equal(r.code, 7, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.match(lines[0] ?? "", /^base_url=http:\/\/127\.0\.0\.1:\d+\/v1$/);
    assert.equal(lines[1], "model=smollm2-135m");
    const url = (lines[0] ?? "").slice("base_url=".length);
    assert.equal(lines[2], `cmd ${url} smollm2-135m`);
    const { args } = JSON.parse(readFileSync(argsFile, "utf8")) as { args: string[] };
    const value = (flag: string) => args[args.indexOf(flag) + 1];
    assert.equal(value("--host"), "127.0.0.1");
    assert.equal(value("--alias"), "smollm2-135m");
    assert.equal(value("-c"), "8192", "two slots of 4,096 tokens each");
    assert.equal(value("-np"), "2");
    assert.equal(value("-t"), "1");
    assert.ok(existsSync(`${argsFile}.stopped`), "the server was stopped");
    assert.match(r.stderr, /^live-model: ready in \d+ s$/m);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test("a context above what the weights were trained for is refused in one line", () => {
  const { cache, argsFile } = fakeCache();
  try {
    const r = run(["--ctx", "16384", "--", "true"], { LOOM_LIVE_CACHE: cache });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^live-model: --ctx 16384 is more than smollm2-135m was trained for \(8192 tokens\)$/m);
    assert.ok(!existsSync(argsFile), "no server was started");
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test("the live section of RESULTS.md replaces only what is between its markers and survives a regeneration", () => {
  const before = `# Results\n\nintro\n\n${LIVE_START}\nold\n${LIVE_END}\n\n## Later\n`;
  assert.equal(withLiveSection(before, "new\n"), `# Results\n\nintro\n\n${LIVE_START}\nnew\n${LIVE_END}\n\n## Later\n`);
  assert.equal(withLiveSection("# R\n", "x"), `# R\n\n${LIVE_START}\nx\n${LIVE_END}\n`);
  assert.equal(keepLiveSection("# fresh\n", before), `# fresh\n\n${LIVE_START}\nold\n${LIVE_END}\n`);
  assert.equal(keepLiveSection("# fresh\n", "# no section\n"), "# fresh\n");
});

test("invalid answers are the steps answered where no action ran; a run cut short does not count its last step", () => {
  const lines = [
    JSON.stringify({ type: "header" }),
    JSON.stringify({ type: "answer", phase: "classification", step: 0 }),
    JSON.stringify({ type: "answer", phase: "selection", step: 1 }),
    JSON.stringify({ type: "execution", step: 1 }),
    JSON.stringify({ type: "answer", phase: "selection", step: 2 }),
    JSON.stringify({ type: "answer", phase: "arguments", step: 2 }),
    JSON.stringify({ type: "answer", phase: "arguments", step: 2 }),
    "not json",
    JSON.stringify({ type: "answer", phase: "selection", step: 3 }),
  ].join("\n");
  assert.equal(countInvalidAnswers(lines), 2);
  assert.equal(countInvalidAnswers(lines, { cutShort: true }), 1);
});

test("loom eval validate proves the live suite's four checks honest", { timeout: 600_000 }, async () => {
  const { io, out } = fakeIo({ cwd: root, env: { PATH: process.env.PATH } });
  const code = await main(["eval", "validate", "evals/live-suite.jsonc", "--jobs", "2"], io);
  assert.equal(code, 0, out.stdout + out.stderr);
  assert.match(out.stdout, /^4\/4 tasks valid$/m);
});
