import { check, done } from "./harness.mjs";
import { greet } from "./src/greet.mjs";
check('greet("Ada")', greet("Ada"), "Hello, Ada!");
done();
