// The pure provider converters: sections -> blocks, schema rewriting, answer parsing, usage and stop reasons.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { convertAnthropicResponse } from "../lib/providers/anthropic/convert-anthropic-response.ts";
import { convertAnthropicUsage } from "../lib/providers/anthropic/convert-anthropic-usage.ts";
import { convertOpenAIResponse } from "../lib/providers/openai/convert-openai-response.ts";
import { convertOpenAIUsage } from "../lib/providers/openai/convert-openai-usage.ts";
import { convertToAnthropicRequest } from "../lib/providers/anthropic/convert-to-anthropic-request.ts";
import { convertToOpenAIRequest } from "../lib/providers/openai/convert-to-openai-request.ts";
import { convertToStrictJsonSchema } from "../lib/providers/openai/convert-to-strict-json-schema.ts";
import { decodePropertyKeys, encodePropertyKeys } from "../lib/providers/anthropic/encode-property-keys.ts";
import { mapAnthropicStopReason } from "../lib/providers/anthropic/map-anthropic-stop-reason.ts";
import { mapOpenAIStopReason } from "../lib/providers/openai/map-openai-stop-reason.ts";
import { dropNullOptionals, parseAnswerText, unwrapAnswer } from "../lib/providers/parse-answer.ts";
import { renderSection, renderSectionBlocks, splitPrefix } from "../lib/providers/render-sections.ts";
import { ProviderError } from "../lib/errors.ts";
import type { JsonSchema, TurnRequest } from "../lib/vocabulary/turn.ts";
import { SAMPLE_SELECTION_SCHEMA } from "./helpers/fake-provider-servers.ts";

const tiny: TurnRequest = {
  phase: "arguments",
  response_schema: {
    type: "object",
    properties: { path: { type: "string", minLength: 1 } },
    required: ["path"],
    additionalProperties: false,
  },
  sections: [
    { section: "instructions", text: "Be careful." },
    { section: "intent", text: "Fix it." },
    { section: "events", events: [] },
    { section: "candidates", action: "read_file" },
  ],
};

test("convertToAnthropicRequest maps a small request exactly (snapshot)", () => {
  const { body, aliases } = convertToAnthropicRequest(tiny, { model: "claude-x", maxTokens: 100 });
  assert.deepEqual(aliases, {});
  assert.deepEqual(body, {
    model: "claude-x",
    max_tokens: 100,
    system: [
      { type: "text", text: "## Instructions\nBe careful." },
      { type: "text", text: "## Intent\nFix it.", cache_control: { type: "ephemeral" } },
    ],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "## Events (oldest first)\n[]" },
          { type: "text", text: '## Candidates\n{"action":"read_file"}' },
        ],
      },
    ],
    // One tool for selection and arguments (the loop sends one schema for both), so the tools never change in a run.
    tools: [
      {
        name: "answer",
        description: "The answer to this request. The `answer` field must conform to its schema.",
        input_schema: {
          type: "object",
          properties: { answer: tiny.response_schema },
          required: ["answer"],
          additionalProperties: false,
        },
      },
    ],
    tool_choice: { type: "tool", name: "answer" },
  });
});

test("convertToOpenAIRequest maps a small request exactly (snapshot)", () => {
  const { body, wrapped } = convertToOpenAIRequest(tiny, { model: "gpt-x" });
  assert.equal(wrapped, true);
  assert.deepEqual(body, {
    model: "gpt-x",
    messages: [
      { role: "system", content: "## Instructions\nBe careful.\n\n## Intent\nFix it." },
      { role: "user", content: '## Events (oldest first)\n[]\n\n## Candidates\n{"action":"read_file"}' },
    ],
    response_format: {
      type: "json_schema",
      json_schema: {
        name: "answer",
        strict: true,
        schema: {
          type: "object",
          properties: {
            answer: {
              type: "object",
              properties: { path: { type: "string", description: "{minLength: 1}" } },
              required: ["path"],
              additionalProperties: false,
            },
          },
          required: ["answer"],
          additionalProperties: false,
        },
      },
    },
  });
});

test("splitPrefix keeps instructions, intent and checkpoint as the prefix and the order of everything", () => {
  const { prefix, rest } = splitPrefix([
    { section: "instructions", text: "i" },
    { section: "intent", text: "t" },
    { section: "checkpoint", checkpoint: { seq: 1 } },
    { section: "events", events: [1] },
    { section: "working_state", state: {} },
    { section: "candidates", actions: [] },
    { section: "lookups", responses: [] },
  ]);
  assert.deepEqual(
    prefix.map((s) => s.section),
    ["instructions", "intent", "checkpoint"],
  );
  assert.deepEqual(
    rest.map((s) => s.section),
    ["events", "working_state", "candidates", "lookups"],
  );
});

