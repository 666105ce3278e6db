import { check, done } from "./harness.mjs";
import { toMs } from "./src/timeout.mjs";
check("toMs(3)", toMs(3), 3000);
done();
