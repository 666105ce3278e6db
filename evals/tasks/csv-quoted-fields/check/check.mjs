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
const { parseCsvLine } = await load("src/csv.mjs");
check("plain", parseCsvLine("a,b,c"), ["a", "b", "c"]);
check("quoted comma", parseCsvLine('a,"b,c",d'), ["a", "b,c", "d"]);
check("escaped quote", parseCsvLine('"say ""hi""",x'), ['say "hi"', "x"]);
check("empty fields", parseCsvLine(",,"), ["", "", ""]);
check("quoted empty", parseCsvLine('"",a'), ["", "a"]);
finish();
