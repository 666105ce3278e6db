import { check, done } from "./harness.mjs";
import { add } from "./src/add.mjs";
check("add(2, 3)", add(2, 3), 5);
done();
