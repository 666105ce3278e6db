import { check, done } from "./harness.mjs";
import { titleCase } from "./src/title.mjs";
check('titleCase("hello")', titleCase("hello"), "Hello");
check('titleCase("hello big world")', titleCase("hello big world"), "Hello Big World");
done();