test("renderSection writes structured sections as compact JSON under a label, text verbatim", () => {
  assert.equal(renderSection({ section: "intent", text: "Fix\n  it" }), "## Intent\nFix\n  it");
  assert.equal(
    renderSection({ section: "working_state", state: { step: 3, tests: null } }),
    '## Working state\n{"step":3,"tests":null}',
  );
  assert.equal(renderSection({ section: "lookups", responses: [{ ok: true }] }), '## Lookup responses\n[{"ok":true}]');
});

test("renderSectionBlocks splits the events section into one block per event and the closing bracket; joined, they are renderSection's text", () => {
  const events = { section: "events" as const, events: [{ seq: 1 }, { seq: 2, out: "a\nb" }, { seq: 3 }] };
  assert.deepEqual(renderSectionBlocks(events), [
    '## Events (oldest first)\n[{"seq":1}',
    ',{"seq":2,"out":"a\\nb"}',
    ',{"seq":3}',
    "]",
  ]);
  assert.deepEqual(renderSectionBlocks({ section: "events", events: [{ seq: 1 }] }), [
    '## Events (oldest first)\n[{"seq":1}',
    "]",
  ]);
  assert.deepEqual(renderSectionBlocks({ section: "events", events: [] }), ["## Events (oldest first)\n[]"]);
  assert.deepEqual(renderSectionBlocks({ section: "intent", text: "Fix it" }), ["## Intent\nFix it"]);
});

test("renderSectionBlocks (property): same bytes as one block, and an older event's block keeps its bytes as events arrive", () => {
  const value = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.constant(null));
  const event = fc.dictionary(fc.string({ maxLength: 5 }), value, { maxKeys: 3 });
  fc.assert(
    fc.property(fc.array(event, { maxLength: 8 }), event, (events, next) => {
      const section = { section: "events" as const, events };
      const blocks = renderSectionBlocks(section);
      assert.equal(blocks.join(""), renderSection(section));
      assert.equal(blocks.length, events.length === 0 ? 1 : events.length + 1);
      const grown = renderSectionBlocks({ section: "events", events: [...events, next] });
      // Every event's block is unchanged when an event is appended (the closing bracket is a block of its own).
      assert.deepEqual(grown.slice(0, events.length), blocks.slice(0, events.length));
    }),
  );
});

test("strict schema: unsupported keywords move into the description, oneOf becomes anyOf, const becomes enum", () => {
  const { schema, strict } = convertToStrictJsonSchema({
    oneOf: [
      {
        type: "object",
        properties: {
          kind: { type: "string", const: "a" },
          name: { type: "string", maxLength: 9, description: "Name" },
        },
        required: ["kind", "name"],
      },
      {
        type: "object",
        properties: { kind: { type: "string", const: "b" } },
        required: ["kind"],
        additionalProperties: false,
      },
    ],
  });
  assert.equal(strict, true);
  assert.deepEqual(schema, {
    anyOf: [
      {
        type: "object",
        properties: {
          kind: { type: "string", enum: ["a"] },
          name: { type: "string", description: "Name {maxLength: 9}" },
        },
        required: ["kind", "name"],
        additionalProperties: false,
      },
      {
        type: "object",
        properties: { kind: { type: "string", enum: ["b"] } },
        required: ["kind"],
        additionalProperties: false,
      },
    ],
  });
});

test("strict schema: optional properties become required and nullable, whatever their form", () => {
  const { schema } = convertToStrictJsonSchema({
    type: "object",
    properties: {
      a: { type: "string" },
      b: { type: "string", enum: ["x", "y"] },
      c: { $ref: "#/$defs/C" },
      d: { anyOf: [{ type: "string" }, { type: "integer" }] },
      e: { type: ["integer", "null"] },
    },
    required: ["a"],
    $defs: { C: { type: "object", properties: {} } },
  });
  const props = schema.properties as Record<string, JsonSchema>;
  assert.deepEqual(schema.required, ["a", "b", "c", "d", "e"]);
  assert.deepEqual(props.a, { type: "string" });
  assert.deepEqual(props.b, { type: ["string", "null"], enum: ["x", "y", null] });
  assert.deepEqual(props.c, { anyOf: [{ $ref: "#/$defs/C" }, { type: "null" }] });
  assert.deepEqual(props.d, { anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] });
  assert.deepEqual(props.e, { type: ["integer", "null"] });
  assert.deepEqual((schema.$defs as Record<string, JsonSchema>).C, {
    type: "object",
    properties: {},
    required: [],
    additionalProperties: false,
  });
});

