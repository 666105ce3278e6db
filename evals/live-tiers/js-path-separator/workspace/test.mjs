import { check, done } from "./harness.mjs";
import { joinPath } from "./src/path.mjs";
check('joinPath("usr", "bin")', joinPath("usr", "bin"), "usr/bin");
done();
