import { existsSync, readFileSync } from "node:fs";
import { check, done } from "./harness.mjs";
import { totalOf } from "./src/total.mjs";
const sample = ['{"id":"a","amount":1.5}', '{"id":"b","amount":"2,00"}', '{"id":"c","amount":2}'].join("\n");
check("skips a record whose amount is not a number", totalOf(sample), 3.5);
const quarantine = existsSync("quarantine.txt") ? readFileSync("quarantine.txt", "utf8").trim() : "";
check("quarantine.txt names one record id", /^evt-\d{6}$/.test(quarantine), true);
done();
