// Sums the "amount" of every record in a JSON-lines event log. Records whose amount is not a number are skipped.
import { readFileSync } from "node:fs";

export function totalOf(text) {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const record = JSON.parse(line);
    if (typeof record.amount !== "number" || !Number.isFinite(record.amount)) continue;
    sum += record.amount;
  }
  return Math.round(sum * 100) / 100;
}

export function totalOfFile(path) {
  return totalOf(readFileSync(path, "utf8"));
}
