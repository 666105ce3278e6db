// Every figure in the README comes from what produces it (scripts/readme-figures.ts): the usage lines and exit codes
// from the specs, the bundled workflow's comparison from replaying it, the long trajectory's from the workloads
// folder. A figure that went stale (94.6 KiB in the README, 98.6 KiB measured) fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { figureBlocks, README, withFigures } from "../scripts/readme-figures.ts";
import { WORKLOADS } from "./helpers/workloads.ts";

if (WORKLOADS === null) {
  console.log(
    "readme-figures.test.ts: skipping the long trajectory's figures: no workloads folder (the rest is checked)",
  );
}

test("every figures block of README.md is what its generator prints (regenerate: bun scripts/readme-figures.ts)", async () => {
  const readme = readFileSync(README, "utf8");
  const blocks = await figureBlocks();
  const marked = [...readme.matchAll(/<!-- figures: ([a-z-]+) -->/g)].map((m) => m[1]);
  for (const name of ["usage", "exit-codes", "quick-start-result", "example-comparison", "trajectory-comparison"]) {
    assert.ok(marked.includes(name), `README.md marks no "${name}" block`);
  }
  // Block by block, so a failure names the stale figures rather than printing the whole README.
  for (const [name, text] of blocks) {
    const shown = readme.match(new RegExp(`<!-- figures: ${name} -->\n\`\`\`[a-z]*\n([\\s\\S]*?)\n?\`\`\`\n`))?.[1];
    if (shown !== undefined) {
      assert.equal(shown, text, `README.md's "${name}" is stale: run bun scripts/readme-figures.ts`);
    }
  }
  assert.equal(
    withFigures(readme, blocks) === readme,
    true,
    "README.md figures differ: run bun scripts/readme-figures.ts",
  );
});

test("a figure the README holds that its generator does not make is refused, not kept", () => {
  assert.throws(
    () => withFigures("<!-- figures: nope -->\n```\n1\n```\n<!-- /figures -->\n", new Map()),
    /no generator for the figures block "nope"/,
  );
});
