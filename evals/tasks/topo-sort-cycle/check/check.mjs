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
const { topoSort } = await load("src/topo.mjs");
check("chain", topoSort({ a: ["b"], b: ["c"], c: [] }), ["c", "b", "a"]);
check("diamond", topoSort({ a: ["b", "c"], b: ["d"], c: ["d"], d: [] }), ["d", "b", "c", "a"]);
throws("two-node cycle", () => topoSort({ a: ["b"], b: ["a"] }), /^cycle: a -> b -> a$/);
throws("self loop", () => topoSort({ x: ["x"] }), /^cycle: x -> x$/);
throws("longer cycle", () => topoSort({ a: ["b"], b: ["c"], c: ["a"] }), /^cycle: a -> b -> c -> a$/);
finish();
