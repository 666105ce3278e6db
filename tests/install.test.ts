// Release and install end to end: scripts/release.sh builds this machine's archive and SHA256SUMS, a local HTTP server
// (127.0.0.1 only) serves that folder as a release, and install.sh installs from it into a temporary prefix. When the
// release cannot be built here (no bash, tar or curl/wget, or the build fails) the tests skip with one line.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { plantedFolder } from "./helpers/planted.ts";

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
  cannotBuild ? test.skip(`${name} (skipped: ${cannotBuild})`, () => {}) : test(name, { timeout: 600_000 }, fn);

/** Serves the release folder; `tamper` names a file whose bytes are served changed. */
async function serve(
  { tamper, folder = release }: { tamper?: string; folder?: string } = {},
): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const name = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname.slice(1));
    const path = join(folder, name);
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
function install(
  env: Record<string, string>,
  { cwd }: { cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LOOM_")));
  return new Promise((resolve) => {
    execFile("sh", [join(root, "install.sh")], { env: { ...clean, ...env }, cwd }, (error, stdout, stderr) => {
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
    assert.match(v.stdout, new RegExp(`^loom ${version.replaceAll(".", "\\.")} \\(commit `));
    assert.match(r.stdout, new RegExp(`installed ${prefix}/bin/loom \\(loom ${version.replaceAll(".", "\\.")} `));
  } finally {
    server.close();
  }
});

releaseTest(
  "install.sh run from a folder holding bunfig.toml, .env, package.json and tsconfig.json: no planted code runs",
  async () => {
    const prefix = mkdtempSync(join(tmpdir(), "loom-install-"));
    temps.push(prefix);
    const { dir, marker } = plantedFolder();
    temps.push(dir);
    const { url, server } = await serve();
    try {
      const r = await install({ LOOM_BASE_URL: url, LOOM_PREFIX: prefix }, { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /PRELOAD RAN/);
      // The installed loom, started there too.
      const v = spawnSync(join(prefix, "bin/loom"), ["config", "--json"], {
        cwd: dir,
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", XDG_CONFIG_HOME: join(dir, "none") },
      });
      assert.equal(v.status, 0, v.stderr);
      assert.equal(JSON.parse(v.stdout).settings.model.value, null, ".env was read");
      assert.equal(existsSync(marker), false, "the planted preload ran");
    } finally {
      server.close();
    }
  },
);

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

const canPack = process.platform !== "win32" && has("tar") && (has("curl") || has("wget")) &&
  (has("sha256sum") || has("shasum"));

test(
  "install.sh checks the new binary under a temporary name first: one that cannot start leaves the old loom working",
  {
    skip: canPack ? false : "needs sh, tar, curl or wget, and sha256sum or shasum",
  },
  async () => {
    // A release for the wrong machine: its loom is not an executable of this one.
    const dir = mkdtempSync(join(tmpdir(), "loom-wrong-target-"));
    temps.push(dir);
    const name = "loom-0.0.2-linux-x64";
    mkdirSync(join(dir, "pack", name), { recursive: true });
    writeFileSync(
      join(dir, "pack", name, "loom"),
      Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0xff]),
      {
        mode: 0o755,
      },
    );
    mkdirSync(join(dir, "release"));
    execFileSync("tar", ["-czf", join(dir, "release", `${name}.tar.gz`), "-C", join(dir, "pack"), name]);
    const digest = createHash("sha256").update(readFileSync(join(dir, "release", `${name}.tar.gz`))).digest("hex");
    writeFileSync(join(dir, "release", "SHA256SUMS"), `${digest}  ${name}.tar.gz\n`);
    // The loom installed before: it works.
    const prefix = join(dir, "prefix");
    mkdirSync(join(prefix, "bin"), { recursive: true });
    const old = '#!/bin/sh\necho "loom 0.0.1 (the old one)"\n';
    writeFileSync(join(prefix, "bin", "loom"), old, { mode: 0o755 });
    const { url, server } = await serve({ folder: join(dir, "release") });
    try {
      const r = await install({ LOOM_BASE_URL: url, LOOM_PREFIX: prefix, LOOM_TARGET: "linux-x64" });
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `install\\.sh: the downloaded loom \\(linux-x64\\) does not run on this machine; ${prefix}/bin/loom is unchanged\\n$`,
        ),
      );
      assert.equal(readFileSync(join(prefix, "bin", "loom"), "utf8"), old);
      assert.equal(execFileSync(join(prefix, "bin", "loom"), { encoding: "utf8" }), "loom 0.0.1 (the old one)\n");
      assert.deepEqual(readdirSync(join(prefix, "bin")), ["loom"], "no temporary file left behind");
    } finally {
      server.close();
    }
  },
);
