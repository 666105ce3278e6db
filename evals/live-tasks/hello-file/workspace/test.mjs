import { existsSync, readFileSync } from "node:fs";
import { check, done } from "./harness.mjs";
check("hello.txt", existsSync("hello.txt") ? readFileSync("hello.txt", "utf8").trim() : null, "hello");
done();
