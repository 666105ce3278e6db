// Hidden check: runs on the resulting workspace (the current folder), never shown to the agent. The agent's code runs
// only in a child process (Node: this file again with --child; Python: python3 -I with a small driver; shell: bash on
// the script), which reports each value it computed on fd 3 or stdout; this process never loads that code, holds the
// expected values and judges. So code that exits 0 at import, ends its process early or patches globals cannot pass.
import { spawnSync } from "node:child_process";
import { readFileSync, writeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
// One harness for every task of the tier suite: the task is named on the command line, its cases and expected values
// are in specs/TASK.json beside this file (the hidden check folder the suite names for every task).
const TASK = process.argv[2] ?? "";
if (!/^[a-z0-9-]+$/.test(TASK)) throw new Error(`check.mjs: expected a task id, got ${JSON.stringify(TASK)}`);
const SPEC = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "specs", `${TASK}.json`), "utf8"));
const CHILD = process.argv[3] === "--child";
const report = (name, value) => writeSync(3, `${JSON.stringify([name, value])}\n`);
const same = (got, want) => {
  try {
    return JSON.stringify(JSON.parse(got)) === JSON.stringify(want);
  } catch {
    return false;
  }
};
if (CHILD) {
  const m = await import(pathToFileURL(resolve(process.cwd(), SPEC.module)).href);
  for (const [name, expr] of SPEC.cases) {
    let value;
    try {
      value = Function("m", `return (${expr});`)(m);
    } catch (error) {
      value = { error: String(error?.name) };
    }
    report(name, JSON.stringify(value) ?? "undefined");
  }
  process.exit(0);
}
const DRIVER = `import json, os, sys
sys.path.insert(0, os.getcwd())
out = os.fdopen(3, "w")
spec = json.loads(sys.argv[1])
mod = __import__(spec["module"])
for name, expr in spec["cases"]:
    try:
        value = eval(expr, dict(vars(mod)))
    except Exception as error:
        value = {"error": type(error).__name__}
    out.write(json.dumps([name, json.dumps(value)]) + "\\n")
out.flush()
os._exit(0)
`;
const seen = [];
if (SPEC.lang === "node" || SPEC.lang === "python") {
  const [cmd, args] = SPEC.lang === "node"
    ? [process.execPath, [fileURLToPath(import.meta.url), TASK, "--child"]]
    : ["python3", ["-I", "-c", DRIVER, JSON.stringify({ module: SPEC.module, cases: SPEC.cases })]];
  const child = spawnSync(cmd, args, { stdio: ["ignore", "inherit", "inherit", "pipe"], maxBuffer: 1 << 26, timeout: 20000 });
  for (const line of String(child.output?.[3] ?? "").split("\n")) {
    try {
      seen.push(JSON.parse(line));
    } catch {
      // not a report
    }
  }
} else if (SPEC.lang === "shell") {
  for (const [name, args, input] of SPEC.cases) {
    const r = spawnSync("bash", [SPEC.module, ...args], { input, encoding: "utf8", timeout: 20000 });
    seen.push([name, JSON.stringify(String(r.stdout ?? "").trimEnd())]);
  }
} else if (SPEC.lang === "data") {
  // Data files are only parsed, never run.
  for (const [name, expr] of SPEC.cases) {
    let value;
    try {
      value = Function("read", `return (${expr});`)((path) => readFileSync(resolve(process.cwd(), path), "utf8"));
    } catch (error) {
      value = { error: String(error?.name) };
    }
    seen.push([name, JSON.stringify(value) ?? "undefined"]);
  }
}
let failed = 0;
SPEC.expected.forEach((want, i) => {
  const name = SPEC.cases[i][0];
  const [got_name, got] = Array.isArray(seen[i]) ? seen[i] : [];
  const why = got_name !== name ? "not reached (the code under test ended its process early)"
    : same(got, want) ? null : `expected ${JSON.stringify(want)}, got ${got}`;
  if (why) {
    failed++;
    console.log(`FAIL ${name}: ${why}`);
  }
});
if (SPEC.expected.length === 0) failed++;
console.log(failed ? `${failed} checks failed` : "all checks passed");
process.exit(failed ? 1 : 0);
