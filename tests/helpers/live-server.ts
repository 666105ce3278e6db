// The live model server of tests/live-*.test.ts: a real llama.cpp llama-server with pinned open weights, started by
// scripts/live-model.sh (docs/live-model.md), which tells the tests where it is in two variables. Without them a live
// test file skips, saying so in one line (FILE.test.ts: skipping — LIVE_SKIP_REASON), which scripts/test.sh repeats.
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../../lib/vocabulary/turn.ts";

export type LiveServer = {
  /** The OpenAI-compatible base URL, e.g. http://127.0.0.1:18123/v1 (LOOM_LIVE_BASE_URL). */
  baseUrl: string;
  /** The server's model alias, e.g. smollm2-135m (LOOM_LIVE_MODEL). */
  model: string;
};

export const LIVE_SKIP_REASON = "no live model server (run scripts/live-model.sh -- bun test tests/live-*.test.ts)";

/** The live server the environment names, or null when it names none. */
export function liveServer(env: Record<string, string | undefined> = process.env): LiveServer | null {
  const baseUrl = env.LOOM_LIVE_BASE_URL?.trim();
  const model = env.LOOM_LIVE_MODEL?.trim();
  return baseUrl && model ? { baseUrl, model } : null;
}

/**
 * Long enough for a slow first call on a loaded 2-core machine (a live test's calls are capped and small, but a
 * prompt of several thousand tokens is evaluated at a few hundred tokens a second there).
 */
export const LIVE_TEST_TIMEOUT_MS = 600_000;

/** The server's own usage block of an answer (llama.cpp's OpenAI-compatible usage). */
export type ServerUsage = { prompt_tokens: number; completion_tokens: number; cached_tokens: number };

export function serverUsageOf(raw: unknown): ServerUsage {
  const usage = (raw as { usage: Record<string, unknown> }).usage;
  const details = usage.prompt_tokens_details as { cached_tokens: number };
  return {
    prompt_tokens: usage.prompt_tokens as number,
    completion_tokens: usage.completion_tokens as number,
    cached_tokens: details.cached_tokens,
  };
}

/**
 * A provider that passes every call to `inner` (the real server answers every request) and keeps what the server
 * said of each; `steer`, when given, replaces the model's decision before the loop sees it, so a test that needs a
 * transcript to grow does not depend on what a 135M model chooses (its answer is then capped at a few tokens: only the
 * prompt matters).
 */
export function capturing(
  inner: Provider,
  { steer }: { steer?: (request: TurnRequest, value: unknown) => unknown } = {},
): { provider: Provider; answers: { request: TurnRequest; raw: unknown }[] } {
  const answers: { request: TurnRequest; raw: unknown }[] = [];
  const provider: Provider = {
    name: inner.name,
    capabilities: inner.capabilities,
    ...(inner.serverContext ? { serverContext: inner.serverContext.bind(inner) } : {}),
    async complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
      const answer = await inner.complete(request, steer ? { ...options, maxOutputTokens: 4 } : options);
      answers.push({ request, raw: answer.raw });
      return steer ? { ...answer, value: steer(request, answer.value) } : answer;
    },
  };
  return { provider, answers };
}
