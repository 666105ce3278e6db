// The built binary reads no configuration or code from the folder it starts in. A Bun standalone binary, by default,
// loads bunfig.toml (whose `preload` runs code before main.ts) and .env / .env.local (which would set LOOM_SANDBOX,
// *_BASE_URL, LOOM_BWRAP, ...) from its working folder, and that folder is a prompt run's default workspace, which the
// model writes. scripts/build-flags.sh turns every autoload off; these tests plant each file and see none take effect.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ROOT, runLoom } from "./helpers/binary.ts";
import { plantedFolder } from "./helpers/planted.ts";

const temps: string[] = [];
after(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

test("dist/loom started in a folder with bunfig.toml, .env, .env.local, package.json and tsconfig.json: none takes effect", async () => {
  const { dir, marker } = plantedFolder();
  temps.push(dir);
  const clean = mkdtempSync(join(tmpdir(), "loom-autoload-clean-"));
  temps.push(clean);
  const env = { XDG_CONFIG_HOME: join(clean, "no-config") };

  const version = await runLoom(["--version"], { cwd: dir, env });
  assert.equal(version.code, 0, version.stderr);
  assert.doesNotMatch(version.stderr, /PRELOAD RAN/);

  // The settings a run would use are the same as in an empty folder: nothing came from .env or .env.local.
  const planted = await runLoom(["config", "--json"], { cwd: dir, env });
  const empty = await runLoom(["config", "--json"], { cwd: clean, env });
  assert.equal(planted.code, 0, planted.stderr);
  assert.deepEqual(JSON.parse(planted.stdout), JSON.parse(empty.stdout));
  assert.equal(JSON.parse(planted.stdout).settings.model.value, null);

  // A whole run: the policy is the built-in default, not .env.local's, and the sandbox is not turned off by .env.
  const reportPath = join(clean, "report.json");
  const run = await runLoom(
    ["replay", join(ROOT, "testdata/workflows/fix-bug.jsonl"), "--quiet", "--context-report", reportPath],
    { cwd: dir, env },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(readFileSync(reportPath, "utf8")).policy, "legacy", ".env.local chose the policy");
  assert.doesNotMatch(run.stderr, /PRELOAD RAN/);
  assert.equal(existsSync(marker), false, "the planted preload ran");
});

test("every build turns Bun's standalone autoloading off: compile.sh and scripts/release.sh take scripts/build-flags.sh", () => {
  const flags = execFileSync("bash", [join(ROOT, "scripts/build-flags.sh")], { encoding: "utf8" }).split(/\s+/);
  for (
    const flag of [
      "--no-compile-autoload-dotenv",
      "--no-compile-autoload-bunfig",
      "--no-compile-autoload-tsconfig",
      "--no-compile-autoload-package-json",
    ]
  ) assert.ok(flags.includes(flag), `scripts/build-flags.sh lacks ${flag}`);
  for (const script of ["compile.sh", "scripts/release.sh"]) {
    const text = readFileSync(join(ROOT, script), "utf8");
    const builds = text.split("\n").filter((line) => /\bbun build\b/.test(line) && !line.trimStart().startsWith("#"));
    assert.ok(builds.length > 0, `${script} builds nothing with bun build`);
    assert.ok(/build-flags\.sh/.test(text), `${script} does not take scripts/build-flags.sh`);
  }
});
