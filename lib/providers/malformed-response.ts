import { ProviderError } from "../errors.ts";

/** A 2xx body that is not the shape the API documents: not retryable, the same request would get the same. */
export function malformedResponse(provider: string, detail: string): ProviderError {
  return new ProviderError(`${provider} sent a response Loom cannot read: ${detail}`, {
    code: "provider_malformed_response",
  });
}
