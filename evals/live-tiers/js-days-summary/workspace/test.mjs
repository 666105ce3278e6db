import { check, done } from "./harness.mjs";
import { daysInMonth } from "./src/dates.mjs";

const failures = [];
for (let year = 1901; year <= 2100; year++) {
  for (let month = 1; month <= 12; month++) {
    const want = new Date(Date.UTC(year, month, 0)).getUTCDate();
    const got = daysInMonth(year, month);
    check(`daysInMonth(${year}, ${month}) is ${want}`, got, want);
    if (got !== want && failures.length < 3) failures.push(`daysInMonth(${year}, ${month}): expected ${want}, got ${got}`);
  }
}
console.log(failures.length ? "FAILED (first three):" : "no failures");
for (const f of failures) console.log(`  ${f}`);
done();
