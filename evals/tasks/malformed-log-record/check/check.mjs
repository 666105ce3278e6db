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
import { existsSync, readFileSync } from "node:fs";
const { totalOf, totalOfFile } = await load("src/total.mjs");
check("quarantined id", existsSync("quarantine.txt") ? readFileSync("quarantine.txt", "utf8").trim() : null, "evt-011237");
check("total of the log", totalOfFile("logs/events.log"), 4747525.29);
check("skips strings", totalOf('{"amount":"1"}\n{"amount":2}'), 2);
check("skips null", totalOf('{"amount":null}\n{"amount":2.25}'), 2.25);
finish();