test("strict schema: a free-form map or an unconstrained value is sent with strict: false", () => {
  assert.equal(convertToStrictJsonSchema({ type: "object", additionalProperties: { type: "string" } }).strict, false);
  assert.equal(convertToStrictJsonSchema({ type: "object", properties: { v: {} }, required: ["v"] }).strict, false);
  assert.equal(convertToStrictJsonSchema({ allOf: [{ type: "object" }] }).strict, false);
  assert.equal(convertToStrictJsonSchema(SAMPLE_SELECTION_SCHEMA).strict, true);
});

type Node = { type: "string" } | { type: "object"; properties: Record<string, Node>; required: string[] };
const objectSchema: fc.Arbitrary<Node> = fc.letrec<{ node: Node; object: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant({ type: "string" as const }),
    tie("object"),
  ),
  object: fc
    .dictionary(fc.string({ minLength: 1, maxLength: 6 }), tie("node"), { maxKeys: 4 })
    .chain((properties) =>
      fc.subarray(Object.keys(properties)).map((required) => ({ type: "object" as const, properties, required }))
    ),
})).object;

function everyObject(schema: unknown, check: (node: JsonSchema) => void): void {
  if (schema === null || typeof schema !== "object") return;
  const node = schema as JsonSchema;
  if (node.type === "object" || (Array.isArray(node.type) && node.type.includes("object"))) check(node);
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) value.forEach((v) => everyObject(v, check));
    else if (value !== null && typeof value === "object") everyObject(value, check);
  }
}

test("strict schema (property): every object is closed and requires all its properties", () => {
  fc.assert(
    fc.property(objectSchema, (input) => {
      const { schema, strict } = convertToStrictJsonSchema(input as unknown as JsonSchema);
      assert.equal(strict, true);
      everyObject(schema, (node) => {
        assert.equal(node.additionalProperties, false);
        assert.deepEqual(node.required, Object.keys(node.properties as object));
      });
    }),
  );
});

test("dropNullOptionals (property): nulls sent for omitted optional properties are removed exactly", () => {
  const schema = SAMPLE_SELECTION_SCHEMA;
  fc.assert(
    fc.property(
      fc.constantFrom("read_file", "finish"),
      fc.option(fc.string(), { nil: undefined }),
      (action, reason) => {
        const original = reason === undefined ? { action } : { action, reason };
        const sent = { action, reason: reason ?? null };
        assert.deepEqual(dropNullOptionals(sent, schema), original);
      },
    ),
  );
});

test("dropNullOptionals keeps nulls the schema requires and recurses into nested objects and arrays", () => {
  const schema = {
    type: "object",
    properties: {
      keep: { type: ["string", "null"] },
      items: {
        type: "array",
        items: { type: "object", properties: { x: { type: "string" }, y: { type: "string" } }, required: ["x"] },
      },
    },
    required: ["keep", "items"],
  };
  assert.deepEqual(dropNullOptionals({ keep: null, items: [{ x: "1", y: null }, { x: "2", y: "3" }] }, schema), {
    keep: null,
    items: [{ x: "1" }, { x: "2", y: "3" }],
  });
});

test("encodePropertyKeys renames keys Anthropic rejects, avoids collisions, and decoding restores them", () => {
  const schema = {
    anyOf: [
      { type: "object", properties: { $result: { type: "string" } }, required: ["$result"] },
      {
        type: "object",
        properties: {
          _result: { type: "string" },
          "a b": { type: "object", properties: { "c@d": { type: "string" } } },
        },
      },
    ],
  };
  const { schema: encoded, aliases } = encodePropertyKeys(schema);
  assert.deepEqual(aliases, { _result_2: "$result", a_b: "a b", c_d: "c@d" });
  const [first, second] = encoded.anyOf as JsonSchema[];
  assert.deepEqual(first.required, ["_result_2"]);
  assert.deepEqual(Object.keys(second.properties as object), ["_result", "a_b"]);
  assert.deepEqual(decodePropertyKeys({ _result_2: "x", _result: "y", a_b: { c_d: 1 } }, aliases), {
    $result: "x",
    _result: "y",
    "a b": { "c@d": 1 },
  });
});

