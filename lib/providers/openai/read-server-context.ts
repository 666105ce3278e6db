// Asks a local server how much context one request may hold: GET {root}/props, else GET {base}/models (llama.cpp's
// llama-server answers both; lib/providers/openai/server-context.ts reads them). A server that answers neither (vLLM, LM
// Studio) has no size to read: null, and Loom keeps its defaults — its own 400 then says when a request is too long.
import { contextOfModels, contextOfProps } from "./server-context.ts";
import type { Fetch } from "../http/post-json.ts";
import { readCapped } from "../http/capped-get.ts";
import { ProviderError } from "../../errors.ts";

/** A local server answers these small GETs at once; one that does not is taken as not saying. */
const READ_TIMEOUT_MS = 10_000;
/** /props and /v1/models are a few KiB; a body past this is not read further (a server sent 2.6 GB in 10 s). */
const SERVER_INFO_MAX_BYTES = 1024 * 1024;

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
  const tooLarge = (url: string) =>
    new ProviderError(`${url} sent more than ${SERVER_INFO_MAX_BYTES} bytes; it was not read further`, {
      code: "provider_response_too_large",
    });
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
      const bytes = await readCapped(response, { maxBytes: SERVER_INFO_MAX_BYTES });
      if (bytes === null) return tooLarge(url);
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  };
  // A body over the cap ends the reading with one line (the caller's: a run goes on with its defaults).
  const answer = async (url: string) => {
    const body = await get(url);
    if (body instanceof ProviderError) throw body;
    return body;
  };
  const props = contextOfProps(await answer(`${root}/props`));
  if (props !== null) return { tokens: props, source: "/props" };
  const models = contextOfModels(await answer(`${base}/models`), model);
  return models === null ? null : { tokens: models, source: "/v1/models" };
}
