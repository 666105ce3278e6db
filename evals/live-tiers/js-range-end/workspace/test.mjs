import { check, done } from "./harness.mjs";
import { range } from "./src/range.mjs";
check("range(1, 4)", range(1, 4), [1, 2, 3]);
done();
