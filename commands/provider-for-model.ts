// The model-string resolver lives with the adapters (the library's run() uses it too).
export { providerForModel } from "../lib/adapters/providers/provider-for-model.ts";
