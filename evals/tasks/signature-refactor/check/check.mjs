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
import { readdirSync, readFileSync } from "node:fs";
const { formatPrice } = await load("src/format.mjs");
check("object form", formatPrice({ amount: 3, currency: "EUR" }), "3.00 EUR");
check("daily", (await load("src/reports/daily.mjs")).dailyLine(10), "daily: " + (10 * 1.0).toFixed(2) + " EUR");
check("weekly", (await load("src/reports/weekly.mjs")).weeklyLine(10), "weekly: " + (10 * 1.1).toFixed(2) + " USD");
check("monthly", (await load("src/reports/monthly.mjs")).monthlyLine(10), "monthly: " + (10 * 1.2).toFixed(2) + " GBP");
check("quarterly", (await load("src/reports/quarterly.mjs")).quarterlyLine(10), "quarterly: " + (10 * 1.3).toFixed(2) + " CHF");
check("yearly", (await load("src/reports/yearly.mjs")).yearlyLine(10), "yearly: " + (10 * 1.4).toFixed(2) + " EUR");
check("refunds", (await load("src/reports/refunds.mjs")).refundsLine(10), "refunds: " + (10 * 1.5).toFixed(2) + " USD");
check("fees", (await load("src/reports/fees.mjs")).feesLine(10), "fees: " + (10 * 1.6).toFixed(2) + " GBP");
check("taxes", (await load("src/reports/taxes.mjs")).taxesLine(10), "taxes: " + (10 * 1.7).toFixed(2) + " CHF");
check("payouts", (await load("src/reports/payouts.mjs")).payoutsLine(10), "payouts: " + (10 * 1.8).toFixed(2) + " EUR");
check("forecast", (await load("src/reports/forecast.mjs")).forecastLine(10), "forecast: " + (10 * 1.9).toFixed(2) + " USD");
for (const name of readdirSync("src/reports")) {
  const text = readFileSync(`src/reports/${name}`, "utf8");
  if (/formatPrice\((?!\{)/.test(text)) check(`${name} calls formatPrice with an object`, true, false);
}
finish();
