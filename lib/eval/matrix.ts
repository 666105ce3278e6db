// The evaluation matrix: tasks × models × policies × repeats, grouped into pairs (same task, model and repeat; only
// the policy differs), put in a seeded order, and split into shards that never cut a pair.
import type { ContextPolicyName } from "../policy.ts";

export type Pair = { task: string; model: string; repeat: number };
export type RunKey = Pair & { policy: ContextPolicyName };

/** A pair in the order it runs, with the order of its policies (randomised per pair). */
export type ScheduledPair = Pair & { policies: ContextPolicyName[] };

export const pairKey = (p: Pair): string => `${p.task}\u0000${p.model}\u0000${p.repeat}`;

/** A file-safe, unique name of one run: "fix-range.anthropic_claude-sonnet-5-5.bounded.r1". */
export function runId(run: RunKey): string {
  return `${run.task}.${fileSafe(run.model)}.${run.policy}.r${run.repeat}`;
}

/** A pair's name: its runs' ids without the policy ("fix-range.anthropic_claude-sonnet-5-5.r1"). */
export function pairId(pair: Pair): string {
  return `${pair.task}.${fileSafe(pair.model)}.r${pair.repeat}`;
}

const fileSafe = (model: string) => model.replace(/[^A-Za-z0-9._-]+/g, "_");

/** A 32-bit seed from any text (FNV-1a). */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a small, fast, seeded generator of numbers in [0, 1). Same seed, same sequence, on every runtime. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    // "!": i is in [1, length) and j in [0, i]: both index out
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Every pair in canonical order: task order of the suite, then model, then repeat. */
export function allPairs(
  { tasks, models, repeats }: { tasks: readonly string[]; models: readonly string[]; repeats: number },
): Pair[] {
  return tasks.flatMap((task) =>
    models.flatMap((model) => Array.from({ length: repeats }, (_, i) => ({ task, model, repeat: i + 1 })))
  );
}

export type Shard = { index: number; count: number };

/** Parses "i/n" (1-based): shard 2 of 4 is "2/4". Null when malformed. */
export function parseShard(text: string): Shard | null {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (!match) return null;
  const [index, count] = [Number(match[1]), Number(match[2])];
  return index >= 1 && count >= 1 && index <= count ? { index, count } : null;
}

/**
 * The pairs of one shard: the canonical order dealt round-robin, so shards differ in size by at most one pair and a
 * pair's shard depends only on the matrix, never on timing or on what other shards did.
 */
export function shardPairs(pairs: readonly Pair[], shard: Shard | null): Pair[] {
  return shard ? pairs.filter((_, i) => i % shard.count === shard.index - 1) : [...pairs];
}

/**
 * The order runs start in: repeat by repeat (every task and model once before any twice, so an evaluation its budget
 * or a Ctrl-C stops early has covered the suite as evenly as it could), each repeat's pairs in a seeded shuffle, each
 * pair's policies in a seeded random order. The order is computed on the whole matrix, then filtered to the shard, so
 * a run's place does not depend on sharding.
 */
export function schedule(
  pairs: readonly Pair[],
  { policies, seed }: { policies: readonly ContextPolicyName[]; seed: string },
): ScheduledPair[] {
  const random = seededRandom(seedOf(`order:${seed}`));
  const repeats = [...new Set(pairs.map((pair) => pair.repeat))].sort((a, b) => a - b);
  return repeats.flatMap((repeat) => shuffle(pairs.filter((pair) => pair.repeat === repeat), random))
    .map((pair) => ({ ...pair, policies: shuffle(policies, random) }));
}
