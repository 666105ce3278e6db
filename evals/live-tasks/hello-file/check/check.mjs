// Hidden check: runs on the resulting workspace (the current folder), never shown to the agent. It runs none of the
// agent's code: it reads one file.
import { existsSync, readFileSync } from "node:fs";
const text = existsSync("hello.txt") ? readFileSync("hello.txt", "utf8") : null;
const ok = text !== null && text.trim() === "hello";
console.log(ok ? "all checks passed" : `FAIL hello.txt: expected "hello", got ${JSON.stringify(text)}`);
process.exit(ok ? 0 : 1);
