import { check, done } from "./harness.mjs";
import { allowed } from "./src/limits.mjs";

const EXPECTED = {"/login": 20, "/logout": 40, "/search": 60, "/profile": 80, "/orders": 100, "/cart": 20, "/checkout": 40, "/invoices": 60, "/reports": 80, "/export": 100, "/import": 20, "/users": 40, "/teams": 60, "/billing": 80, "/upload": 100, "/download": 20, "/comments": 40, "/likes": 60, "/tags": 80, "/settings": 100, "/health": 20, "/metrics": 40, "/webhooks": 60, "/tokens": 80, "/audit": 100};
for (const [endpoint, limit] of Object.entries(EXPECTED)) {
  for (let r = 1; r <= 100; r++) {
    check(`allowed(${JSON.stringify(endpoint)}, ${r}) with a limit of ${limit} per minute`, allowed(endpoint, r), r <= limit);
  }
}
done();
