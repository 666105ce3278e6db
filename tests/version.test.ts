// One version source: package.json. Everything else that names Loom's version — the code, the lock file, the newest
// changelog entry, the install instructions, deno.json if it ever gets a version — must say the same.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { BUILD, VERSION, versionLine } from "../lib/version.ts";

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8");
const version: string = JSON.parse(read("package.json")).version;

test("package.json holds a semantic version, and the code reads it from there", () => {
  assert.match(version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  assert.equal(VERSION, version);
  assert.doesNotMatch(read("lib/version.ts"), /["']\d+\.\d+\.\d+["']/, "lib/version.ts writes no version literal");
});

test("package-lock.json names the same version as package.json", () => {
  const lock = JSON.parse(read("package-lock.json"));
  assert.equal(lock.version, version);
  assert.equal(lock.packages[""].version, version);
});

test("the newest released entry of CHANGELOG.md is package.json's version, below an Unreleased section", () => {
  const headings = [...read("CHANGELOG.md").matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d\d-\d\d))?$/gm)];
  assert.equal(headings[0]?.[1], "Unreleased", "the first section collects unreleased changes");
  const released = headings.find((h) => h[1] !== "Unreleased");
  assert.ok(released, "a released version");
  assert.equal(released[1], version);
  assert.ok(released[2], `the ${version} entry has a date`);
});

test("every version the README names (archives, tags, install commands) is package.json's", () => {
  const readme = read("README.md");
  const named = [
    ...readme.matchAll(/loom-(\d+\.\d+\.\d+[^-\s]*)-/g),
    ...readme.matchAll(/\bv(\d+\.\d+\.\d+)\b/g),
    ...readme.matchAll(/LOOM_VERSION=(\S+)/g),
  ].map((m) => m[1]);
  for (const found of named) assert.equal(found, version, `README names ${found}`);
});

test("deno.json names no other version", () => {
  if (!existsSync(new URL("../deno.json", import.meta.url))) return;
  const deno = JSON.parse(read("deno.json"));
  if ("version" in deno) assert.equal(deno.version, version);
});

test("--version shows the commit and build date the build put in, 'unknown' for what it left out", () => {
  assert.equal(
    versionLine({ commit: "1a2b3c4d5e6f", date: "2026-12-01T02:03:04Z" }),
    `loom ${version} (commit 1a2b3c4d5e6f, built 2026-12-01T02:03:04Z)`,
  );
  assert.equal(
    versionLine({ commit: null, date: "2026-12-01T02:03:04Z" }),
    `loom ${version} (commit unknown, built 2026-12-01T02:03:04Z)`,
  );
  assert.equal(versionLine({ commit: null, date: null }), `loom ${version} (from source)`);
  // Tests run from source: nothing was defined.
  assert.deepEqual(BUILD, { commit: null, date: null });
});

test("the newest released entry names what landed since 0.4.0: sandbox, stream-json, --trace, prompt runs, --resume, --merge", () => {
  const changelog = read("CHANGELOG.md");
  const start = changelog.indexOf(`## [${version}]`);
  const entry = changelog.slice(start, changelog.indexOf("\n## [", start + 1));
  assert.notEqual(version, "0.4.0", "the version moved past 0.4.0");
  for (const feature of ["andbox", "stream-json", "--trace", 'loom run "TEXT"', "--resume", "--merge", "LOOM_MODEL"]) {
    assert.ok(entry.includes(feature), `the ${version} entry names ${feature}`);
  }
});
