// Routing: pattern rules, then classification, then the default; the classification request and its ceiling.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { CEILING_BYTES } from "../lib/context/budget.ts";
import { Catalog } from "../lib/catalog/catalog.ts";
import { utf8Length } from "../lib/text/digest.ts";
import { InterruptedError, ProviderError, RoutingError, StartupError } from "../lib/errors.ts";
import { endingOf } from "../lib/ending.ts";
import {
  checkClassificationCeiling,
  classificationRequest,
  matchRule,
  readClassificationAnswer,
  type RouteOptions,
  routeRequest,
} from "../lib/catalog/routing.ts";
import type { ModelAnswer, Provider, TurnRequest, Usage } from "../lib/vocabulary/turn.ts";

const USAGE: Usage = { input: 120, cache_read: null, cache_write: null, output: 7 };

function slice(description: string) {
  return {
    description,
    intent: "{{request}}",
    instructions: "Work carefully.",
    actions: ["read_file" as const],
    test: { command: ["node", "test.mjs"], timeout_ms: 1000 },
    model: "m",
    limits: { max_steps: 5 },
  };
}

function catalog(routes: Record<string, unknown> | undefined, descriptions: Record<string, string> = {}): Catalog {
  return Catalog.parse({
    models: { m: { kind: "openai-compatible", model: "small-model" } },
    slices: {
      "fix-tests": slice(descriptions["fix-tests"] ?? "Fix failing tests"),
      explain: slice(descriptions.explain ?? "Answer questions about the code"),
      docs: slice(descriptions.docs ?? "Write documentation ✍️"),
    },
    ...(routes ? { routes } : {}),
  });
}

/** A provider that answers from a list and keeps the requests it got. */
function scripted(answers: unknown[]): Provider & { requests: TurnRequest[]; made: number } {
  const requests: TurnRequest[] = [];
  return {
    name: "scripted",
    capabilities: { prompt_caching: false, schema_enforcement: true },
    requests,
    made: 0,
    complete(request: TurnRequest): Promise<ModelAnswer> {
      requests.push(request);
      const next = answers[requests.length - 1];
      if (next instanceof Error) return Promise.reject(next);
      return Promise.resolve({ value: next, usage: USAGE });
    },
  };
}

function options(provider: ReturnType<typeof scripted>, extra: Partial<RouteOptions> = {}): RouteOptions {
  let t = 0;
  return {
    policy: "bounded",
    provider: () => {
      provider.made += 1;
      return provider;
    },
    now: () => (t += 5),
    ...extra,
  };
}

const ALL_ROUTES = {
  rules: [
    { pattern: "\\bdocs?\\b", slice: "docs" },
    { pattern: "fail(ing|ed)?", ignore_case: true, slice: "fix-tests" },
  ],
  classification: { model: "m", slices: ["fix-tests", "explain"] },
  default: "explain",
};

test("a matching pattern rule routes without any model call, and the first matching rule wins", async () => {
  const provider = scripted([]);
  const result = await routeRequest(catalog(ALL_ROUTES), "update the docs: the FAILING test", options(provider));
  assert.deepEqual(result, { ok: true, slice: "docs", via: "pattern", rule: 0, calls: [] });
  assert.equal(provider.made, 0);
  assert.deepEqual(matchRule(catalog(ALL_ROUTES), "Tests FAILED on CI"), { slice: "fix-tests", rule: 1 });
  assert.equal(matchRule(catalog(ALL_ROUTES), "documentation"), null);
});

test("with no rule matching, the classification decides, and its call is measured for the report", async () => {
  const provider = scripted([{ slice: "explain" }]);
  const result = await routeRequest(catalog(ALL_ROUTES), "what does truncateSlug do?", options(provider));
  assert.ok(result.ok);
  assert.equal(result.slice, "explain");
  assert.equal(result.via, "classification");
  const built = classificationRequest(catalog(ALL_ROUTES), "what does truncateSlug do?");
  assert.deepEqual(result.calls, [
    {
      phase: "classification",
      step: 0,
      request_bytes: built.bytes,
      elapsed_ms: 5,
      usage: USAGE,
      checkpoint: false,
      lookup: false,
    },
  ]);
  assert.deepEqual(provider.requests, [built.request]);
});

