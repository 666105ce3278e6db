// How much context an Ollama request asks for, and whether it fits the model. Ollama runs a request at the server's
// default context unless the request sets options.num_ctx, and drops what does not fit without an error: its log says
// "input truncated | n_ctx=2048" while the request succeeds (ollama/ollama#5902, 2024-07-24, read 2026-12-01; the
// default is 4k on < 24 GiB VRAM in docs/context-length.mdx, read 2026-12-01). So Loom sizes num_ctx from each request
// and refuses, before any call, a request the model's own context (POST /api/show, model_info
// "<architecture>.context_length", docs/api.md "Show Model Information", read 2026-12-01) cannot hold.
import { fieldOf, ProviderError } from "../../errors.ts";

/**
 * Tokens a request of `bytes` UTF-8 bytes may take, on the high side: BPE tokenizers average about 4 bytes per token
 * on English text and fewer on JSON, code and non-Latin text, so 3 bytes per token leaves a margin. An estimate only
 * sizes the window; after the call the server's prompt_eval_count says what it really read.
 */
function estimateTokens(bytes: number): number {
  return Math.ceil(bytes / 3);
}

/** Room kept for the answer when no max_tokens is configured (Loom's answers are small JSON; write_file's are not). */
export const OUTPUT_RESERVE_TOKENS = 4096;
/** The smallest window asked for: above Ollama's 2,048 / 4,096 defaults, so no request runs at them. */
const MIN_NUM_CTX = 8192;

/**
 * options.num_ctx for a request: its estimated prompt plus the output room, rounded up to a power of two (so a run
 * asks for few distinct sizes and the server rarely reconfigures), at least 8,192 and at most the model's context.
 * A request the model cannot hold is a ProviderError (provider_context_exceeded) before anything is sent.
 */
export function numCtxFor(
  { promptBytes, maxTokens, contextLength, model }: {
    promptBytes: number;
    maxTokens?: number;
    /** The model's own context length from /api/show; null when the server did not say. */
    contextLength: number | null;
    model: string;
  },
): number {
  const needed = estimateTokens(promptBytes) + (maxTokens ?? OUTPUT_RESERVE_TOKENS);
  let size = MIN_NUM_CTX;
  while (size < needed) size *= 2;
  if (contextLength === null) return size;
  if (needed > contextLength) {
    throw new ProviderError(
      `Ollama model "${model}" holds ${contextLength} tokens of context; this request needs about ${needed} ` +
        `(${promptBytes} bytes of prompt, ${maxTokens ?? OUTPUT_RESERVE_TOKENS} tokens for the answer). Use a model ` +
        "with a longer context, or a smaller max_tokens",
      { code: "provider_context_exceeded" },
    );
  }
  return Math.min(size, contextLength);
}

/** The model's context length from an /api/show body: model_info["<general.architecture>.context_length"]. */
export function contextLengthOf(show: unknown): number | null {
  const info = fieldOf(show, "model_info");
  if (info === null || typeof info !== "object") return null;
  const record = info as Record<string, unknown>;
  const arch = record["general.architecture"];
  const value = typeof arch === "string" ? record[`${arch}.context_length`] : undefined;
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  // Some builds name the key by another architecture string: any single *.context_length will do.
  const [only, ...others] = Object.entries(record).flatMap(([k, v]) =>
    k.endsWith(".context_length") && typeof v === "number" ? [v] : []
  );
  return only !== undefined && others.length === 0 ? only : null;
}

/**
 * After the call: the prompt and the answer filled the whole window, so the server may have dropped the start of the
 * prompt (it says nothing when it does). The run fails rather than go on with a model that did not read its input.
 */
export function checkNotTruncated(
  { promptTokens, outputTokens, numCtx, model }: {
    promptTokens: number | null;
    outputTokens: number | null;
    numCtx: number;
    model: string;
  },
): void {
  if (promptTokens === null) return;
  if (promptTokens + (outputTokens ?? 0) < numCtx) return;
  throw new ProviderError(
    `Ollama model "${model}" read ${promptTokens} prompt tokens into a ${numCtx}-token window: the server may have ` +
      "dropped part of the request without saying so. Use a model with a longer context",
    { code: "provider_context_exceeded" },
  );
}
