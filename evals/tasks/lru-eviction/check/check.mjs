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
const { LruCache } = await load("src/lru.mjs");
const c = new LruCache(2);
c.set("a", 1); c.set("b", 2); c.set("c", 3);
check("evicts the oldest", c.keys(), ["b", "c"]);
const d = new LruCache(2);
d.set("a", 1); d.set("b", 2); d.get("a"); d.set("c", 3);
check("get refreshes", d.keys(), ["a", "c"]);
check("get value", d.get("a"), 1);
check("missing", d.get("zzz"), undefined);
const e = new LruCache(1);
e.set("x", 1); e.set("x", 2);
check("overwrite keeps one", e.keys(), ["x"]);
check("overwrite value", e.get("x"), 2);
finish();
