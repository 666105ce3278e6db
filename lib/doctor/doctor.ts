// `loom doctor`'s pure parts: the one small request it sends twice, how each check is judged from what came back,
// and how the whole ends (through endingOf, like every command). The calls themselves are lib/doctor/run-doctor.ts.
//
// The cheapest live check that says a first run will work: two identical requests whose stable prefix is just over
// the model's minimum cacheable prompt (below it nothing is cached and the cache counters are 0). The first must come
// back as a valid structured answer and write the prefix to the cache; the second must read it. A nonce at the start
// of the prefix makes every doctor run write a fresh entry, so an entry left by an earlier run cannot pass for a write.
import { z } from "zod";
import { endingOf } from "../ending.ts";
import { StartupError } from "../errors.ts";
import { Outcome } from "../outcome.ts";
import { type Cost, costOf, type ModelPrice, priceOf, pricesOf } from "../prices.ts";
import { type ModelTable, resolveModel, retirementOf, routedEntry } from "../models/models.ts";
import { parseModelRef } from "../models/provider-kinds.ts";
import { addUsage, NULL_USAGE, ServerTimings, type TurnRequest, Usage } from "../vocabulary/turn.ts";

const CheckName = z.enum(["model", "key", "context", "structured_answer", "cache_write", "cache_read"]);

// warn: the check did not fail, but what came back is not what was asked (a structured answer with another word).
const CheckStatus = z.enum(["pass", "warn", "fail", "skip"]);

export const DoctorCheck = z.strictObject({
  check: CheckName,
  status: CheckStatus,
  detail: z.string().describe("What was found, in one line"),
  code: z.string().nullable().describe("The error code of a failed check (provider_auth, cache_not_read, …)"),
});
export type DoctorCheck = z.infer<typeof DoctorCheck>;

const DoctorCall = z.strictObject({
  call: z.number().int().positive(),
  usage: Usage,
  cost_usd: z.number().nonnegative().nullable().describe("At the dated price table; null when the model has none"),
  timings: ServerTimings.optional().describe("A local server's own timings of the call, when it sent them"),
});

export const DoctorResult = z.strictObject({
  model: z.string().describe('"PROVIDER/MODEL" as checked'),
  checks: z.array(DoctorCheck),
  calls: z.array(DoctorCall).describe("Every model call doctor made, with what it cost"),
  usage: Usage,
  cost_usd: z.number().nonnegative().nullable().describe("Total spent; null when the model has no price"),
  prices: z.strictObject({ source: z.string(), date: z.string() }).nullable(),
  outcome: Outcome,
  error_code: z.string().nullable(),
  exit_code: z.number().int(),
}).describe("What loom doctor found and spent");
export type DoctorResult = z.infer<typeof DoctorResult>;

/** What Loom's model table says of a model before any call. */
export type ModelFacts = {
  price: ModelPrice | null;
  /** Tokens a prompt needs before the provider caches it. */
  min_cache_tokens: number;
  /** "claude-sonnet-4-5 was retired on 2026-09-29; use claude-sonnet-5-5" once retired, else null. */
  retired: string | null;
};

/**
 * The minimum cacheable prompt when the table gives none (a kind without a prompt cache): 1,024 tokens, the minimum of
 * OpenAI's automatic caching (https://developers.openai.com/api/docs/guides/prompt-caching, read 2026-12-01).
 */
const DEFAULT_MIN_CACHE_TOKENS = 1024;

/** The facts of "PROVIDER/MODEL" from the table (an alias resolves to its model; an unknown id gets the defaults). */
export function modelFacts(table: ModelTable, model: string, { today }: { today: string }): ModelFacts {
  const ref = parseModelRef(model);
  if (ref === null) return { price: null, min_cache_tokens: DEFAULT_MIN_CACHE_TOKENS, retired: null };
  const resolved = resolveModel(table, ref.provider, ref.id);
  // Through OpenRouter the routed model's cache rules apply; its price there is OpenRouter's, not in the table.
  const cache = (routedEntry(table, ref)?.entry ?? resolved.entry).cache;
  return {
    price: priceOf(pricesOf(table), resolved.key),
    min_cache_tokens: cache?.min_tokens ?? DEFAULT_MIN_CACHE_TOKENS,
    retired: retirementOf(resolved, { today }),
  };
}

