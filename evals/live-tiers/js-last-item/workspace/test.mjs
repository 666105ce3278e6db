import { check, done } from "./harness.mjs";
import { first, last } from "./src/list.mjs";
check("first([1, 2, 3])", first([1, 2, 3]), 1);
check("last([1, 2, 3])", last([1, 2, 3]), 3);
done();