test("when the classifier finds no slice fits, the default runs; without classification the default runs directly", async () => {
  const declined = await routeRequest(catalog(ALL_ROUTES), "hello", options(scripted([{ slice: null }])));
  assert.ok(declined.ok);
  assert.deepEqual([declined.slice, declined.via, declined.calls.length], ["explain", "default", 1]);

  const provider = scripted([]);
  const direct = await routeRequest(
    catalog({ rules: ALL_ROUTES.rules, default: "explain" }),
    "hello",
    options(provider),
  );
  assert.deepEqual(direct, { ok: true, slice: "explain", via: "default", rule: null, calls: [] });
  assert.equal(provider.made, 0);
});

test("no rule, no classification and no default is a routing failure that suggests --slice", async () => {
  for (const routes of [undefined, { rules: ALL_ROUTES.rules }]) {
    const result = await routeRequest(catalog(routes), "hello", options(scripted([])));
    assert.ok(!result.ok);
    assert.ok(result.error instanceof RoutingError);
    assert.equal(result.error.code, "no_route");
    assert.match(result.error.message, /^No route matched the request .*pass --slice NAME/);
  }
});

test("the classification request: phase, instructions + intent + candidates in order, and a {slice: enum} schema", () => {
  const { request, bytes, candidates } = classificationRequest(catalog(ALL_ROUTES), "Explain the slug rules");
  assert.equal(request.phase, "classification");
  assert.deepEqual(request.sections.map((s) => s.section), ["instructions", "intent", "candidates"]);
  assert.deepEqual(request.sections[1], { section: "intent", text: "Explain the slug rules" });
  assert.deepEqual(request.sections[2], {
    section: "candidates",
    slices: [
      { name: "fix-tests", description: "Fix failing tests" },
      { name: "explain", description: "Answer questions about the code" },
    ],
  });
  assert.deepEqual(candidates, ["fix-tests", "explain"]);
  const schema = request.response_schema as any;
  assert.equal(schema.$schema, undefined);
  assert.deepEqual(schema.required, ["slice"]);
  assert.equal(schema.additionalProperties, false);
  // With a default to fall back to, the classifier may decline with null.
  assert.deepEqual(schema.properties.slice.anyOf.map((b: any) => b.enum ?? b.type), [["fix-tests", "explain"], "null"]);
  assert.equal(bytes, utf8Length(JSON.stringify(request)));
});

test("without a default the answer must name a slice; all slices are candidates when none are listed", () => {
  const { request, candidates } = classificationRequest(catalog({ classification: { model: "m" } }), "x");
  assert.deepEqual(candidates, ["fix-tests", "explain", "docs"]);
  assert.deepEqual((request.response_schema as any).properties.slice.enum, ["fix-tests", "explain", "docs"]);
  assert.ok(!(request.sections[0] as { text: string }).text.includes("null"));
});

test("request bytes count UTF-8, non-ASCII descriptions and requests included", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: "grapheme", maxLength: 200 }),
      fc.string({ unit: "grapheme", maxLength: 50 }),
      (request, description) => {
        const c = catalog(ALL_ROUTES, { explain: description || "x" });
        const built = classificationRequest(c, request);
        assert.equal(built.bytes, new TextEncoder().encode(JSON.stringify(built.request)).length);
      },
    ),
    { numRuns: 100 },
  );
});

/** A request text that makes the classification request exactly `target` bytes. */
function requestOfSize(c: Catalog, target: number): string {
  const base = classificationRequest(c, "").bytes;
  return "a".repeat(target - base);
}

