import { readFileSync } from "node:fs";
import { check, done } from "./harness.mjs";
import { loadService } from "./src/config.mjs";
const auth = JSON.parse(readFileSync("config/services/auth.json", "utf8"));
check("auth.json uses timeout_ms", "timeout_ms" in auth && !("timeout" in auth), true);
check("loadService('auth').timeoutMs", loadService("auth").timeoutMs, auth.timeout_ms);
done();
