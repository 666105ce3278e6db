// Scripts for the fake Anthropic and OpenAI servers (fake-provider-servers.ts) that cache as the APIs document, so a
// test can watch a cache write turn into a read:
// - Anthropic (https://platform.claude.com/docs/en/build-with-claude/prompt-caching, read 2026-12-01): the prefix up
//   to the last block marked cache_control (tools, system, messages in that order) is written on the first request
//   and read by a later identical one; a prefix under the model's minimum cacheable length is not cached at all.
// - OpenAI (https://platform.openai.com/docs/guides/prompt-caching, read 2026-12-01): prompts of 1,024 tokens or more
//   are cached automatically; usage.prompt_tokens_details.cached_tokens counts the reused prefix (in steps of 128).
// Tokens are ceil(bytes / 4).
import type { ReceivedRequest, Script, ScriptedResponse } from "./fake-provider-servers.ts";
import { anthropicAnswer, openAIAnswer } from "./fake-provider-servers.ts";

const tokens = (value: unknown) => Math.ceil(new TextEncoder().encode(JSON.stringify(value ?? "")).length / 4);

type Block = { text?: string; cache_control?: unknown };

export function anthropicCaching(
  { minTokens = 1024, answer, model = "claude-sonnet-5-5" }: {
    minTokens?: number;
    answer: (request: ReceivedRequest) => unknown;
    model?: string;
  },
): Script {
  const cached = new Set<string>();
  return (request): ScriptedResponse => {
    const body = request.body as { tools?: unknown[]; system?: Block[]; messages?: { content: Block[] }[] };
    const blocks: unknown[] = [...(body.tools ?? [])];
    let marked = -1;
    for (const block of [...(body.system ?? []), ...(body.messages ?? []).flatMap((m) => m.content)]) {
      blocks.push(block);
      if (block.cache_control !== undefined) marked = blocks.length;
    }
    const total = tokens(blocks);
    const prefix = marked === -1 ? "" : JSON.stringify(blocks.slice(0, marked));
    const prefixTokens = prefix === "" ? 0 : tokens(blocks.slice(0, marked));
    const cacheable = prefixTokens >= minTokens;
    const hit = cacheable && cached.has(prefix);
    if (cacheable) cached.add(prefix);
    return anthropicAnswer(answer(request), {
      model,
      usage: {
        input_tokens: cacheable ? total - prefixTokens : total,
        cache_creation_input_tokens: cacheable && !hit ? prefixTokens : 0,
        cache_read_input_tokens: hit ? prefixTokens : 0,
        output_tokens: 12,
      },
    });
  };
}

export function openAICaching(
  { answer, neverRead = false, reportsWrites = false, model = "gpt-4.1" }: {
    answer: (request: ReceivedRequest) => unknown;
    /** The public report on GPT-5.6 with strict json_schema (OpenAI community, 2026-07): nothing is ever cached. */
    neverRead?: boolean;
    /** GPT-5.6 and later report cache_write_tokens (developers.openai.com/api/docs/guides/prompt-caching). */
    reportsWrites?: boolean;
    model?: string;
  },
): Script {
  const seen = new Set<string>();
  return (request): ScriptedResponse => {
    // Chat Completions' messages, or the Responses API's input (the stand-in serves both).
    const body = request.body as { messages?: unknown[]; input?: unknown[] };
    const messages = body.messages ?? body.input ?? [];
    const prompt = tokens(messages);
    const system = JSON.stringify(messages[0]);
    const cacheable = prompt >= 1024 && !neverRead;
    const reusable = cacheable && seen.has(system);
    const prefix = Math.floor(tokens(messages[0]) / 128) * 128;
    if (cacheable) seen.add(system);
    return openAIAnswer(answer(request), {
      model,
      usage: {
        prompt_tokens: prompt,
        completion_tokens: 12,
        total_tokens: prompt + 12,
        prompt_tokens_details: {
          cached_tokens: reusable ? prefix : 0,
          ...(reportsWrites ? { cache_write_tokens: cacheable && !reusable ? prefix : 0 } : {}),
        },
      },
    });
  };
}

/** The answer a model that follows loom doctor's task gives: {"status": "ok", "word": the word it was asked for}. */
export function doctorAnswer(request: { body: unknown }): { status: "ok"; word: string } {
  const asked = /last word of the instructions \((?:\\)+"(\w+)(?:\\)+"\)/.exec(JSON.stringify(request.body));
  return { status: "ok", word: asked?.[1] ?? "?" };
}
