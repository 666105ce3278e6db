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
const { range } = await load("src/range.mjs");
check("range(0, 3)", range(0, 3), [0, 1, 2]);
check("range(2, 2)", range(2, 2), []);
check("range(0, 10, 3)", range(0, 10, 3), [0, 3, 6, 9]);
check("range(5, 0, -2)", range(5, 0, -2), [5, 3, 1]);
check("range(3, 0, -1)", range(3, 0, -1), [3, 2, 1]);
check("range(-2, 1)", range(-2, 1), [-2, -1, 0]);
throws("range(0, 1, 0)", () => range(0, 1, 0), /step/);
finish();
