import { check, done } from "./harness.mjs";
import { attemptsLeft } from "./src/retry.mjs";
check("attemptsLeft(1)", attemptsLeft(1), 4);
done();
