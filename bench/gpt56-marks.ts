// GPT-5.6's explicit prompt_cache_breakpoint marks, measured: every shipped workload replayed in-process (the bounded
// policy, two-call and single-call), each request converted to the Responses body the adapter sends to a model that
// takes marks, and the cache those marks would make simulated: a mark whose prefix reaches the 1,024-token minimum
// writes an entry (billed at 1.25x input on GPT-5.6) unless one is cached; a request reads the longest cached entry
// its own parts start with. Per call: marks, tokens written, tokens read; per run: marks a later call read.
//   bun bench/gpt56-marks.ts [--limit N]       (the one scenario of `bun run bench` that GPT-5.6 marks change)
import { convertToOpenAIResponsesRequest } from "../lib/providers/openai/convert-to-openai-responses-request.ts";
import type { Provider, TurnRequest } from "../lib/vocabulary/turn.ts";
import type { ContextPolicyName } from "../lib/policy.ts";
import { utf8Length } from "../lib/text/digest.ts";
import { listWorkloads, loadWorkload, replayRecording } from "./workloads.ts";

const BYTES_PER_TOKEN = 4;
const MIN_TOKENS = 1_024;

type Part = { text: string; mark: boolean };

/** The Responses body as the prompt cache sees it: the answer format, then each input part in order. */
function partsOf(request: TurnRequest): Part[] {
  const body = convertToOpenAIResponsesRequest(request, { model: "gpt-5.6-sol", explicitCache: true });
  const parts: Part[] = [{ text: JSON.stringify(body.text.format), mark: false }];
  for (const message of body.input) {
    for (const part of message.content) parts.push({ text: part.text, mark: !!part.prompt_cache_breakpoint });
  }
  return parts;
}

type Totals = {
  calls: number;
  marks: number;
  entries: number;
  marksRead: number;
  written: number;
  read: number;
  input: number;
};

/** One run's explicit-mark cache: entries by the chain of part texts they end. */
class MarkCache {
  readonly #entries = new Map<string, { read: boolean }>();
  readonly totals: Totals = { calls: 0, marks: 0, entries: 0, marksRead: 0, written: 0, read: 0, input: 0 };

  add(parts: Part[]): void {
    let key = "";
    let end = 0;
    let readEnd = 0;
    const ends: { key: string; end: number; mark: boolean }[] = [];
    for (const part of parts) {
      key += `${part.text.length}:${part.text}\u0000`;
      end += utf8Length(part.text);
      ends.push({ key, end, mark: part.mark });
      const entry = this.#entries.get(key);
      if (entry) {
        readEnd = end;
        entry.read = true;
      }
    }
    let writeEnd = readEnd;
    for (const { key: k, end: e, mark } of ends) {
      if (!mark) continue;
      this.totals.marks += 1;
      if (e < MIN_TOKENS * BYTES_PER_TOKEN || this.#entries.has(k)) continue;
      this.#entries.set(k, { read: false });
      writeEnd = Math.max(writeEnd, e);
    }
    this.totals.calls += 1;
    this.totals.input += end / BYTES_PER_TOKEN;
    this.totals.read += readEnd / BYTES_PER_TOKEN;
    this.totals.written += (writeEnd - readEnd) / BYTES_PER_TOKEN;
  }

  finish(): Totals {
    this.totals.marksRead = [...this.#entries.values()].filter((e) => e.read).length;
    this.totals.entries = this.#entries.size;
    return this.totals;
  }
}

async function measure(policy: ContextPolicyName, protocol: "two-call" | "single-call", limit: number) {
  const sum: Totals = { calls: 0, marks: 0, entries: 0, marksRead: 0, written: 0, read: 0, input: 0 };
  for (const workload of listWorkloads().slice(0, limit)) {
    const { recording } = loadWorkload(workload);
    const cache = new MarkCache();
    const wrap = (provider: Provider): Provider => ({
      name: provider.name,
      capabilities: provider.capabilities,
      complete: (request, options) => {
        cache.add(partsOf(request));
        return provider.complete(request, options);
      },
    });
    await replayRecording(recording, policy, { wrap, protocol });
    const t = cache.finish();
    for (const k of Object.keys(sum) as (keyof Totals)[]) sum[k] += t[k];
  }
  return sum;
}

const limitAt = process.argv.indexOf("--limit");
const limit = limitAt === -1 ? Infinity : Number(process.argv[limitAt + 1]);
for (const protocol of ["two-call", "single-call"] as const) {
  const t = await measure("bounded", protocol, limit);
  const per = (n: number) => (n / t.calls).toFixed(0);
  console.log(
    `${protocol}: ${t.calls} calls, ${t.marks} marks; per call ${per(t.written)} tokens written, ${per(t.read)} read ` +
      `of ${per(t.input)} (${((100 * t.read) / t.input).toFixed(1)}% read); ${t.marksRead} of the ${t.entries} ` +
      "entries the marks wrote were read by a later call",
  );
}
