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
const { loadCatalog } = await load("src/catalog.mjs");
const { priceOf } = loadCatalog();
check("4512", priceOf("4512"), 0.9);
check("04512", priceOf("04512"), 0.35);
check("004512", priceOf("004512"), 2.4);
check("unknown", priceOf("999999999"), null);
check("488495", priceOf("488495"), 887.33);
check("545796", priceOf("545796"), 7.8);
check("585241", priceOf("585241"), 475.21);
finish();