/** A retired model stops doctor, as it stops a run, before any call (exit 3), with the table's line. */
export function retiredError(line: string): StartupError {
  return new StartupError(line, "model_retired");
}

/**
 * How far over the minimum the prefix is: 15 %, for the framing text's tokens and a tokenizer that splits a word, and
 * no more, since the first call pays the cache-write rate on all of it.
 */
const PREFIX_MARGIN = 1.15;

// Common English words of one token each in the BPE vocabularies of both vendors (a leading space included), so the
// prefix's size in tokens is about its word count.
const WORDS = (
  "the of and to in is you that it he was for on are as with his they at be this have from or one had by word but " +
  "not what all were we when your can said there use an each which she do how their if will up other about out many " +
  "then them these so some her would make like him into time has look two more write go see number no way could people"
).split(" ");

/**
 * The most output tokens doctor's answer needs: {"status": "ok", "word": W} is about 12 tokens in any BPE vocabulary;
 * 64 leaves room for whitespace and a long word, and stops a small model that loops inside the string early.
 */
export const DOCTOR_OUTPUT_TOKENS = 64;

const DOCTOR_SCHEMA = {
  type: "object",
  properties: { status: { type: "string", enum: ["ok"] }, word: { type: "string" } },
  required: ["status", "word"],
  additionalProperties: false,
} as const;

/**
 * The request doctor sends, twice: a prefix of about PREFIX_MARGIN × `minCacheTokens` tokens (nonce first), then a one-line
 * task whose answer is {"status": "ok", "word": W} with W the prefix's last word, so the answer is checkable.
 */
export function doctorRequest({ minCacheTokens, nonce }: { minCacheTokens: number; nonce: string }): {
  request: TurnRequest;
  expected: { status: "ok"; word: string };
} {
  const count = Math.ceil(minCacheTokens * PREFIX_MARGIN);
  const words = Array.from({ length: count }, (_, i) => WORDS[(i * 7 + nonce.length) % WORDS.length]);
  // a minimum of 0 tokens gives an empty prefix, with no last word to ask back
  const word = words.at(-1) ?? "";
  const request: TurnRequest = {
    phase: "selection",
    response_schema: DOCTOR_SCHEMA,
    sections: [
      {
        section: "instructions",
        text: `loom doctor ${nonce}. This text only fills the cacheable prefix; ignore its words: ${words.join(" ")}`,
      },
      { section: "intent", text: "Check that Loom can use this model: answer exactly as the task says." },
      {
        section: "candidates",
        task: `Answer {"status": "ok", "word": W} where W is the last word of the instructions ("${word}").`,
      },
    ],
  };
  return { request, expected: { status: "ok", word } };
}

/** The structured answer doctor asks for: exactly these two fields. */
const DoctorAnswer = z.strictObject({ status: z.literal("ok"), word: z.string() });

/** Whether the answer is the valid structured answer asked for. */
export function judgeAnswer(value: unknown, expected: { status: "ok"; word: string }): DoctorCheck {
  const answer = DoctorAnswer.safeParse(value);
  const shown = JSON.stringify(value)?.slice(0, 120) ?? String(value);
  if (!answer.success) {
    return {
      check: "structured_answer",
      status: "fail",
      detail: `the answer ${shown} does not match the schema`,
      code: "invalid_answer",
    };
  }
  const { word } = answer.data;
  if (word !== expected.word) {
    // Valid JSON of the schema, but not the answer asked for: the model did not follow the task.
    return {
      check: "structured_answer",
      status: "warn",
      detail: `${shown} matches the schema, but the word came back ${JSON.stringify(word)}, not ${
        JSON.stringify(expected.word)
      } as asked`,
      code: "wrong_word",
    };
  }
  return { check: "structured_answer", status: "pass", detail: `${shown} matches the schema`, code: null };
}

