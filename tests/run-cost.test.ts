// The cost block (SPEC §6): a run's JSON result and context report carry the money its provider counters imply at
// the dated price table, or null when the model has no price.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../main.ts";
import { anthropicAnswer, startAnthropicServer } from "./helpers/fake-provider-servers.ts";
import { fakeIo } from "./helpers/fake-io.ts";
import { BUILT_IN_PRICES } from "../lib/prices.ts";

const USAGE = {
  input_tokens: 1200,
  cache_read_input_tokens: 3000,
  cache_creation_input_tokens: 500,
  output_tokens: 40,
};

for (
  const [model, priced] of [["anthropic/claude-sonnet-5-5", true], ["anthropic/claude-unreleased-9", false]] as const
) {
  test(`loom run --json and its context report carry ${priced ? "the cost at the dated table" : "cost: null for a model without a price"} (${model})`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "loom-cost-"));
    // The model finishes at once: a selection call, then the finish arguments.
    const server = await startAnthropicServer((_, i) =>
      anthropicAnswer(i === 0 ? { action: "finish" } : { status: "success", summary: "Nothing to do." }, {
        usage: USAGE,
      })
    );
    try {
      const { io, out } = fakeIo({
        cwd: dir,
        env: { ANTHROPIC_BASE_URL: server.baseUrl, ANTHROPIC_API_KEY: "sk-ant-cost" },
      });
      const report = join(dir, "report.json");
      const code = await main(["run", "Nothing to do", "--model", model, "--json", "--context-report", report], io);
      assert.equal(code, 0, out.stderr);
      const result = JSON.parse(out.stdout);
      const written = JSON.parse(readFileSync(report, "utf8"));
      if (!priced) {
        assert.equal(result.cost, null);
        assert.equal(written.cost, null);
        return;
      }
      const p = BUILT_IN_PRICES.models[model];
      const expected = (2 * (1200 * p.input + 3000 * p.cache_read + 500 * p.cache_write_5m! + 40 * p.output)) / 1e6;
      assert.ok(Math.abs(result.cost.total - expected) < 1e-12, `${result.cost.total} vs ${expected}`);
      assert.deepEqual(written.cost, result.cost);
      assert.deepEqual(result.cost.prices, { source: p.source, date: p.date });
      const text = fakeIo({ cwd: dir });
      assert.equal(await main(["report", report], text.io), 0);
      assert.match(text.out.stdout, /cost\s+\$0\.\d{4}/);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