test("under the bounded policy a classification request of 64 KiB passes and one byte more is refused", () => {
  const c = catalog(ALL_ROUTES);
  const atCeiling = requestOfSize(c, CEILING_BYTES);
  assert.equal(classificationRequest(c, atCeiling).bytes, CEILING_BYTES);
  assert.equal(checkClassificationCeiling({ bytes: CEILING_BYTES, policy: "bounded" }), null);
  const over = checkClassificationCeiling({ bytes: CEILING_BYTES + 1, policy: "bounded" });
  assert.ok(over instanceof RoutingError);
  assert.equal(over.code, "context_ceiling_exceeded");
  assert.equal(endingOf({ threw: over }).exitCode, 3);
  assert.match(over.message, /^Classification request is 65,537 bytes, over the 65,536-byte ceiling/);
  assert.equal(checkClassificationCeiling({ bytes: 10 * CEILING_BYTES, policy: "legacy" }), null);
});

test("an over-ceiling classification is refused before any request is sent; legacy sends it", async () => {
  const c = catalog(ALL_ROUTES);
  const text = requestOfSize(c, CEILING_BYTES + 1);
  const bounded = scripted([{ slice: "explain" }]);
  const refused = await routeRequest(c, text, options(bounded));
  assert.ok(!refused.ok);
  assert.equal(refused.error.code, "context_ceiling_exceeded");
  assert.deepEqual(refused.calls, []);
  assert.equal(bounded.requests.length, 0);

  const legacy = scripted([{ slice: "explain" }]);
  const sent = await routeRequest(c, text, options(legacy, { policy: "legacy" }));
  assert.ok(sent.ok);
  assert.equal(sent.calls[0].request_bytes, CEILING_BYTES + 1);
});

test("a mandatory part too large (a slice description) also trips the ceiling", async () => {
  const c = catalog({ classification: { model: "m" } }, { docs: "d".repeat(CEILING_BYTES) });
  const result = await routeRequest(c, "short request", options(scripted([])));
  assert.ok(!result.ok);
  assert.equal(result.error.code, "context_ceiling_exceeded");
});

test("a classification answer that is not a candidate fails routing and keeps the call's measurements", async () => {
  for (const answer of [{ slice: "deploy" }, { slice: "docs" }, "explain", { choice: "explain" }]) {
    const result = await routeRequest(catalog(ALL_ROUTES), "hello", options(scripted([answer])));
    assert.ok(!result.ok);
    assert.equal(result.error.code, "classification_unknown_slice");
    assert.equal(result.calls.length, 1);
    assert.equal(result.calls[0].phase, "classification");
  }
  const unknown = readClassificationAnswer({ slice: "deploy" }, {
    candidates: ["fix-tests", "explain"],
    canDecline: false,
  });
  assert.ok(!unknown.ok);
  assert.equal(
    unknown.error.message,
    `Classification chose "deploy", which is not a candidate slice (expected one of "fix-tests", "explain")`,
  );
  const declined = readClassificationAnswer({ slice: null }, { candidates: ["fix-tests"], canDecline: false });
  assert.ok(!declined.ok);
});

test("a failed classification call is a routing failure; an interrupt or a missing credential propagates", async () => {
  const failed = await routeRequest(
    catalog(ALL_ROUTES),
    "hello",
    options(scripted([new ProviderError("HTTP 400 from the API")])),
  );
  assert.ok(!failed.ok);
  assert.equal(failed.error.code, "classification_failed");
  assert.match(failed.error.message, /^Classification call failed: HTTP 400 from the API$/);
  // The request went out, so the report counts it: its bytes and time, and no usage (none was reported).
  const built = classificationRequest(catalog(ALL_ROUTES), "hello");
  assert.deepEqual(failed.calls, [
    {
      phase: "classification",
      step: 0,
      request_bytes: built.bytes,
      elapsed_ms: 5,
      usage: { input: null, cache_read: null, cache_write: null, output: null },
      checkpoint: false,
      lookup: false,
    },
  ]);

  await assert.rejects(
    routeRequest(catalog(ALL_ROUTES), "hello", options(scripted([new InterruptedError()]))),
    InterruptedError,
  );
  await assert.rejects(
    routeRequest(catalog(ALL_ROUTES), "hello", {
      ...options(scripted([])),
      provider: () => {
        throw new StartupError("needs an API key", "missing_credential");
      },
    }),
    { code: "missing_credential" },
  );
});
