import { check, done } from "./harness.mjs";
import { range } from "./src/range.mjs";
check("range(0, 3)", range(0, 3), [0, 1, 2]);
check("range(2, 2)", range(2, 2), []);
done();
