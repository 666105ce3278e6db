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
import { readFileSync } from "node:fs";
const { loadService } = await load("src/config.mjs");
const expected = {"auth": 45000, "billing": 45000, "catalog": 60000, "checkout": 10000, "email": 45000, "gateway": 60000, "inventory": 30000, "ledger": 90000, "notify": 60000, "orders": 90000, "search": 45000, "users": 45000};
for (const [name, ms] of Object.entries(expected)) {
  const raw = JSON.parse(readFileSync(`config/services/${name}.json`, "utf8"));
  check(`${name}.json timeout_ms`, raw.timeout_ms, ms);
  check(`${name}.json has no timeout`, "timeout" in raw, false);
  check(`loadService(${name})`, loadService(name).timeoutMs, ms);
}
finish();
