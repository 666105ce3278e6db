// One parse of argv and one resolution of the settings per command (issue 45): main checks argv against the spec and
// the command gets that parse; the user's settings are resolved once (resolveAll), and a request, a catalog and its
// every slice are layered onto that resolution without resolving again. Counted through the flags: a resolution
// reads each setting's flag once, a layer reads none.
import { test } from "node:test";
import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PRECEDENCE, resolveSettings, type SettingFlags } from "../lib/settings/settings.ts";
import { parseCount } from "../commands/cli-spec.ts";
import { main } from "../main.ts";
import { fakeIo } from "./helpers/fake-io.ts";

function countingFlags(flags: SettingFlags, name: keyof SettingFlags) {
  const count = { reads: 0 };
  const proxy = new Proxy(flags, {
    get(target, key, receiver) {
      if (key === name) count.reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { flags: proxy, count };
}

test("resolveAll runs once per command: a request, a catalog and each of its slices are layers of it", () => {
  const { flags, count } = countingFlags({ step_protocol: "single-call" }, "context_policy");
  const resolved = resolveSettings({ env: { LOOM_CONTEXT_POLICY: "bounded" }, flags });
  assert.ok(resolved.ok);
  const request = resolved.plan.request({ file: "r.json", model: "openai/gpt-6-luna", previews: "wide" });
  const slices = Object.fromEntries(
    ["a", "b", "c", "d"].map((name) => [name, { model: "m", context_policy: "legacy" as const }]),
  );
  const catalog = resolved.plan.catalog({
    file: "c.json",
    models: { m: { kind: "openai", model: "gpt-6-luna" } },
    slices,
    classifier: "m",
  });
  assert.equal(count.reads, 1, `the settings were resolved ${count.reads} times`);
  // The layers say what a resolution of their own would: the flag stays, the layer's value is next, then the user's.
  assert.ok(request.ok && catalog.catalog.ok);
  assert.deepEqual(request.settings.step_protocol, { value: "single-call", source: "flag", from: "--step-protocol" });
  assert.deepEqual(request.settings.previews, { value: "wide", source: "request", from: "r.json: previews" });
  assert.deepEqual(request.settings.context_policy, {
    value: "bounded",
    source: "environment",
    from: "LOOM_CONTEXT_POLICY",
  });
  for (const name of Object.keys(slices)) {
    const slice = catalog.slices[name];
    assert.ok(slice?.ok);
    assert.deepEqual(slice.settings.context_policy, {
      value: "legacy",
      source: "catalog",
      from: `c.json: slices.${name}.context_policy`,
    });
    assert.equal(slice.settings.provider?.model, "gpt-6-luna");
  }
});

test("a layer sits right below the flags in every precedence that has one (the sandbox's layer only raises it)", () => {
  for (const [name, order] of Object.entries(PRECEDENCE) as [string, readonly string[]][]) {
    if (name === "sandbox") continue;
    const layers = order.filter((source) => source === "request" || source === "catalog");
    const above = order.slice(0, order.indexOf(layers[0] ?? "")).filter((source) => source !== "flag");
    assert.deepEqual(above, [], `${name}: ${order.join(" > ")}`);
    assert.deepEqual(
      order.slice(order.indexOf(layers[0] ?? ""), order.indexOf(layers[0] ?? "") + layers.length),
      layers,
    );
  }
});

test("argv is parsed once per command: main's check is the command's parse", async () => {
  const env = { XDG_CONFIG_HOME: join(tmpdir(), "loom-resolve-once-none") };
  for (const args of [["config", "--json", "--max-steps", "4"], ["schema", "config"], ["run", "--json", "x"]]) {
    const { io } = fakeIo({ cwd: tmpdir(), env });
    const before = parseCount.parses;
    await main(args, io);
    assert.equal(
      parseCount.parses - before,
      1,
      `loom ${args.join(" ")}: argv parsed ${parseCount.parses - before} times`,
    );
  }
});
