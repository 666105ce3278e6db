// `loom doctor`: the live checks, in order, each stopping the ones after it when it fails — the model is not
// retired (Loom's tables), a provider can be built (kind, key), the server has the model and a bounded request fits
// its context (Ollama: /api/show), one call returns a valid structured answer and writes the cache, and an identical
// second call reads it. Judging and the result are pure (lib/doctor/doctor.ts); this module makes the calls.
import { budgetForContext, CEILING_BYTES } from "../context/budget.ts";
import { resolveSettings, type SettingsPlan, type UserConfig } from "../settings/settings.ts";
import {
  DOCTOR_OUTPUT_TOKENS,
  type DoctorCheck,
  doctorRequest,
  type DoctorResult,
  doctorResult,
  judgeAnswer,
  judgeCacheRead,
  judgeCacheWrite,
  type ModelFacts,
  retiredError,
} from "./doctor.ts";
import { errorMessage, InterruptedError, ProviderError, StartupError } from "../errors.ts";
import type { Provider, ServerContext, ServerTimings, Usage } from "../vocabulary/turn.ts";
import { numCtxFor, OUTPUT_RESERVE_TOKENS } from "../providers/ollama/ollama-context.ts";
import { formatCount } from "../text/numbers.ts";
import { type ModelRef, PROVIDER_KINDS } from "../models/provider-kinds.ts";
import type { OllamaModelInfo } from "../providers/ollama/ollama-provider.ts";
import { providerForModel } from "../run/provider-for-model.ts";
import type { HttpOptions } from "../providers/http/post-json.ts";
import type { ModelTable } from "../models/models.ts";

const NOT_CHECKED = "not checked: an earlier check failed";

/** Which check a failed call speaks of, from its error. An interrupt is not a check's failure: it is thrown on. */
function failedCall(error: unknown, { model }: { model: string }): DoctorCheck {
  if (error instanceof InterruptedError) throw error;
  const code = error instanceof ProviderError || error instanceof StartupError ? error.code : "internal_error";
  const message = errorMessage(error);
  if (code === "provider_auth") {
    return { check: "key", status: "fail", detail: message, code };
  }
  if (code === "provider_context_exceeded") return { check: "context", status: "fail", detail: message, code };
  if (error instanceof ProviderError && error.status === 404) {
    return {
      check: "model",
      status: "fail",
      detail: `${model} is not served there (it may be retired or misspelt): ${message}`,
      code: "model_not_found",
    };
  }
  if (code === "provider_bad_request") {
    return {
      check: "structured_answer",
      status: "fail",
      detail: `the structured-output request was rejected: ${message}`,
      code: "structured_output_rejected",
    };
  }
  return { check: "model", status: "fail", detail: message, code };
}

/** A local server's context, as the check reports it: what a bounded run will hold its requests to there. */
function localContext(server: ServerContext | null): DoctorCheck {
  if (server === null) {
    return {
      check: "context",
      status: "skip",
      detail: "the server does not say its context (no n_ctx at /props or /v1/models); a request over it is its 400",
      code: null,
    };
  }
  const budget = budgetForContext({ contextTokens: server.context_tokens, outputTokens: server.output_tokens });
  const tokens = `${formatCount(server.context_tokens)} tokens per request (${server.source})`;
  return {
    check: "context",
    status: "pass",
    detail: budget
      ? `${tokens}: bounded requests held to ${formatCount(budget.ceiling)} bytes (retiring past ${
        formatCount(budget.trigger)
      }), ${formatCount(server.output_tokens)} tokens kept for answers`
      : `${tokens}: a bounded run's largest request (64 KiB) fits`,
    code: null,
  };
}

