// Resolves a SliceRequest model string ("PROVIDER/MODEL") to a provider adapter.
import { createProvider } from "./create-provider.ts";
import { StartupError } from "../../errors.ts";
import type { Provider } from "../../turn.ts";
import type { HttpOptions } from "./post-json.ts";

const KINDS = ["anthropic", "openai", "openai-compatible"] as const;

export function providerForModel(
  model: string,
  { env, http = {}, baseUrl }: { env: Record<string, string | undefined>; http?: HttpOptions; baseUrl?: string },
): Provider {
  const slash = model.indexOf("/");
  const kind = slash === -1 ? "" : model.slice(0, slash);
  if (!(KINDS as readonly string[]).includes(kind)) {
    throw new StartupError(
      `Model ${JSON.stringify(model)}: expected PROVIDER/MODEL with PROVIDER one of ${
        KINDS.join(", ")
      } (or use --catalog)`,
      "unknown_model",
    );
  }
  const id = model.slice(slash + 1);
  const provider = createProvider(
    { kind: kind as (typeof KINDS)[number], model: id, ...(baseUrl ? { base_url: baseUrl } : {}) },
    { env, ...http },
  );
  // The slice names "PROVIDER/MODEL"; the API knows only MODEL.
  return {
    name: provider.name,
    capabilities: provider.capabilities,
    complete: (request, options) => provider.complete(request, { ...options, model: id }),
  };
}
