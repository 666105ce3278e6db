import { check, done } from "./harness.mjs";
import { parseDuration } from "./src/duration.mjs";
check("parseDuration('1h30m')", parseDuration("1h30m"), 5400);
done();
