// Resolves a SliceRequest model string ("PROVIDER/MODEL") to a provider adapter.
import { createProvider } from "./create-provider.ts";
import { BASE_URL_ENVS, type ProviderConfig } from "../../providers/provider-config.ts";
import { StartupError } from "../../errors.ts";
import type { Provider } from "../../vocabulary/turn.ts";
import type { HttpOptions } from "./post-json.ts";
import type { ModelTable } from "../../models/models.ts";

const KINDS = ["anthropic", "openai", "openai-compatible", "ollama", "openrouter"] as const;

export function providerForModel(
  model: string,
  { env, http = {}, baseUrl, defaultBaseUrl, models, warn, settings = {} }: {
    env: Record<string, string | undefined>;
    /** The model table (default: the built-in one). */
    models?: ModelTable;
    /** Where the warning about a model the table does not know goes. */
    warn?: (message: string) => void;
    /** The request's effort and thinking, checked against the model table. */
    settings?: Pick<ProviderConfig, "effort" | "thinking">;
    http?: HttpOptions;
    /** Wins over the provider's variable (--base-url). */
    baseUrl?: string;
    /** Used when the provider's variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL) is unset (the user's config). */
    defaultBaseUrl?: string;
  },
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
  const variable = BASE_URL_ENVS[kind as (typeof KINDS)[number]];
  const base = baseUrl ?? (variable && env[variable]?.trim() ? undefined : defaultBaseUrl);
  const provider = createProvider(
    { kind: kind as (typeof KINDS)[number], model: id, ...(base ? { base_url: base } : {}), ...settings },
    { env, models, warn, ...http },
  );
  // The slice names "PROVIDER/MODEL"; the API knows only MODEL.
  // What else the adapter offers (Ollama's describe) stays reachable.
  return { ...provider, complete: (request, options) => provider.complete(request, { ...options, model: id }) };
}
