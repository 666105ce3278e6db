// Hidden check: runs on the resulting workspace (the current folder), never shown to the agent. The agent's code runs
// only in a child process (this file again, with --child), which reports each value it computed on fd 3; this
// process never loads that code (a stand-in answers for it), holds the expected values and judges. So code that exits
// 0 at import, ends its process early, kills this one or patches globals (JSON, console) cannot make it pass.
import { spawnSync } from "node:child_process";
import { writeSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
const CHILD = process.argv[2] === "--child";
const stub = new Proxy(function () {}, { get: (_, key) => (key === "then" ? undefined : stub), apply: () => stub, construct: () => stub, has: () => false });
const load = (path) => (CHILD ? import(pathToFileURL(resolve(process.cwd(), path)).href) : Promise.resolve(stub));
const cases = [];
const shown = (value) => JSON.stringify(value) ?? "undefined";
const report = (name, value) => writeSync(3, `${JSON.stringify([name, value])}\n`);
function check(name, actual, expected) {
  if (CHILD) report(name, shown(actual));
  else cases.push({ name, expected: shown(expected) });
}
function throws(name, fn, pattern) {
  if (!CHILD) return void cases.push({ name, pattern });
  let message = null;
  try { fn(); } catch (error) { message = String(error?.message); }
  report(name, message);
}
function finish() {
  if (CHILD) process.exit(0);
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child"], { stdio: ["ignore", "inherit", "inherit", "pipe"], maxBuffer: 1 << 26 });
  const seen = String(child.output?.[3] ?? "").split("\n").map((line) => { try { return JSON.parse(line); } catch { return null; } });
  let failed = 0;
  cases.forEach((c, i) => {
    const [name, got] = Array.isArray(seen[i]) ? seen[i] : [];
    const why = name !== c.name ? "not reached (the code under test ended its process early)"
      : c.pattern ? (typeof got === "string" && c.pattern.test(got) ? null : `no error matching ${c.pattern}`)
      : got === c.expected ? null : `expected ${c.expected}, got ${got}`;
    if (why) { failed++; console.log(`FAIL ${c.name}: ${why}`); }
  });
  if (cases.length === 0) { failed++; console.log("FAIL: no case was checked"); }
  console.log(failed ? `${failed} checks failed` : "all checks passed");
  process.exit(failed ? 1 : 0);
}
const { greet } = await load("src/greet.mjs");
check('greet("Ada")', greet("Ada"), "Hello, Ada!");
check('greet("Linus")', greet("Linus"), "Hello, Linus!");
finish();
