import { check, done } from "./harness.mjs";
import { slugify } from "./src/slug.mjs";
check("slugify('Hello, World!')", slugify("Hello, World!"), "hello-world");
done();
