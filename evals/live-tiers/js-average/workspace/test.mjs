import { check, done } from "./harness.mjs";
import { average } from "./src/average.mjs";
check("average([2, 4, 6])", average([2, 4, 6]), 4);
done();
