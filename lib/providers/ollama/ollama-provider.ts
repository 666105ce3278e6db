// The Ollama adapter, on Ollama's native API rather than its OpenAI-compatible one, because only the native API takes
// options.num_ctx: the OpenAI-compatible endpoint runs at the server's default context and truncates silently
// (ollama/ollama#5902, read 2026-12-01). Once per provider it asks POST {base}/api/show for the model's context length
// (a missing model answers 404 there, before any prompt is sent), then every call is POST {base}/api/chat with
// num_ctx sized from the request (lib/providers/ollama/ollama-context.ts), retried like every adapter.
import { checkNotTruncated, contextLengthOf, numCtxFor, OUTPUT_RESERVE_TOKENS } from "./ollama-context.ts";
import { convertOllamaResponse } from "./convert-ollama-response.ts";
import { convertToOllamaRequest } from "./convert-to-ollama-request.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../../vocabulary/turn.ts";
import type { HttpOptions } from "../http/post-json.ts";
import { sendJson } from "../http/send-json.ts";

export type OllamaModelInfo = { model: string; context_length: number | null };

export type OllamaProvider = Provider & {
  /** The model as the server describes it (POST /api/show), asked once; rejects as a call would (404: no such model). */
  describe(options?: { signal?: AbortSignal }): Promise<OllamaModelInfo>;
};

export function createOllamaProvider(
  { apiKey, keyEnv, baseUrl, model, maxTokens }: {
    apiKey: string | null;
    keyEnv: string | null;
    baseUrl: string;
    model: string;
    maxTokens?: number;
  },
  http: HttpOptions = {},
): OllamaProvider {
  const base = baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  const provider = `Ollama server at ${base}`;
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const post = (path: string, body: unknown, signal: AbortSignal | undefined) =>
    sendJson(
      `${base}${path}`,
      { provider, headers, body, keyEnv, secret: apiKey, signal, convert: (raw) => raw },
      http,
    );
  const shown = new Map<string, Promise<OllamaModelInfo>>();
  const describe = (id: string, signal?: AbortSignal): Promise<OllamaModelInfo> => {
    let info = shown.get(id);
    if (!info) {
      info = post("/api/show", { model: id }, signal).then((raw) => ({
        model: id,
        context_length: contextLengthOf(raw),
      }));
      // A failed lookup (server down, interrupted) is asked again by the next call rather than remembered.
      info.catch(() => shown.delete(id));
      shown.set(id, info);
    }
    return info;
  };
  return {
    name: "ollama",
    // Ollama reports no cache counters; its grammar from `format` constrains the answer to the schema.
    capabilities: { prompt_caching: false, schema_enforcement: true },
    describe: (options = {}) => describe(model, options.signal),
    // The model's own context bounds num_ctx, so it is what a bounded request must fit (with the answer's room).
    serverContext: (options = {}) =>
      describe(model, options.signal).then(
        ({ context_length }) =>
          context_length === null ? null : {
            context_tokens: context_length,
            output_tokens: maxTokens ?? OUTPUT_RESERVE_TOKENS,
            source: "/api/show",
          },
        () => null,
      ),
    async complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
      const id = model || options.model;
      const { context_length } = await describe(id, options.signal);
      const { body, promptBytes } = convertToOllamaRequest(request, { model: id, maxTokens });
      const numCtx = numCtxFor({ promptBytes, maxTokens, contextLength: context_length, model: id });
      const raw = await post("/api/chat", body(numCtx), options.signal);
      const answer = convertOllamaResponse(raw, { provider });
      checkNotTruncated({ promptTokens: answer.usage.input, outputTokens: answer.usage.output, numCtx, model: id });
      return answer;
    },
  };
}
