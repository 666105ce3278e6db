// Resolves a SliceRequest model string ("PROVIDER/MODEL") to a provider adapter, from settings resolved once.
import { buildProvider, type CreateProviderOptions } from "./create-provider.ts";
import { StartupError } from "../errors.ts";
import type { Provider } from "../vocabulary/turn.ts";
import type { HttpOptions } from "../providers/http/post-json.ts";
import type { ProviderSettings } from "../settings/settings.ts";
import { MODEL_REF_EXPECTED } from "../models/provider-kinds.ts";

/**
 * The provider of a "PROVIDER/MODEL" run. `settings` is what resolveSettings made of it (null: it names no known
 * provider, which is this error); the model table and the warning channel are the run's.
 */
export function providerForModel(
  model: string,
  settings: ProviderSettings | null,
  { http = {}, ...options }: Omit<CreateProviderOptions, keyof HttpOptions> & { http?: HttpOptions },
): Provider {
  if (settings === null) {
    throw new StartupError(
      `Model ${JSON.stringify(model)}: expected ${MODEL_REF_EXPECTED} (or use --catalog)`,
      "unknown_model",
    );
  }
  // The slice names "PROVIDER/MODEL"; the adapter is built with the id its API knows (the settings' bare id, resolved
  // through the model table once) and sends that on every call.
  return buildProvider(settings, { ...options, ...http });
}
