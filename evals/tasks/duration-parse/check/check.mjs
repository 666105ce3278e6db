// Hidden check: runs on the resulting workspace (the current folder), never shown to the agent.
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
const load = (path) => import(pathToFileURL(resolve(process.cwd(), path)).href);
let failed = 0;
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
function check(name, actual, expected) {
  if (!same(actual, expected)) { failed++; console.log(`FAIL ${name}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`); }
}
function throws(name, fn, pattern) {
  let message = null;
  try { fn(); } catch (error) { message = String(error.message); }
  if (message === null || !pattern.test(message)) { failed++; console.log(`FAIL ${name}: no error matching ${pattern}`); }
}
function finish() { console.log(failed ? `${failed} checks failed` : "all checks passed"); process.exit(failed ? 1 : 0); }
const { parseDuration } = await load("src/duration.mjs");
check("1h30m", parseDuration("1h30m"), 5400);
check("45s", parseDuration("45s"), 45);
check("2m5s", parseDuration("2m5s"), 125);
check("1h", parseDuration("1h"), 3600);
check("10m", parseDuration("10m"), 600);
throws("empty", () => parseDuration(""), /invalid/);
throws("wrong order", () => parseDuration("5s1m"), /invalid/);
finish();
