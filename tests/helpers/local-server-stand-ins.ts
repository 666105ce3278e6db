// Stand-ins for the servers Loom talks to besides the two vendors' APIs: Ollama (native and OpenAI-compatible),
// LM Studio, llama.cpp's llama-server, vLLM and OpenRouter. Each behaves as its own documentation (or its maintainers'
// answers) say it does, rejections included, with the source beside each rule; each records what it received.
// Tokens are counted as ceil(bytes / 4) of the messages' JSON, the servers' own counts being tokenizer-specific.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export type Received = { path: string; headers: Record<string, string>; body: Record<string, unknown> };
type Reply = { status: number; body: unknown };
type Route = (request: Received) => Reply;

export type StandIn = {
  /** Where to point base_url (for OpenAI-compatible servers it ends in /v1, OpenRouter's in /api/v1). */
  baseUrl: string;
  origin: string;
  requests: Received[];
  close(): Promise<void>;
};

async function serve(routes: Record<string, Route>, baseSuffix: string): Promise<StandIn> {
  const requests: Received[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0];
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        // an unparseable body is answered by the route as the server would (most: 400)
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers[name] = value;
      // POST routes are keyed by path, others by "METHOD path" ("GET /props").
      const key = req.method === "POST" ? path : `${req.method} ${path}`;
      const route = Object.hasOwn(routes, key) ? routes[key] : undefined;
      const received = { path, headers, body };
      if (route) requests.push(received);
      const reply = route ? route(received) : { status: 404, body: { error: `404 page not found` } };
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify(reply.body));
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
    baseUrl: `${origin}${baseSuffix}`,
    origin,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function tokensOf(value: unknown): number {
  return Math.ceil(new TextEncoder().encode(JSON.stringify(value ?? "")).length / 4);
}

/** What the model "answers": by default {"answer": {"action": "finish"}}, valid for the sample selection schema. */
export type Answerer = (request: Received) => unknown;
const DEFAULT_ANSWER: Answerer = () => ({ answer: { action: "finish" } });

function chatCompletion(content: string, usage: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    id: "chatcmpl-standin",
    object: "chat.completion",
    created: 1_764_547_200,
    model: "stand-in",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage,
    ...extra,
  };
}

// ---- Ollama ----

export type OllamaModel = { context_length: number; architecture?: string };

/**
 * Ollama (docs/api.md at ollama/ollama, read 2026-12-01):
 * - POST /api/show {model} -> model_info with "<architecture>.context_length"; an unknown model is a 404.
 * - POST /api/chat {model, messages, stream: false, format, options} -> {message: {content}, done_reason,
 *   prompt_eval_count, eval_count}; `format` is "json" or a JSON schema; an unknown model answers 404
 *   {"error": "model \"x\" not found, try pulling it first"}.
 * - The window is options.num_ctx, else the server default (2,048 in #5902; 4,096 since docs/context-length.mdx).
 *   A prompt over the window is truncated SILENTLY: HTTP 200, prompt_eval_count = what fitted (ollama/ollama#5902).
 * - POST /v1/chat/completions is the OpenAI-compatible endpoint; it ignores num_ctx and runs at the default
 *   (ollama/ollama#5902, #2722), truncating the same way.
 */
