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
