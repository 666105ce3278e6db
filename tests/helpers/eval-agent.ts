// A provider stand-in for evaluations: a local server speaking the Anthropic Messages wire format that plays a
// deterministic scripted agent per task. The agent follows a plan (look, look around, fix, test, finish) but writes
// its fix only when the clue it needs is visible in the request it is sent — or, with `lookups`, after asking a
// `$result` lookup for the output that held it. So a policy that shows less can really cost solved tasks.
// Usage is reported like the API does, from the bytes it was sent (4 bytes a token), with prompt caching by longest
// shared prefix (at least 4,096 bytes) across every request the server has seen, so a per-run marker matters.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import {
  anthropicAnswer,
  anthropicError,
  type FakeProviderServer,
  type ReceivedRequest,
  type ScriptedResponse,
  startAnthropicServer,
} from "./fake-provider-servers.ts";
import { ROOT } from "./binary.ts";
import { parseSuite } from "../../lib/eval/suite.ts";

export const SUITE_DIR = resolve(ROOT, "evals");

type Look =
  | { action: "run_tests" }
  | { action: "search"; args: { query: string; path: string } }
  | { action: "run_command"; args: { argv: string[] } };

/** What the agent does first, and the text that must be visible later for it to write the fix. */
export const AGENT_PLANS: Record<string, { look: Look; clue: string; wander: number }> = {
  "range-off-by-one": { look: { action: "run_tests" }, clue: "expected [0,1,2]", wander: 0 },
  "slugify-separators": { look: { action: "run_tests" }, clue: "hello--world-", wander: 0 },
  "duration-parse": { look: { action: "run_tests" }, clue: "expected 5400", wander: 0 },
  "csv-quoted-fields": { look: { action: "run_tests" }, clue: "quoted comma", wander: 0 },
  "lru-eviction": { look: { action: "run_tests" }, clue: "evicts the oldest", wander: 0 },
  "topo-sort-cycle": { look: { action: "run_tests" }, clue: "two-node cycle", wander: 0 },
  "rename-across-files": {
    look: { action: "search", args: { query: "getUserName", path: "src" } },
    clue: "src/pages/settings.mjs",
    wander: 4,
  },
  "malformed-log-record": {
    look: { action: "run_command", args: { argv: ["grep", "-n", '"amount": "', "logs/events.log"] } },
    clue: "evt-011237",
    wander: 2,
  },
  // The failing case sits in the middle of about 30 KB of test output: the rate the tests expect.
  "clue-in-test-output": { look: { action: "run_tests" }, clue: "published rate 3.5925:", wander: 0 },
  "signature-refactor": {
    look: { action: "search", args: { query: "formatPrice(", path: "src" } },
    clue: "src/reports/yearly.mjs",
    wander: 4,
  },
  "config-migration": { look: { action: "run_tests" }, clue: "auth.json uses timeout_ms", wander: 3 },
  "sku-leading-zeros": { look: { action: "run_tests" }, clue: "priceOf('04512')", wander: 1 },
};

/** The reference solution's files of a task, as write_file arguments. */
function solutionWrites(task: string): { path: string; content: string }[] {
  const dir = join(SUITE_DIR, "tasks", task, "solution");
  const out: { path: string; content: string }[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push({ path: relative(dir, path), content: readFileSync(path, "utf8") });
    }
  };
  walk(dir);
  return out;
}

/** The prompt as text: every system and message block in order. */
export function promptText(body: any): string {
  const blocks = [...(body.system ?? []), ...body.messages.flatMap((m: any) => m.content)];
  return blocks.map((b: any) => b.text ?? "").join("\n");
}

function section(text: string, label: string): any {
  const start = text.indexOf(`## ${label}\n`);
  if (start === -1) return null;
  const from = start + label.length + 4;
  const end = text.indexOf("\n## ", from);
  try {
    return JSON.parse(text.slice(from, end === -1 ? undefined : end).trim());
  } catch {
    return null;
  }
}

type RunState = { index: number; plan: { action: string; args?: unknown }[]; decided: boolean; looked: boolean };

export type EvalAgent = {
  server: FakeProviderServer;
  /** Model calls answered, per task id. */
  calls: Map<string, number>;
  /** Requests whose prompt did not start with the per-run marker. */
  unmarked: number;
  close(): Promise<void>;
};

export type AgentOptions = {
  /** Ask a $result lookup for the look's output when the clue is not visible (else give up on the task). */
  lookups?: boolean;
  /** Answer these 1-based request numbers (over the whole server) with an HTTP error instead. */
  failRequests?: (n: number, task: string) => number | null;
  /** Answer every call after this many milliseconds, as a model would (default 0: at once). */
  latencyMs?: number;
  /** Usage fields sent instead of the computed ones (a server that lies about its counters). */
  usage?: Record<string, number>;
};

