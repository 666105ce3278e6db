// Local HTTP servers on 127.0.0.1 that speak the Anthropic Messages, OpenAI Chat Completions and OpenAI Responses wire
// formats. Each answers a scripted sequence of responses (bodies shaped like the providers' documented ones) and
// records the requests it received, so tests can assert both what Loom sent and what it made of the answers. Like the
// real APIs, they reject what the providers document as rejected, before the script is consulted (each rejection
// with its source and date in `anthropicRejection` / `openAIRejection`), and a scripted answer takes the form the
// request asked for (a tool call, output_config.format text, a Chat Completion or a Response).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export type ScriptedResponse = {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent verbatim instead of `body` (for malformed bodies). */
  rawBody?: string;
  /** Never answer: the connection stays open until the client gives up or the server closes. */
  hang?: boolean;
  /** Answer after this many milliseconds (a model's latency). */
  delayMs?: number;
};

export type ReceivedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  rawBody: string;
  /** The body parsed as JSON, or undefined when it was not JSON. */
  body: unknown;
};

export type Script = ScriptedResponse[] | ((request: ReceivedRequest, index: number) => ScriptedResponse);

export type FakeProviderServer = {
  /** What to configure as base_url (Anthropic: without /v1; OpenAI: with /v1, as the official SDKs expect). */
  baseUrl: string;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** Accepted requests, each answered from the script. */
  requests: ReceivedRequest[];
  /** Requests the stand-in rejected as the real API does (never given a scripted answer). */
  rejections: ReceivedRequest[];
  close(): Promise<void>;
};

type Wire = {
  paths: string[];
  baseSuffix: string;
  notFound: (path: string) => unknown;
  exhausted: (n: number) => unknown;
  /** What the real API answers a request it rejects; null: accepted. */
  reject?: (request: ReceivedRequest) => ScriptedResponse | null;
  /** The scripted answer in the form the request asked for. */
  adapt?: (request: ReceivedRequest, response: ScriptedResponse) => ScriptedResponse;
};

async function startServer(script: Script, wire: Wire): Promise<FakeProviderServer> {
  const requests: ReceivedRequest[] = [];
  const rejections: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const send = (res: ServerResponse, response: ScriptedResponse) => {
    const text = response.rawBody ?? JSON.stringify(response.body ?? {});
    res.writeHead(response.status ?? 200, { "content-type": "application/json", ...response.headers });
    res.end(text);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers[name] = value;
      const path = (req.url ?? "/").split("?")[0];
      if (req.method !== "POST" || !wire.paths.includes(path)) {
        return send(res, { status: 404, body: wire.notFound(path) });
      }
      const received: ReceivedRequest = { method: req.method, path, headers, rawBody, body };
      const rejected = wire.reject?.(received);
      if (rejected) {
        rejections.push(received);
        return send(res, rejected);
      }
      const index = requests.length;
      requests.push(received);
      const scripted = typeof script === "function" ? script(received, index) : script[index];
      if (!scripted) return send(res, { status: 400, body: wire.exhausted(index) });
      const response = wire.adapt ? wire.adapt(received, scripted) : scripted;
      if (response.hang) return;
      if (response.delayMs) setTimeout(() => send(res, response), response.delayMs);
      else send(res, response);
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${origin}${wire.baseSuffix}`,
    origin,
    requests,
    rejections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---- Anthropic Messages API ----

export const FULL_ANTHROPIC_USAGE = {
  input_tokens: 2095,
  cache_creation_input_tokens: 1024,
  cache_read_input_tokens: 8192,
  output_tokens: 503,
  service_tier: "standard",
};

/** Serves POST /v1/messages; configure base_url = server.baseUrl. */
export function startAnthropicServer(script: Script): Promise<FakeProviderServer> {
  return startServer(script, {
    paths: ["/v1/messages"],
    baseSuffix: "",
    reject: anthropicRejection,
    adapt: anthropicForm,
    notFound: (path) => ({ type: "error", error: { type: "not_found_error", message: `Not found: ${path}` } }),
    exhausted: (n) => ({
      type: "error",
      error: { type: "invalid_request_error", message: `Fake server: script has no response #${n + 1}` },
    }),
  });
}

let messageCounter = 0;