export function startOllamaStandIn(
  { models, defaultContext = 2048, answer = DEFAULT_ANSWER, tokenize = tokensOf }: {
    models: Record<string, OllamaModel>;
    defaultContext?: number;
    answer?: Answerer;
    /** The model's tokenizer: bytes / 4 unless a test needs a denser one (CJK text, minified JSON). */
    tokenize?: (messages: unknown) => number;
  },
): Promise<StandIn> {
  const notFound = (name: unknown) => ({
    status: 404,
    body: { error: `model ${JSON.stringify(String(name))} not found, try pulling it first` },
  });
  const run = (request: Received, numCtx: number) => {
    const prompt = tokenize(request.body.messages);
    const content = JSON.stringify(answer(request));
    const output = tokensOf(content);
    // Truncated to the window, answer included, without an error: what #5902's log shows.
    const evaluated = Math.min(prompt, Math.max(0, numCtx - output));
    return { content, prompt: evaluated, output };
  };
  return serve({
    "/api/show": ({ body }) => {
      const model = models[String(body.model)];
      if (!model) return { status: 404, body: { error: `model '${String(body.model)}' not found` } };
      const arch = model.architecture ?? "llama";
      return {
        status: 200,
        body: {
          details: { format: "gguf", family: arch },
          model_info: { "general.architecture": arch, [`${arch}.context_length`]: model.context_length },
        },
      };
    },
    "/api/chat": (request) => {
      const { body } = request;
      if (!models[String(body.model)]) return notFound(body.model);
      const format = body.format;
      if (format !== undefined && format !== "json" && (format === null || typeof format !== "object")) {
        return { status: 400, body: { error: 'invalid format: expected "json" or a JSON schema' } };
      }
      const options = (body.options ?? {}) as { num_ctx?: number };
      const { content, prompt, output } = run(request, options.num_ctx ?? defaultContext);
      return {
        status: 200,
        body: {
          model: body.model,
          created_at: "2026-12-01T00:00:00Z",
          message: { role: "assistant", content },
          done_reason: "stop",
          done: true,
          prompt_eval_count: prompt,
          eval_count: output,
        },
      };
    },
    "/v1/chat/completions": (request) => {
      const { body } = request;
      if (!models[String(body.model)]) return notFound(body.model);
      const { content, prompt, output } = run(request, defaultContext);
      return {
        status: 200,
        body: chatCompletion(content, { prompt_tokens: prompt, completion_tokens: output }),
      };
    },
  }, "");
}

// ---- LM Studio ----

/**
 * LM Studio's OpenAI-compatible server (https://lmstudio.ai/docs/advanced/structured-output, read 2026-12-01:
 * structured output "through the /v1/chat/completions endpoint when given a JSON schema", OpenAI's format): it takes
 * response_format json_schema (or text), and answers any other type with HTTP 400
 * {"error": "'response_format.type' must be 'json_schema' or 'text'"} (lmstudio-ai/lmstudio-bug-tracker#189,
 * 2024-11-04, still so in LM Studio 0.4.20: webai-at-home#219, 2026-08-20).
 */
export function startLmStudioStandIn({ answer = DEFAULT_ANSWER }: { answer?: Answerer } = {}): Promise<StandIn> {
  return serve({
    "/v1/chat/completions": (request) => {
      const format = request.body.response_format as { type?: unknown; json_schema?: { schema?: unknown } } | undefined;
      if (format !== undefined && format.type !== "json_schema" && format.type !== "text") {
        return { status: 400, body: { error: "'response_format.type' must be 'json_schema' or 'text'" } };
      }
      if (format?.type === "json_schema" && typeof format.json_schema?.schema !== "object") {
        return { status: 400, body: { error: "'response_format.json_schema.schema' is required" } };
      }
      const content = JSON.stringify(answer(request));
      return {
        status: 200,
        body: chatCompletion(content, {
          prompt_tokens: tokensOf(request.body.messages),
          completion_tokens: tokensOf(content),
          total_tokens: tokensOf(request.body.messages) + tokensOf(content),
        }),
      };
    },
  }, "/v1");
}

// ---- llama.cpp ----

/**
 * llama.cpp's llama-server (tools/server/README.md, read 2026-12-01; tools/server/*.cpp at de3ff81 and the real server,
 * 2026-12-03): /v1/chat/completions takes response_format {"type": "json_object"} and schema-constrained JSON; OpenAI's
 * nested form json_schema.schema is the one its parser reads. A prompt over the slot's context (-c / -np) is HTTP 400
 * with type "exceed_context_size_error", n_prompt_tokens and n_ctx, before any work. Its slot keeps the previous
 * prompt: the common prefix of the new one is reused (never the last token), and reported twice, as
 * usage.prompt_tokens_details.cached_tokens and timings.cache_n (prompt_tokens counts them too). max_tokens stops the
 * answer where it is (finish_reason "length"), inside a string if need be. GET /props says the slot's context in
 * default_generation_settings.n_ctx, GET /v1/models in data[].meta.n_ctx (n_ctx_train is the model's training context).
 */
const FREE_TEXT = "Sure! I'm a helpful assistant. What can I do for you?";
const FREE_TEXT_ERROR = "Field 'max_tokens': [json.exception.type_error.302] type must be number, but is string";

