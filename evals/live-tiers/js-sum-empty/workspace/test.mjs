import { check, done } from "./harness.mjs";
import { sum } from "./src/sum.mjs";
check("sum([1, 2])", sum([1, 2]), 3);
let empty;
try {
  empty = sum([]);
} catch (error) {
  empty = String(error);
}
check("sum([])", empty, 0);
done();