/** A forced-tool answer as the API returns it: one tool_use block whose input is {answer: value}. usage null omits usage. */
export function anthropicAnswer(
  value: unknown,
  { usage = FULL_ANTHROPIC_USAGE, model = "claude-haiku-4-5" }: {
    usage?: Record<string, unknown> | null;
    model?: string;
  } = {},
): ScriptedResponse {
  messageCounter++;
  return {
    body: {
      id: `msg_fake${messageCounter}`,
      type: "message",
      role: "assistant",
      model,
      content: [{ type: "tool_use", id: `toolu_fake${messageCounter}`, name: "answer", input: { answer: value } }],
      stop_reason: "tool_use",
      stop_sequence: null,
      ...(usage === null ? {} : { usage }),
    },
  };
}

/** A plain text reply (no tool call). */
export function anthropicText(
  text: string,
  { usage = FULL_ANTHROPIC_USAGE }: { usage?: Record<string, unknown> | null } = {},
): ScriptedResponse {
  messageCounter++;
  return {
    body: {
      id: `msg_fake${messageCounter}`,
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [{ type: "text", text }],
      stop_reason: "end_turn",
      stop_sequence: null,
      ...(usage === null ? {} : { usage }),
    },
  };
}

/** An error as the API sends it: {type:"error", error:{type, message}}. */
export function anthropicError(
  status: number,
  { type = "api_error", message = "Internal server error", headers = {} }: {
    type?: string;
    message?: string;
    headers?: Record<string, string>;
  } = {},
): ScriptedResponse {
  return { status, headers, body: { type: "error", error: { type, message }, request_id: "req_fake" } };
}

// ---- OpenAI Chat Completions ----

export const FULL_OPENAI_USAGE = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  total_tokens: 2306,
  prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};