export function startLlamaCppStandIn(
  { contextSize = 4096, answer = DEFAULT_ANSWER, alias = "local", trainContext = 8192, alternating = false }: {
    contextSize?: number;
    answer?: Answerer;
    alias?: string;
    trainContext?: number;
    /**
     * A Gemma-style chat template: a system message first is folded into the first user turn, then the roles must
     * alternate user/assistant; two user turns in a row are its Jinja exception, HTTP 400 (seen 2026-12-03).
     */
    alternating?: boolean;
  } = {},
): Promise<StandIn> {
  let previous = "";
  return serve({
    "GET /props": () => ({
      status: 200,
      body: { default_generation_settings: { n_ctx: contextSize, params: {} }, total_slots: 1, model_alias: alias },
    }),
    "GET /v1/models": () => ({
      status: 200,
      body: {
        object: "list",
        data: [{
          id: alias,
          object: "model",
          owned_by: "llamacpp",
          meta: { n_ctx: contextSize, n_ctx_train: trainContext },
        }],
      },
    }),
    // The Anthropic- and Responses-shaped endpoints answer, but ignore output_config and text.format: the model's own
    // words come back, unconstrained (seen on the real server, 2026-12-03). Their errors are in the OpenAI shape.
    "/v1/messages": (request) => {
      if (typeof request.body.max_tokens !== "number") {
        return { status: 400, body: { error: { code: 400, message: FREE_TEXT_ERROR, type: "invalid_request_error" } } };
      }
      return {
        status: 200,
        body: {
          id: "chatcmpl-standin",
          type: "message",
          role: "assistant",
          content: [{ type: "text", text: FREE_TEXT }],
          model: alias,
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { cache_read_input_tokens: 0, input_tokens: tokensOf(request.body.messages), output_tokens: 12 },
        },
      };
    },
    "/v1/responses": (request) => ({
      status: 200,
      body: {
        id: "resp_standin",
        object: "response",
        model: alias,
        status: "completed",
        output: [{
          type: "message",
          id: "msg_standin",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", annotations: [], text: FREE_TEXT }],
        }],
        usage: {
          input_tokens: tokensOf(request.body.input),
          output_tokens: 12,
          total_tokens: tokensOf(request.body.input) + 12,
          input_tokens_details: { cached_tokens: 0 },
        },
      },
    }),
    "/v1/chat/completions": (request) => {
      const format = request.body.response_format as { type?: unknown } | undefined;
      if (format !== undefined && !["text", "json_object", "json_schema"].includes(String(format.type))) {
        return {
          status: 400,
          body: {
            error: { code: 400, message: "response_format type must be one of ...", type: "invalid_request_error" },
          },
        };
      }
      const roles = (request.body.messages as { role: string }[]).map((m) => m.role);
      const turns = roles[0] === "system" ? roles.slice(1) : roles;
      if (alternating && turns.some((role, i) => (role === "user") !== (i % 2 === 0))) {
        return {
          status: 400,
          body: {
            error: {
              code: 400,
              message: "Unable to generate parser for this template. Automatic parser generation failed: \n" +
                "------------\nWhile executing CallExpression at line 11, column 19 in source:\n....index0 % 2 == 0) " +
                '-%}\n{{ raise_exception("Conversation roles must alternate user...\n    ^\nError: Jinja Exception: ' +
                "Conversation roles must alternate user/assistant/user/assistant/...",
              type: "invalid_request_error",
            },
          },
        };
      }
      const prompt = tokensOf(request.body.messages);
      if (prompt > contextSize) {
        return {
          status: 400,
          body: {
            error: {
              code: 400,
              message:
                `request (${prompt} tokens) exceeds the available context size (${contextSize} tokens), try increasing it`,
              type: "exceed_context_size_error",
              n_prompt_tokens: prompt,
              n_ctx: contextSize,
            },
          },
        };
      }
      const text = JSON.stringify(request.body.messages);
      let common = 0;
      while (common < text.length && common < previous.length && text[common] === previous[common]) common++;
      previous = text;
      const cacheN = Math.min(Math.floor(common / 4), prompt - 1);
      let content = JSON.stringify(answer(request));
      let finish = "stop";
      const maxTokens = typeof request.body.max_tokens === "number" ? request.body.max_tokens : null;
      if (maxTokens !== null && tokensOf(content) > maxTokens) {
        content = content.slice(0, maxTokens * 4);
        finish = "length";
      }
      const predicted = finish === "length" && maxTokens !== null ? maxTokens : tokensOf(content);
      const reply = chatCompletion(content, {
        completion_tokens: predicted,
        prompt_tokens: prompt,
        total_tokens: prompt + predicted,
        prompt_tokens_details: { cached_tokens: cacheN },
      }, {
        timings: {
          cache_n: cacheN,
          prompt_n: prompt - cacheN,
          prompt_ms: (prompt - cacheN) * 2.5,
          prompt_per_token_ms: 2.5,
          prompt_per_second: 400,
          predicted_n: predicted,
          predicted_ms: predicted * 20,
          predicted_per_token_ms: 20,
          predicted_per_second: 50,
        },
      });
      reply.choices[0].finish_reason = finish;
      return { status: 200, body: reply };
    },
  }, "/v1");
}

