import { check, done } from "./harness.mjs";
import { formatPrice } from "./src/format.mjs";
import { dailyLine } from "./src/reports/daily.mjs";
check("formatPrice takes an object", formatPrice({ amount: 1.5, currency: "USD" }), "1.50 USD");
check("daily report", dailyLine(10), "daily: 10.00 EUR");
done();