/** Serves POST /v1/chat/completions and /v1/responses; configure base_url = server.baseUrl (which ends in /v1). */
export function startOpenAIServer(script: Script): Promise<FakeProviderServer> {
  return startServer(script, {
    paths: ["/v1/chat/completions", "/v1/responses"],
    baseSuffix: "/v1",
    reject: openAIRejection,
    adapt: openAIForm,
    notFound: (path) => ({
      error: { message: `Invalid URL (POST ${path})`, type: "invalid_request_error", param: null, code: null },
    }),
    exhausted: (n) => ({
      error: {
        message: `Fake server: script has no response #${n + 1}`,
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    }),
  });
}

let completionCounter = 0;

/**
 * A chat completion whose message content is the JSON text of {answer: value} (json_schema mode), or of the value
 * itself with wrapped: false (json_object / no response format). usage null omits usage.
 */
export function openAIAnswer(
  value: unknown,
  {
    usage = FULL_OPENAI_USAGE,
    wrapped = true,
    model = "gpt-4o-2024-08-06",
  }: { usage?: Record<string, unknown> | null; wrapped?: boolean; model?: string } = {},
): ScriptedResponse {
  return openAIText(JSON.stringify(wrapped ? { answer: value } : value), { usage, model });
}

export function openAIText(
  content: string,
  { usage = FULL_OPENAI_USAGE, model = "gpt-4o-2024-08-06" }: {
    usage?: Record<string, unknown> | null;
    model?: string;
  } = {},
): ScriptedResponse {
  completionCounter++;
  return {
    body: {
      id: `chatcmpl-fake${completionCounter}`,
      object: "chat.completion",
      created: 1_700_000_000 + completionCounter,
      model,
      choices: [{
        index: 0,
        message: { role: "assistant", content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: "stop",
      }],
      ...(usage === null ? {} : { usage }),
      service_tier: "default",
      system_fingerprint: "fp_fake",
    },
  };
}

/** An error as the API sends it: {error:{message, type, param, code}}. */
export function openAIError(
  status: number,
  {
    type = "server_error",
    message = "The server had an error while processing your request.",
    code = null,
    headers = {},
  }: {
    type?: string;
    message?: string;
    code?: string | null;
    headers?: Record<string, string>;
  } = {},
): ScriptedResponse {
  return { status, headers, body: { error: { message, type, param: null, code } } };
}

// ---- what the real APIs reject ----

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? value as Record<string, unknown> : {};

/** Models that answer a forced tool (tool_choice any or tool) with a 400: "What's new in Claude Sonnet 5.5" ("Forced
 * tool use returns an error", 2026-09-28) and the Opus 5.5 and Fable 5.1 pages (read 2026-12-01). */
export const ANTHROPIC_NO_FORCED_TOOL = new Set([
  "claude-sonnet-5-5",
  "claude-opus-5-5",
  "claude-fable-5-1",
  "claude-fable-5-2",
  "claude-haiku-5-5",
]);
/** Effort values per model (output_config.effort): the model pages and @anthropic-ai/sdk 1.15.0; others are 400s. */
const ANTHROPIC_EFFORT: Record<string, readonly string[]> = {
  "claude-opus-4-5": ["low", "medium", "high"],
  "claude-haiku-4-5": [],
};
const ALL_EFFORT = ["low", "medium", "high", "xhigh", "max"];
/** Retired ids: requests answer 404 (the model-deprecations page; @anthropic-ai/sdk 1.15.0, 2026-11-30). */
export const ANTHROPIC_RETIRED = new Set([
  "claude-sonnet-4-5",
  "claude-sonnet-4-5-20250929",
  "claude-opus-4-1",
  "claude-opus-4-1-20250805",
]);

function anthropicError400(message: string, status = 400, type = "invalid_request_error"): ScriptedResponse {
  return { status, body: { type: "error", error: { type, message }, request_id: "req_fake" } };
}

/** What the Messages API rejects of a request, per its documentation. */
export function anthropicRejection(request: ReceivedRequest): ScriptedResponse | null {
  const body = record(request.body);
  const model = String(body.model ?? "");
  if (ANTHROPIC_RETIRED.has(model)) return anthropicError400(`model: ${model}`, 404, "not_found_error");
  const effort = record(body.output_config).effort;
  const thinking = record(body.thinking).type;
  if (typeof effort === "string" && !(ANTHROPIC_EFFORT[model] ?? ALL_EFFORT).includes(effort)) {
    return anthropicError400(`output_config.effort: ${JSON.stringify(effort)} is not supported by ${model}`);
  }
  // Sonnet 5.5: between_tools runs at effort low, medium or high ("What's new in Claude Sonnet 5.5").
  if (model === "claude-sonnet-5-5" && thinking === "between_tools" && (effort === "xhigh" || effort === "max")) {
    return anthropicError400(`thinking.type: between_tools cannot be combined with effort ${effort}`);
  }
  const choice = record(body.tool_choice);
  if (ANTHROPIC_NO_FORCED_TOOL.has(model) && (choice.type === "tool" || choice.type === "any")) {
    return anthropicError400(`tool_choice: forced tool use is not supported by ${model}; use output_config.format`);
  }
  // API version 2026-10-21 removed the sampling parameters, default values included (platform.claude.com
  // versioning page, 2026-10-21).
  if (request.headers["anthropic-version"] === "2026-10-21") {
    for (const name of ["temperature", "top_p", "top_k"]) {
      if (name in body) return anthropicError400(`${name}: Extra inputs are not permitted`);
    }
  }
  return null;
}

/** A scripted tool answer as the text output_config.format (or a prompt-format request) gets instead. */
function anthropicForm(request: ReceivedRequest, response: ScriptedResponse): ScriptedResponse {
  const body = record(response.body);
  if (!Array.isArray(body.content) || Array.isArray(record(request.body).tools)) return response;
  const asked = record(record(request.body).output_config).format !== undefined;
  const content = body.content.map((block) => {
    const b = record(block);
    if (b.type !== "tool_use") return block;
    const input = record(b.input);
    return { type: "text", text: JSON.stringify(asked ? input : input.answer) };
  });
  const stop = body.stop_reason === "tool_use" ? "end_turn" : body.stop_reason;
  return { ...response, body: { ...body, content, stop_reason: stop } };
}

/** Served only by the Responses API: Chat Completions answers 400 (pgadmin-org/pgadmin4#9795, alvinunreal/tmuxai#82;
 * the SDK's ResponsesModel list, openai 7.59.0). */
export const OPENAI_RESPONSES_ONLY = new Set(["gpt-5-codex", "gpt-5.1-codex-max", "gpt-5-pro", "gpt-5.5-pro"]);
/** Models before GPT-5.6 answer prompt_cache_breakpoint / prompt_cache_options with a 400 (GPT-5.6 prompting
 * guides; the SDK documents the options as "Supported for gpt-5.6 and later models", openai 7.59.0). */
const OPENAI_EXPLICIT_CACHE = /^gpt-(5\.6|6)/;
/** Shut down: requests answer 404 model_not_found (the deprecations page: gpt-5-codex on 2026-07-23). */
export const OPENAI_RETIRED = new Set(["gpt-5-codex"]);
/** Reasoning effort values per model (the model pages); a value outside the list answers 400. */
const OPENAI_EFFORT: [RegExp, readonly string[]][] = [
  [/^gpt-6\.1-/, ["low", "medium", "high", "xhigh", "max"]],
  [/^gpt-(5\.6|6)/, ["none", "low", "medium", "high", "xhigh", "max"]],
  [/^gpt-5(-|$)/, ["minimal", "low", "medium", "high"]],
  [/^gpt-4/, []],
];

function openAIError400(message: string, param: string | null = null): ScriptedResponse {
  return { status: 400, body: { error: { message, type: "invalid_request_error", param, code: null } } };
}

/** The first property of each object branch of every anyOf in `schema`, where two share an identical one. */
export function sharedFirstKey(schema: unknown): string | null {
  const node = record(schema);
  if (Array.isArray(node.anyOf)) {
    const firsts = node.anyOf.map((branch) => {
      const props = record(record(branch).properties);
      const [key] = Object.keys(props);
      return key === undefined ? null : JSON.stringify([key, props[key]]);
    }).filter((first): first is string => first !== null);
    const twice = firsts.find((first, i) => firsts.indexOf(first) !== i);
    if (twice) return JSON.parse(twice)[0];
  }
  for (const value of Object.values(node)) {
    const children = Array.isArray(value) ? value : [value];
    for (const child of children) {
      if (child !== null && typeof child === "object") {
        const found = sharedFirstKey(child);
        if (found) return found;
      }
    }
  }
  return null;
}

/** What the OpenAI APIs reject of a request, per their documentation and the reports cited above. */
export function openAIRejection(request: ReceivedRequest): ScriptedResponse | null {
  const body = record(request.body);
  const model = String(body.model ?? "");
  const responses = request.path.endsWith("/responses");
  if (OPENAI_RETIRED.has(model)) {
    return {
      status: 404,
      body: {
        error: {
          message: `The model \`${model}\` does not exist or you do not have access to it.`,
          type: "invalid_request_error",
          param: null,
          code: "model_not_found",
        },
      },
    };
  }
  const effort = responses ? record(body.reasoning).effort : body.reasoning_effort;
  const accepted = OPENAI_EFFORT.find(([pattern]) => pattern.test(model))?.[1];
  if (typeof effort === "string" && accepted && !accepted.includes(effort)) {
    return openAIError400(
      `Unsupported value: '${effort}' is not supported with the '${model}' model.`,
      responses ? "reasoning.effort" : "reasoning_effort",
    );
  }
  if (!responses && OPENAI_RESPONSES_ONLY.has(model)) {
    return openAIError400("This model is only supported in v1/responses and not in v1/chat/completions.", "model");
  }
  const format = responses
    ? record(record(body.text).format)
    : { ...record(record(body.response_format).json_schema), type: record(body.response_format).type };
  // Strict structured outputs (openai/openai-python#2193, reasoning models, 2025).
  if (format.type === "json_schema" && format.strict === true) {
    const key = sharedFirstKey(format.schema);
    if (key) {
      return openAIError400(
        `Invalid schema for response_format '${String(format.name)}': Objects provided via 'anyOf' must not share ` +
          `identical first keys. Consider adding a discriminator key (the first key "${key}" is shared).`,
        responses ? "text.format.schema" : "response_format",
      );
    }
  }
  if (
    !OPENAI_EXPLICIT_CACHE.test(model) &&
    (request.rawBody.includes('"prompt_cache_breakpoint"') || "prompt_cache_options" in body)
  ) {
    return openAIError400("prompt_cache_breakpoint is not supported with this model.", "prompt_cache_breakpoint");
  }
  return null;
}

/** A scripted Chat Completion as the Responses API answers it, on /v1/responses. */
function openAIForm(request: ReceivedRequest, response: ScriptedResponse): ScriptedResponse {
  const body = record(response.body);
  if (!request.path.endsWith("/responses") || !Array.isArray(body.choices)) return response;
  const choice = record(body.choices[0]);
  const message = record(choice.message);
  const usage = record(body.usage);
  const details = record(usage.prompt_tokens_details);
  const content = typeof message.refusal === "string" && message.refusal
    ? [{ type: "refusal", refusal: message.refusal }]
    : [{ type: "output_text", text: String(message.content ?? ""), annotations: [] }];
  return {
    ...response,
    body: {
      id: `resp_${String(body.id ?? "fake")}`,
      object: "response",
      model: record(request.body).model,
      status: choice.finish_reason === "length" ? "incomplete" : "completed",
      incomplete_details: choice.finish_reason === "length" ? { reason: "max_output_tokens" } : null,
      output: [{ type: "message", id: "msg_fake", status: "completed", role: "assistant", content }],
      ...(body.usage === undefined ? {} : {
        usage: {
          input_tokens: usage.prompt_tokens,
          input_tokens_details: {
            cached_tokens: details.cached_tokens ?? 0,
            cache_write_tokens: details.cache_write_tokens ?? 0,
          },
          output_tokens: usage.completion_tokens,
          output_tokens_details: { reasoning_tokens: record(usage.completion_tokens_details).reasoning_tokens ?? 0 },
          total_tokens: usage.total_tokens,
        },
      }),
    },
  };
}

// ---- a TurnRequest like the loop builds ----

/** Strings that occur exactly once in sampleTurnRequest(), to check no section is sent twice. */
export const SAMPLE_MARKERS = {
  instructions: "Work in small steps; INSTRUCTIONS-MARKER-7f3a",
  intent: "Fix the off-by-one in range(); INTENT-MARKER-19c2",
  checkpoint: "CHECKPOINT-MARKER-5be1",
  events: "EVENTS-MARKER-0d44",
  working_state: "STATE-MARKER-a9e0",
  lookups: "LOOKUP-MARKER-62f8",
} as const;

/** A selection-phase response schema as the loop generates it: a decision (reason optional) or a lookup. */
export const SAMPLE_SELECTION_SCHEMA = {
  anyOf: [
    {
      type: "object",
      properties: {
        action: {
          type: "string",
          enum: ["read_file", "edit_file", "run_tests", "finish"],
          description: "The action to take next",
        },
        reason: { description: "Why, briefly", type: "string" },
      },
      required: ["action"],
      additionalProperties: false,
    },
    {
      type: "object",
      properties: { $result: { type: "string", description: "sha256:<hex> with an optional selection" } },
      required: ["$result"],
      additionalProperties: false,
    },
    {
      type: "object",
      properties: {
        $list_history: {
          type: "integer",
          minimum: 0,
          maximum: 9007199254740991,
          description: "Offset into the archive",
        },
      },
      required: ["$list_history"],
      additionalProperties: false,
    },
    {
      type: "object",
      properties: { $read_history: { type: "string", description: "Digest of an archived event" } },
      required: ["$read_history"],
      additionalProperties: false,
    },
  ],
};

export function sampleTurnRequest(
  { checkpoint = true, lookups = true }: { checkpoint?: boolean; lookups?: boolean } = {},
) {
  const sections = [
    { section: "instructions" as const, text: SAMPLE_MARKERS.instructions },
    { section: "intent" as const, text: SAMPLE_MARKERS.intent },
    ...(checkpoint
      ? [{ section: "checkpoint" as const, checkpoint: { seq: [1, 40], note: SAMPLE_MARKERS.checkpoint } }]
      : []),
    {
      section: "events" as const,
      events: [{ seq: 41, kind: "read", path: "src/range.py", note: SAMPLE_MARKERS.events }],
    },
    {
      section: "working_state" as const,
      state: { latest_revision: "r1", last_test: null, note: SAMPLE_MARKERS.working_state },
    },
    {
      section: "candidates" as const,
      actions: [
        { name: "read_file", description: "Read a file" },
        { name: "finish", description: "End the slice" },
      ],
    },
    ...(lookups
      ? [{
        section: "lookups" as const,
        responses: [{ lookup: { $result: "sha256:ab" }, text: SAMPLE_MARKERS.lookups }],
      }]
      : []),
  ];
  return { phase: "selection" as const, response_schema: SAMPLE_SELECTION_SCHEMA, sections };
}

/** Runs `run` against a fresh server (Anthropic- or OpenAI-shaped) and always closes it. */
export async function withFakeServer(
  start: (script: Script) => Promise<FakeProviderServer>,
  script: Script,
  run: (server: FakeProviderServer) => Promise<void>,
): Promise<void> {
  const server = await start(script);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail, but it succeeded");
}
