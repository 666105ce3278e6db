import { check, done } from "./harness.mjs";
import { shout } from "./src/shout.mjs";
check('shout("hi")', shout("hi"), "HI!");
done();