// Each run's prefix starts with its own cache marker; the task is the one whose intent the request carries (the
// marker names no task: a small live model read a run id in it as a path).
const MARKER = /\(Cache marker ([0-9a-f]+): not part of the task; ignore it\.\)/;
const SUITE = parseSuite(readFileSync(join(ROOT, "evals/suite.jsonc"), "utf8"), { file: "evals/suite.jsonc" });

/** The task whose intent the request carries (matched up to its first quote, which a request may escape). */
function taskOf(text: string): string | null {
  return SUITE.tasks.find((task) => text.includes(task.intent.split('"')[0]!))?.id ?? null;
}

export async function startEvalAgent(options: AgentOptions = {}): Promise<EvalAgent> {
  const runs = new Map<string, RunState>();
  const seen: string[] = [];
  const calls = new Map<string, number>();
  let count = 0;
  const agent = { calls, unmarked: 0 } as EvalAgent;
  const respond = (request: ReceivedRequest): ScriptedResponse => {
    count++;
    const text = promptText(request.body);
    const marker = MARKER.exec(text);
    const task = taskOf(text);
    if (!marker || task === null) {
      agent.unmarked++;
      return anthropicError(400, { type: "invalid_request_error", message: "no run marker or no suite task" });
    }
    calls.set(task, (calls.get(task) ?? 0) + 1);
    const status = options.failRequests?.(count, task) ?? null;
    if (status !== null) {
      return anthropicError(status, {
        type: "overloaded_error",
        message: "Overloaded",
        headers: { "retry-after": "0" },
      });
    }
    const key = marker[0];
    let state = runs.get(key);
    if (!state) {
      state = { index: 0, plan: [], decided: false, looked: false };
      runs.set(key, state);
    }
    const value = decide(task, text, state, options);
    const answer = anthropicAnswer(value, {
      usage: { ...usageOf(text, JSON.stringify(value), seen), ...options.usage },
      model: "claude-sonnet-5-5",
    });
    return options.latencyMs ? { ...answer, delayMs: options.latencyMs } : answer;
  };
  agent.server = await startAnthropicServer(respond);
  agent.close = () => agent.server.close();
  return agent;
}

function usageOf(text: string, answer: string, seen: string[]) {
  let shared = 0;
  for (const earlier of seen) {
    let i = 0;
    const max = Math.min(earlier.length, text.length);
    while (i < max && earlier.charCodeAt(i) === text.charCodeAt(i)) i++;
    shared = Math.max(shared, i);
  }
  seen.push(text);
  const cached = shared >= 4096 ? shared : 0;
  return {
    input_tokens: Math.ceil((Buffer.byteLength(text) - cached) / 4),
    cache_read_input_tokens: Math.floor(cached / 4),
    cache_creation_input_tokens: 0,
    output_tokens: Math.ceil(answer.length / 4) + 5,
  };
}

const WANDER_FILES = ["harness.mjs", "test.mjs", "harness.mjs", "test.mjs"];

function decide(task: string, text: string, state: RunState, options: AgentOptions): unknown {
  const plan = AGENT_PLANS[task];
  const candidates = section(text, "Candidates") ?? {};
  if (candidates.action !== undefined) {
    // Arguments for the action chosen at selection.
    const step = state.plan[state.index - 1];
    return step?.args ?? {};
  }
  if (!state.looked) {
    state.looked = true;
    state.plan.push({ action: plan.look.action, args: "args" in plan.look ? plan.look.args : undefined });
    for (let i = 0; i < plan.wander; i++) state.plan.push({ action: "read_file", args: { path: WANDER_FILES[i % 4] } });
  }
  if (state.index >= state.plan.length && !state.decided) {
    if (text.includes(plan.clue)) {
      state.decided = true;
      for (const write of solutionWrites(task)) state.plan.push({ action: "write_file", args: write });
      state.plan.push({ action: "run_tests" });
      state.plan.push({ action: "finish", args: { status: "success", summary: "Fixed as asked." } });
    } else if (options.lookups) {
      const ref = lookRef(text);
      if (ref && !text.includes('"$result"')) return { $result: ref };
      state.decided = true;
      state.plan.push({ action: "finish", args: { status: "failure", summary: "Could not find what to change." } });
    } else {
      state.decided = true;
      state.plan.push({ action: "finish", args: { status: "failure", summary: "Could not find what to change." } });
    }
  }
  const next = state.plan[state.index++] ?? { action: "finish", args: { status: "failure", summary: "Out of plan." } };
  return { action: next.action, reason: "scripted" };
}

/** The reference of the first output the request mentions (the look's: it ran first). */
function lookRef(text: string): string | null {
  return /sha256:[0-9a-f]{12,64}/.exec(text.slice(text.indexOf("## Events")))?.[0] ?? null;
}
