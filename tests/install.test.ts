// Release and install end to end: scripts/release.sh builds this machine's archive and SHA256SUMS, a local HTTP server
// (127.0.0.1 only) serves that folder as a release, and install.sh installs from it into a temporary prefix. When the
// release cannot be built here (no bash, tar or curl/wget, or the build fails) the tests skip with one line.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const version: string = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
// Built once per `npm test`: the Bun run builds it after compile.sh built dist/loom, the Deno run reuses it.
const release = join(root, "tests/artifacts/release");

function has(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8" }).status === 0;
}

/** Builds the host's release archive, or says in one line why it cannot be built here. */
function buildRelease(): string | null {
  if (process.platform === "win32") return "install.sh is for Unix-like systems";
  for (const tool of ["bash", "tar"]) if (!has(tool)) return `no ${tool}`;
  if (!has("curl") && !has("wget")) return "neither curl nor wget";
  const sums = join(release, "SHA256SUMS");
  const binary = join(root, "dist/loom");
  if (existsSync(sums) && existsSync(binary) && statSync(sums).mtimeMs > statSync(binary).mtimeMs) return null;
  const r = spawnSync("bash", [join(root, "scripts/release.sh"), "--out", release, "--host"], {
    cwd: root,
    encoding: "utf8",
  });
  if (r.status !== 0) return `scripts/release.sh failed: ${(r.stderr || r.stdout).trim().split("\n").at(-1)}`;
  return null;
}

const cannotBuild = buildRelease();
if (cannotBuild) console.log(`install.test.ts: skipping the install tests: ${cannotBuild}`);
// Moving a 100 MB binary through a server, a checksum and tar is slow on a busy machine: a generous guard, not a
// speed assertion.
const releaseTest = (name: string, fn: () => Promise<void>) =>
  cannotBuild ? test.skip(`${name} (skipped: ${cannotBuild})`, () => {}) : test(name, { timeout: 180_000 }, fn);

/** Serves the release folder; `tamper` names a file whose bytes are served changed. */
async function serve({ tamper }: { tamper?: string } = {}): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const name = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname.slice(1));
    const path = join(release, name);
    if (name.includes("/") || !existsSync(path)) {
      response.writeHead(404).end("not found");
      return;
    }
    const body = readFileSync(path);
    if (name === tamper) body[body.length - 1] ^= 0xff;
    response.writeHead(200, { "content-length": body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address && typeof address === "object");
  return { url: `http://127.0.0.1:${address.port}`, server };
}

const temps: string[] = [];
after(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Runs install.sh without blocking, so the server in this process can answer it. */
function install(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LOOM_")));
  return new Promise((resolve) => {
    execFile("sh", [join(root, "install.sh")], { env: { ...clean, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

releaseTest("install.sh picks this machine's archive, checks it and installs a loom that runs", async () => {
  const prefix = mkdtempSync(join(tmpdir(), "loom-install-"));
  temps.push(prefix);
  const { url, server } = await serve();
  try {
    const r = await install({ LOOM_BASE_URL: url, LOOM_PREFIX: prefix });
    assert.equal(r.code, 0, r.stderr);
    const loom = join(prefix, "bin/loom");
    assert.ok(existsSync(loom));
    const v = spawnSync(loom, ["--version"], { encoding: "utf8" });
    assert.equal(v.status, 0);
    assert.match(v.stdout, new RegExp(`^${version.replaceAll(".", "\\.")} \\(commit `));
    assert.match(r.stdout, new RegExp(`installed ${prefix}/bin/loom \\(${version.replaceAll(".", "\\.")} `));
  } finally {
    server.close();
  }
});

releaseTest("install.sh refuses an archive whose checksum differs and installs nothing", async () => {
  const prefix = mkdtempSync(join(tmpdir(), "loom-install-"));
  temps.push(prefix);
  const sums = readFileSync(join(release, "SHA256SUMS"), "utf8");
  const archive = sums.trim().split("\n")[0].split(/\s+\*?/)[1];
  const { url, server } = await serve({ tamper: archive });
  try {
    const r = await install({ LOOM_BASE_URL: url, LOOM_PREFIX: prefix });
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`checksum mismatch for ${archive.replaceAll(".", "\\.")}`));
    assert.ok(!existsSync(join(prefix, "bin/loom")));
  } finally {
    server.close();
  }
});

releaseTest("install.sh names the version it was asked for and the target a release lacks", async () => {
  const prefix = mkdtempSync(join(tmpdir(), "loom-install-"));
  temps.push(prefix);
  const { url, server } = await serve();
  try {
    const wrong = await install({ LOOM_BASE_URL: url, LOOM_PREFIX: prefix, LOOM_VERSION: "0.0.1" });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /not version 0\.0\.1/);
    const missing = await install({ LOOM_BASE_URL: url, LOOM_PREFIX: prefix, LOOM_TARGET: "plan9-x64" });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /has no archive for plan9-x64/);
    assert.ok(!existsSync(join(prefix, "bin/loom")));
  } finally {
    server.close();
  }
});
