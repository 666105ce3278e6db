// Local HTTP servers on 127.0.0.1 that speak the Anthropic Messages and OpenAI Chat Completions wire formats. Each
// answers a scripted sequence of responses (bodies shaped like the providers' documented ones) and records the
// requests it received, so tests can assert both what Loom sent and what it made of the answers.
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
  requests: ReceivedRequest[];
  close(): Promise<void>;
};

type Wire = {
  path: string;
  baseSuffix: string;
  notFound: (path: string) => unknown;
  exhausted: (n: number) => unknown;
};

async function startServer(script: Script, wire: Wire): Promise<FakeProviderServer> {
  const requests: ReceivedRequest[] = [];
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
      if (req.method !== "POST" || path !== wire.path) return send(res, { status: 404, body: wire.notFound(path) });
      const received: ReceivedRequest = { method: req.method, path, headers, rawBody, body };
      const index = requests.length;
      requests.push(received);
      const response = typeof script === "function" ? script(received, index) : script[index];
      if (!response) return send(res, { status: 400, body: wire.exhausted(index) });
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
    path: "/v1/messages",
    baseSuffix: "",
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
  { usage = FULL_ANTHROPIC_USAGE, model = "claude-sonnet-4-5" }: {
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
      model: "claude-sonnet-4-5",
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

/** Serves POST /v1/chat/completions; configure base_url = server.baseUrl (which ends in /v1). */
export function startOpenAIServer(script: Script): Promise<FakeProviderServer> {
  return startServer(script, {
    path: "/v1/chat/completions",
    baseSuffix: "/v1",
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
