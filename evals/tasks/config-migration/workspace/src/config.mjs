// Loads config/services/NAME.json. Timeouts are milliseconds in the program.
import { readFileSync } from "node:fs";

export function loadService(name) {
  const raw = JSON.parse(readFileSync(`config/services/${name}.json`, "utf8"));
  return { name: raw.name, url: raw.url, timeoutMs: raw.timeout * 1000, retries: raw.retries ?? 0 };
}
