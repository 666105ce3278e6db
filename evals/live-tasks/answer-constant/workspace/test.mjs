import { check, done } from "./harness.mjs";
import { answer } from "./src/answer.mjs";
check("answer", answer, 42);
done();