test("parseAnswerText parses JSON, fenced JSON, and keeps anything else as text", () => {
  assert.deepEqual(parseAnswerText(' {"action":"finish"} '), { action: "finish" });
  assert.deepEqual(parseAnswerText('```json\n{"a":1}\n```'), { a: 1 });
  assert.deepEqual(parseAnswerText("```\n[1,2]\n```"), [1, 2]);
  assert.equal(parseAnswerText("Let me think"), "Let me think");
  assert.equal(parseAnswerText(""), "");
});

test("unwrapAnswer takes the value out of {answer} and leaves everything else alone", () => {
  assert.deepEqual(unwrapAnswer({ answer: { action: "finish" } }), { action: "finish" });
  assert.deepEqual(unwrapAnswer({ answer: 1, extra: 2 }), { answer: 1, extra: 2 });
  assert.deepEqual(unwrapAnswer({ action: "finish" }), { action: "finish" });
  assert.equal(unwrapAnswer("text"), "text");
});

test("convertAnthropicUsage maps the four counters and never invents a 0", () => {
  assert.deepEqual(
    convertAnthropicUsage({
      input_tokens: 5,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 7,
      output_tokens: 9,
    }),
    { input: 5, cache_read: 0, cache_write: 7, output: 9 },
  );
  assert.deepEqual(convertAnthropicUsage({ input_tokens: 5, cache_read_input_tokens: null, output_tokens: -1 }), {
    input: 5,
    cache_read: null,
    cache_write: null,
    output: null,
  });
  assert.deepEqual(convertAnthropicUsage(undefined), {
    input: null,
    cache_read: null,
    cache_write: null,
    output: null,
  });
});

test("convertOpenAIUsage reads Chat Completions and Responses names; input leaves out cached tokens; cache writes are always null", () => {
  assert.deepEqual(
    convertOpenAIUsage({ prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 8 } }),
    {
      input: 2,
      cache_read: 8,
      cache_write: null,
      output: 2,
    },
  );
  assert.deepEqual(
    convertOpenAIUsage({ input_tokens: 11, output_tokens: 3, input_tokens_details: { cached_tokens: 0 } }),
    {
      input: 11,
      cache_read: 0,
      cache_write: null,
      output: 3,
    },
  );
  assert.deepEqual(
    convertOpenAIUsage({ prompt_tokens: 10, completion_tokens: 2 }, { timings: { cache_n: 6 } }),
    { input: 4, cache_read: 6, cache_write: null, output: 2 },
  );
  // Without a cache counter the whole prompt is input.
  assert.equal(convertOpenAIUsage({ prompt_tokens: 10, completion_tokens: 2 }).input, 10);
  assert.deepEqual(convertOpenAIUsage(null), { input: null, cache_read: null, cache_write: null, output: null });
});

test("stop reasons map to the provider-neutral set", () => {
  assert.equal(mapAnthropicStopReason("end_turn"), "end");
  assert.equal(mapAnthropicStopReason("max_tokens"), "max_tokens");
  assert.equal(mapAnthropicStopReason("tool_use"), "tool_use");
  assert.equal(mapAnthropicStopReason("refusal"), "refusal");
  assert.equal(mapAnthropicStopReason("pause_turn"), "other");
  assert.equal(mapOpenAIStopReason("stop"), "end");
  assert.equal(mapOpenAIStopReason("length"), "max_tokens");
  assert.equal(mapOpenAIStopReason("content_filter"), "refusal");
  assert.equal(mapOpenAIStopReason("stop", { refused: true }), "refusal");
  assert.equal(mapOpenAIStopReason(null), "other");
});

test("response converters reject bodies of the wrong shape as provider_malformed_response", () => {
  for (
    const convert of [
      () => convertAnthropicResponse({ content: "nope" }),
      () => convertOpenAIResponse({ choices: [{}] }, { wrapped: true, schema: {} }),
    ]
  ) {
    assert.throws(
      convert,
      (error: unknown) =>
        error instanceof ProviderError && error.code === "provider_malformed_response" && !error.retryable,
    );
  }
});

test("convertAnthropicResponse keeps the raw body beside the answer", () => {
  const raw = {
    type: "message",
    content: [{ type: "tool_use", name: "answer", input: { answer: { a: 1 } } }],
    stop_reason: "tool_use",
    usage: {},
  };
  const answer = convertAnthropicResponse(raw);
  assert.equal(answer.raw, raw);
  assert.deepEqual(answer.value, { a: 1 });
});