export async function runDoctor(
  { model, env, http = {}, baseUrl, userConfig, settings, models, facts, nonce, signal }: {
    /** "PROVIDER/MODEL" */
    model: string;
    env: Record<string, string | undefined>;
    http?: HttpOptions;
    /** --base-url; with the environment and the user's config file, resolved as a run resolves it. */
    baseUrl?: string;
    userConfig?: { config: UserConfig; file: string };
    /** The command's one resolution of its settings (then baseUrl and userConfig are in it already). */
    settings?: SettingsPlan;
    /** The model table the provider is built from (default: the built-in one). */
    models?: ModelTable;
    /** What the table says of the model (modelFacts). */
    facts: ModelFacts;
    /** Makes this run's prefix its own, so its cache write is this run's (any short random text). */
    nonce: string;
    signal?: AbortSignal;
  },
): Promise<DoctorResult> {
  const checks: DoctorCheck[] = [];
  const usages: Usage[] = [];
  const timings: (ServerTimings | undefined)[] = [];
  // A provider built without a key (a local server) has no key to fail, unless the server answers 401.
  let keyless = false;
  const price = facts.price;
  const done = (startup: StartupError | null = null) => {
    // Every check not reached is listed as not checked, so the table always has the same rows.
    const names = ["model", "key", "context", "structured_answer", "cache_write", "cache_read"] as const;
    const failed = checks.find((c) => c.status === "fail");
    const notChecked = failed ? `not checked: the ${failed.check.replace("_", " ")} check failed` : NOT_CHECKED;
    const rows = names.map((name) =>
      checks.find((c) => c.check === name) ??
        (name === "key" && keyless
          ? { check: name, status: "pass" as const, detail: "no key needed", code: null }
          : { check: name, status: "skip" as const, detail: notChecked, code: null })
    );
    // The failure first: a check that was never reached is not listed above the one that stopped the rest.
    const at = failed ? rows.findIndex((row) => row.check === failed.check) : -1;
    const firstUnreached = rows.findIndex((row) => row.status === "skip" && row.detail === notChecked);
    if (at > 0 && firstUnreached !== -1 && firstUnreached < at) {
      const [row] = rows.splice(at, 1);
      if (row) rows.splice(firstUnreached, 0, row);
    }
    return doctorResult({ model, checks: rows, usages, timings, price, startup });
  };

  if (facts.retired) {
    const error = retiredError(facts.retired);
    checks.push({ check: "model", status: "fail", detail: error.message, code: error.code });
    return done(error);
  }
  let provider: Provider & { describe?: (options?: { signal?: AbortSignal }) => Promise<OllamaModelInfo> };
  // The model's kind and id, as the settings parsed them (past providerForModel, the model names a known kind: else
  // that is the check that fails).
  let ref: ModelRef;
  try {
    const resolved = settings
      ? { ok: true as const, settings: settings.settings }
      : resolveSettings({ flags: { model, ...(baseUrl ? { base_url: baseUrl } : {}) }, env, userConfig });
    if (!resolved.ok) throw new StartupError(resolved.message, resolved.code);
    const named = resolved.settings.provider;
    provider = providerForModel(model, named, { env, http, models });
    if (named === null) throw new Error("providerForModel refuses a model of no known kind");
    ref = { provider: named.kind, id: named.model };
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    const check = error.code === "missing_credential" ? "key" : "model";
    checks.push({ check, status: "fail", detail: error.message, code: error.code });
    return done(error);
  }
  const id = ref.id;
  const keyEnv = PROVIDER_KINDS[ref.provider].keyEnv;
  keyless = keyEnv === null;
  const keyPassed = (detail: string) => {
    if (!checks.some((c) => c.check === "key")) checks.push({ check: "key", status: "pass", detail, code: null });
  };
  const accepted = keyEnv ? `the key in ${keyEnv} was accepted` : "no key needed";
  /** A failed call: its check, and what its failure says of the checks before it (a 400 or 404 got past the key). */
  const failed = (error: unknown) => {
    const check = failedCall(error, { model: id });
    if (error instanceof ProviderError && (error.status === 400 || error.status === 404 || error.status === 422)) {
      keyPassed(`${accepted} (the API answered past authentication)`);
      if (check.check === "structured_answer" && !checks.some((c) => c.check === "model")) {
        checks.push({ check: "model", status: "pass", detail: `the API knows ${id}`, code: null });
      }
    }
    checks.push(check);
  };

  if (provider.describe) {
    let info: OllamaModelInfo;
    try {
      info = await provider.describe({ signal });
    } catch (error) {
      failed(error);
      return done();
    }
    checks.push({ check: "model", status: "pass", detail: `the server has ${id}`, code: null });
    if (info.context_length === null) {
      checks.push({
        check: "context",
        status: "skip",
        detail: "the server does not say the model's context",
        code: null,
      });
    } else {
      // A bounded run's ceiling is sized down to a smaller context (lib/context/budget.ts): its largest request is
      // what must run within the model's context.
      const budget = budgetForContext({ contextTokens: info.context_length, outputTokens: OUTPUT_RESERVE_TOKENS });
      const largest = budget?.ceiling ?? CEILING_BYTES;
      const size = budget ? `${formatCount(largest)} bytes, sized to the model's context` : "64 KiB";
      try {
        const numCtx = numCtxFor({ promptBytes: largest, contextLength: info.context_length, model: id });
        checks.push({
          check: "context",
          status: "pass",
          detail:
            `a bounded run's largest request (${size}) runs at num_ctx ${numCtx} of the model's ${info.context_length}`,
          code: null,
        });
      } catch (error) {
        const check = failedCall(error, { model: id });
        checks.push({ ...check, detail: `a bounded run's largest request (${size}) does not fit: ${check.detail}` });
        return done();
      }
    }
  } else if (provider.serverContext) {
    checks.push(localContext(await provider.serverContext({ signal })));
  } else {
    checks.push({
      check: "context",
      status: "skip",
      detail: "the API does not say; a request over the context is its 400",
      code: null,
    });
  }

  const { request, expected } = doctorRequest({ minCacheTokens: facts.min_cache_tokens, nonce });
  let first;
  try {
    first = await provider.complete(request, { model, signal, maxOutputTokens: DOCTOR_OUTPUT_TOKENS });
  } catch (error) {
    failed(error);
    return done();
  }
  usages.push(first.usage);
  timings.push(first.timings);
  if (!checks.some((c) => c.check === "model")) {
    checks.push({
      check: "model",
      status: "pass",
      detail: price
        ? `${id} answered`
        : provider.serverContext
        ? `${id} answered (a local model: its cost is tokens and seconds)`
        : `${id} answered (not in Loom's price table: its cost is not known)`,
      code: null,
    });
  }
  keyPassed(accepted);
  checks.push(judgeAnswer(first.value, expected));

  if (!provider.capabilities.prompt_caching) {
    const detail = "this provider reports no prompt cache";
    checks.push({ check: "cache_write", status: "skip", detail, code: null });
    checks.push({ check: "cache_read", status: "skip", detail, code: null });
    return done();
  }
  checks.push(judgeCacheWrite(first.usage, { minCacheTokens: facts.min_cache_tokens }));
  try {
    const second = await provider.complete(request, { model, signal, maxOutputTokens: DOCTOR_OUTPUT_TOKENS });
    usages.push(second.usage);
    timings.push(second.timings);
    checks.push(judgeCacheRead(second.usage, { minCacheTokens: facts.min_cache_tokens }));
  } catch (error) {
    const failed = failedCall(error, { model: id });
    checks.push({ ...failed, check: "cache_read" });
  }
  return done();
}
