// Asks a local server how much context one request may hold: GET {root}/props, else GET {base}/models (llama.cpp's
// llama-server answers both; lib/providers/openai/server-context.ts reads them). A server that answers neither (vLLM, LM
// Studio) has no size to read: null, and Loom keeps its defaults — its own 400 then says when a request is too long.
import { contextOfModels, contextOfProps } from "./server-context.ts";
import type { Fetch } from "../http/post-json.ts";

/** A local server answers these small GETs at once; one that does not is taken as not saying. */
const READ_TIMEOUT_MS = 10_000;

export async function readServerContext(
  { baseUrl, model, headers, fetch = globalThis.fetch, signal }: {
    /** The API base, e.g. http://127.0.0.1:8080/v1 */
    baseUrl: string;
    model: string;
    headers: Record<string, string>;
    fetch?: Fetch;
    signal?: AbortSignal;
  },
): Promise<{ tokens: number; source: string } | null> {
  const base = baseUrl.replace(/\/+$/, "");
  const root = base.replace(/\/v1$/, "");
  const get = async (url: string): Promise<unknown> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), READ_TIMEOUT_MS);
    const onAbort = () => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await fetch(url, {
        method: "GET",
        headers: { accept: "application/json", ...headers },
        signal: controller.signal,
        redirect: "manual",
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        return null;
      }
      return await response.json();
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  };
  const props = contextOfProps(await get(`${root}/props`));
  if (props !== null) return { tokens: props, source: "/props" };
  const models = contextOfModels(await get(`${base}/models`), model);
  return models === null ? null : { tokens: models, source: "/v1/models" };
}
