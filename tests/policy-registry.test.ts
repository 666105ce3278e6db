// Adding a context policy is one name in ContextPolicyName plus its entries in the two registries (lib/policy.ts's
// CONTEXT_POLICIES, lib/context/context.ts's CONTEXTS): on a scratch copy of the product code with a third name and no
// entries, tsc fails at exactly those two places — no shared code asks `=== "bounded"` and runs a new policy as legacy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/binary.ts";
import { CONTEXT_POLICIES } from "../lib/policy.ts";
import { ContextPolicyName } from "../lib/policy.ts";

test("every context policy has its traits, and only bounded is held to the ceiling and cut to previews", () => {
  assert.deepEqual(Object.keys(CONTEXT_POLICIES).sort(), [...ContextPolicyName.options].sort());
  assert.deepEqual(
    ContextPolicyName.options.filter((name) => CONTEXT_POLICIES[name].ceiling),
    ["bounded"],
  );
  assert.deepEqual(ContextPolicyName.options.filter((name) => CONTEXT_POLICIES[name].previews), ["bounded"]);
});

test("a policy added to ContextPolicyName without its registry entries fails typechecking, at the registries only", {
  timeout: 600_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-policy-registry-"));
  try {
    for (
      const path of ["main.ts", "api.ts", "package.json", "tsconfig.json", "tsconfig.product.json", "commands", "lib"]
    ) {
      cpSync(join(ROOT, path), join(dir, path), { recursive: true });
    }
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    const policy = join(dir, "lib", "policy.ts");
    const source = readFileSync(policy, "utf8");
    const added = source.replace('z.enum(["legacy", "bounded"])', 'z.enum(["legacy", "bounded", "masking"])');
    assert.notEqual(added, source, "the enum is where this test expects it");
    writeFileSync(policy, added);
    const tsc = spawnSync(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.product.json"], {
      cwd: dir,
      encoding: "utf8",
    });
    assert.notEqual(tsc.status, 0, "tsc must refuse a policy without its entries");
    const files = new Set([...tsc.stdout.matchAll(/^([\w./-]+)\(\d+,\d+\): error TS\d+/gm)].map((m) => m[1]));
    assert.deepEqual([...files].sort(), ["lib/context/context.ts", "lib/policy.ts"], tsc.stdout);
    assert.match(tsc.stdout, /masking/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no module outside the policies themselves asks a policy\'s name (=== "bounded"): it asks CONTEXT_POLICIES', () => {
  const askers = readdirSync(join(ROOT, "lib"), { recursive: true }).map((f) => String(f).split("\\").join("/"))
    .filter((f) => f.endsWith(".ts") && !f.startsWith("context/") && f !== "policy.ts")
    .filter((f) =>
      /[!=]==\s*"(legacy|bounded)"|"(legacy|bounded)"\s*[!=]==/.test(readFileSync(join(ROOT, "lib", f), "utf8"))
    );
  assert.deepEqual(askers, []);
});
