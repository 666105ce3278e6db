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
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
const ada = { first: "Ada", last: "Lovelace" };
const users = await load("src/users.mjs");
check("displayName exported", typeof users.displayName, "function");
check("getUserName gone from users.mjs", "getUserName" in users, false);
check("displayName", users.displayName(ada), "Ada Lovelace");
check("home header", (await load("src/pages/home.mjs")).homeHeader(ada), "Home · Ada Lovelace");
check("profile header", (await load("src/pages/profile.mjs")).profileHeader(ada), "Profile · Ada Lovelace");
check("settings header", (await load("src/pages/settings.mjs")).settingsHeader(ada), "Settings · Ada Lovelace");
check("billing header", (await load("src/pages/billing.mjs")).billingHeader(ada), "Billing · Ada Lovelace");
check("team header", (await load("src/pages/team.mjs")).teamHeader(ada), "Team · Ada Lovelace");
check("invoices header", (await load("src/pages/invoices.mjs")).invoicesHeader(ada), "Invoices · Ada Lovelace");
check("audit header", (await load("src/pages/audit.mjs")).auditHeader(ada), "Audit · Ada Lovelace");
check("search header", (await load("src/pages/search.mjs")).searchHeader(ada), "Search · Ada Lovelace");
check("inbox header", (await load("src/pages/inbox.mjs")).inboxHeader(ada), "Inbox · Ada Lovelace");
check("admin header", (await load("src/pages/admin.mjs")).adminHeader(ada), "Admin · Ada Lovelace");
const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]);
for (const file of walk("src")) if (readFileSync(file, "utf8").includes("getUserName")) check(`no getUserName in ${file}`, true, false);
finish();