// ---- vLLM ----

/**
 * vLLM's OpenAI-compatible server (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html and
 * features/structured_outputs, read 2026-12-01): response_format json_schema and json_object are supported; with
 * --api-key every request needs "Authorization: Bearer KEY" (else 401 {"error": "Unauthorized"}); a prompt over
 * --max-model-len is HTTP 400 "This model's maximum context length is N tokens. However, you requested M tokens…".
 */
export function startVllmStandIn(
  { apiKey, maxModelLen = 32768, answer = DEFAULT_ANSWER }: {
    apiKey?: string;
    maxModelLen?: number;
    answer?: Answerer;
  } = {},
): Promise<StandIn> {
  return serve({
    "/v1/chat/completions": (request) => {
      if (apiKey !== undefined && request.headers.authorization !== `Bearer ${apiKey}`) {
        return { status: 401, body: { error: "Unauthorized" } };
      }
      const prompt = tokensOf(request.body.messages);
      const maxTokens = Number(request.body.max_tokens ?? 0);
      if (prompt + maxTokens > maxModelLen) {
        return {
          status: 400,
          body: {
            object: "error",
            message: `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${
              prompt + maxTokens
            } tokens (${prompt} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
            type: "BadRequestError",
            param: null,
            code: 400,
          },
        };
      }
      const content = JSON.stringify(answer(request));
      return {
        status: 200,
        body: chatCompletion(content, {
          prompt_tokens: prompt,
          completion_tokens: tokensOf(content),
          total_tokens: prompt + tokensOf(content),
          prompt_tokens_details: null,
        }),
      };
    },
  }, "/v1");
}

// ---- OpenRouter ----

type Part = { type?: string; text?: string; cache_control?: unknown };

/**
 * OpenRouter (https://openrouter.ai/docs/guides/best-practices/prompt-caching, read 2026-12-01): POST
 * /api/v1/chat/completions with "Authorization: Bearer KEY" (401 without a valid one). Anthropic models cache only up
 * to content parts marked cache_control: the first request writes that prefix, an identical later one reads it
 * (usage.prompt_tokens_details.cached_tokens); without markers nothing is cached.
 */
export function startOpenRouterStandIn(
  { apiKey, answer = DEFAULT_ANSWER }: { apiKey: string; answer?: Answerer },
): Promise<StandIn> {
  const cached = new Set<string>();
  return serve({
    "/api/v1/chat/completions": (request) => {
      if (request.headers.authorization !== `Bearer ${apiKey}`) {
        return { status: 401, body: { error: { message: "No auth credentials found", code: 401 } } };
      }
      const messages = (request.body.messages ?? []) as { role: string; content: string | Part[] }[];
      // The prefix up to the last marked part, as Anthropic caches it.
      let marked = "";
      let upTo = "";
      for (const message of messages) {
        const parts = typeof message.content === "string" ? [{ text: message.content }] : message.content;
        for (const part of parts) {
          upTo += JSON.stringify(part.text ?? "");
          if ((part as Part).cache_control !== undefined) marked = upTo;
        }
      }
      const prompt = tokensOf(messages);
      const prefix = marked === "" ? 0 : tokensOf(marked);
      const hit = marked !== "" && cached.has(marked);
      if (marked !== "") cached.add(marked);
      const content = JSON.stringify(answer(request));
      return {
        status: 200,
        body: chatCompletion(content, {
          prompt_tokens: prompt,
          completion_tokens: tokensOf(content),
          prompt_tokens_details: { cached_tokens: hit ? prefix : 0, cache_write_tokens: hit ? 0 : prefix },
        }),
      };
    },
  }, "/api/v1");
}