/** The first call must have written the prefix to the cache; a provider that reports no writes is skipped. */
export function judgeCacheWrite(usage: Usage, { minCacheTokens }: { minCacheTokens: number }): DoctorCheck {
  if (usage.cache_write === null) {
    return { check: "cache_write", status: "skip", detail: "the provider does not report cache writes", code: null };
  }
  if (usage.cache_write > 0) {
    return {
      check: "cache_write",
      status: "pass",
      detail: `${usage.cache_write} tokens written by the first call`,
      code: null,
    };
  }
  return {
    check: "cache_write",
    status: "fail",
    detail: `the first call wrote nothing to the cache (a prefix of about ${
      Math.ceil(minCacheTokens * PREFIX_MARGIN)
    } tokens; the model's minimum is ${minCacheTokens})`,
    code: "cache_not_written",
  };
}

/** The identical second call must have read from the cache. */
export function judgeCacheRead(usage: Usage, { minCacheTokens }: { minCacheTokens: number }): DoctorCheck {
  if (usage.cache_read === null) {
    return { check: "cache_read", status: "skip", detail: "the provider does not report cache reads", code: null };
  }
  if (usage.cache_read > 0) {
    return {
      check: "cache_read",
      status: "pass",
      detail: `${usage.cache_read} tokens read by the identical second call`,
      code: null,
    };
  }
  return {
    check: "cache_read",
    status: "fail",
    detail:
      `the identical second call read nothing from the cache (${usage.input ?? "?"} input tokens at full price; ` +
      `minimum cacheable prompt ${minCacheTokens} tokens)`,
    code: "cache_not_read",
  };
}

/**
 * The result: checks, calls and their cost, and how doctor ends — through endingOf, as every command does: all checks
 * passed or skipped is a completed run (exit 0); a failed start (no key, unknown or retired model) is startup_failed
 * (3); any other failed check fails (1) with its code.
 */
export function doctorResult(
  { model, checks, usages, timings = [], price, startup = null }: {
    model: string;
    checks: DoctorCheck[];
    usages: Usage[];
    /** Each call's server timings (llama.cpp), by position; undefined where none were sent. */
    timings?: (ServerTimings | undefined)[];
    price: ModelPrice | null;
    /** The error that stopped doctor before any call. */
    startup?: StartupError | null;
  },
): DoctorResult {
  const costs: (Cost | null)[] = usages.map((usage) => costOf(usage, price));
  // Dollars to the nano-dollar: float sums print as 0.0040560000000000001 otherwise.
  const round = (x: number) => Math.round(x * 1e9) / 1e9;
  const calls = usages.map((usage, i) => {
    const t = timings[i];
    return { call: i + 1, usage, cost_usd: costs[i] ? round(costs[i].total) : null, ...(t ? { timings: t } : {}) };
  });
  const failed = checks.find((check) => check.status === "fail");
  const ended = startup
    ? endingOf({ threw: startup })
    : failed
    ? endingOf({ ran: "failed", errorCode: failed.code })
    : endingOf({ ran: "completed" });
  return {
    model,
    checks,
    calls,
    usage: usages.reduce(addUsage, NULL_USAGE),
    // No call costs nothing; a call without a price makes the total unknown.
    cost_usd: costs.every((c): c is Cost => c !== null) ? round(costs.reduce((sum, c) => sum + c.total, 0)) : null,
    prices: price ? { source: price.source, date: price.date } : null,
    outcome: ended.outcome,
    error_code: ended.code,
    exit_code: ended.exitCode,
  };
}
