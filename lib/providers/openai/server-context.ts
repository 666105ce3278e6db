// What a local server says of its context, read from its own endpoints (llama.cpp's llama-server, tools/server at
// de3ff81, read 2026-12-03): GET /props has default_generation_settings.n_ctx, GET /v1/models has data[].meta.n_ctx,
// both the context of one slot (the server's -c divided among its -np slots), which is what one request may hold. The
// training context (meta.n_ctx_train) is not it: the server refuses a prompt over its own n_ctx.
import { fieldOf } from "../../errors.ts";
import { tokenCount } from "../token-count.ts";

const positive = (value: unknown): number | null => {
  const n = tokenCount(value);
  return n !== null && n > 0 ? n : null;
};

/** n_ctx from a GET /props body (default_generation_settings.n_ctx; older builds put n_ctx at the top). */
export function contextOfProps(body: unknown): number | null {
  return positive(fieldOf(fieldOf(body, "default_generation_settings"), "n_ctx")) ?? positive(fieldOf(body, "n_ctx"));
}

/** n_ctx from a GET /v1/models body: the entry whose id is the model (or the only entry), meta.n_ctx. */
export function contextOfModels(body: unknown, model: string): number | null {
  const data = fieldOf(body, "data");
  if (!Array.isArray(data)) return null;
  const entry = data.find((m) => fieldOf(m, "id") === model) ?? (data.length === 1 ? data[0] : undefined);
  return positive(fieldOf(fieldOf(entry, "meta"), "n_ctx"));
}
