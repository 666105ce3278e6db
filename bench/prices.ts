// Price scenarios: the same cache behaviour (what is read, written or sent uncached, from bench/cost.ts) priced
// several ways, and the floor of a step protocol under each. Prices are per input token, relative to an uncached one.
import { BYTES_PER_TOKEN, type Costs, minCacheTokens, relativePrices } from "./cost.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";

/**
 * A scenario prices Anthropic's three kinds of input (cache write, cache read, uncached) or OpenAI's three (cached,
 * written, uncached; writes cost what uncached input costs before GPT-5.6), at a model's prices from the model table
 * (lib/models/built-in.ts) relative to its uncached input. Anthropic 1h: a one-hour cache_ttl writes at 2x (same hits
 * in a replay, which has no clock).
 */
export type PriceScenario =
  | {
    id: string;
    label: string;
    model: string;
    kind: "anthropic";
    write: number;
    read: number;
    /** Priced on the second cache simulation: a model whose minimum cacheable prompt is 4,096 tokens. */
    minTokens?: 4096;
    /** What the step's own breakpoint writes at: it stays a 5-minute one under a 1-hour cache. */
    stepWrite?: number;
  }
  | { id: string; label: string; model: string; kind: "openai"; read: number; write: number };

const label = (name: string, rates: string) => `${name} (${rates})`;
const fixed = (n: number) => Number(n.toFixed(3)).toString();

function anthropicScenario(id: string, model: string, name: string, { hour = false, min4096 = false } = {}) {
  const entry = BUILT_IN_MODELS.models[model];
  const rates = relativePrices(model);
  const write = hour ? entry.prices!.cache_write_1h! / entry.prices!.input : rates.write;
  if (min4096 && minCacheTokens(model) !== 4096) throw new Error(`The model table's minimum for ${model} is not 4,096`);
  return {
    id,
    label: label(name, `w ${fixed(write)}, r ${fixed(rates.read)}`),
    model,
    kind: "anthropic" as const,
    write,
    read: rates.read,
    ...(min4096 ? { minTokens: 4096 as const } : {}),
    ...(hour ? { stepWrite: rates.write } : {}),
  };
}

function openaiScenario(id: string, model: string, name: string) {
  const rates = relativePrices(model);
  const writes = rates.writeBilled !== 1 ? `, w ${fixed(rates.writeBilled)}` : "";
  return {
    id,
    label: label(name, `cached ${fixed(rates.read)}${writes}`),
    model,
    kind: "openai" as const,
    read: rates.read,
    write: rates.writeBilled,
  };
}

/** Every rate is read from the table: a price change there moves the benchmark with it. */
export const PRICE_SCENARIOS = [
  anthropicScenario("anthropic", "anthropic/claude-sonnet-5-5", "Anthropic 5m"),
  anthropicScenario("anthropic-1h", "anthropic/claude-sonnet-5-5", "Anthropic 1h", { hour: true }),
  anthropicScenario("anthropic-r0.05", "anthropic/claude-opus-5-5", "Opus 5.5"),
  anthropicScenario("anthropic-r0.025", "anthropic/claude-fable-5-1", "Fable 5.1"),
  anthropicScenario("anthropic-min4096", "anthropic/claude-haiku-4-5", "Haiku 4.5, 4,096-token minimum", {
    min4096: true,
  }),
  openaiScenario("gpt-4.1", "openai/gpt-4.1", "GPT-4.1"),
  openaiScenario("gpt-5", "openai/gpt-5", "GPT-5"),
  openaiScenario("gpt-5.6", "openai/gpt-5.6-sol", "GPT-5.6"),
] as const satisfies readonly PriceScenario[];
export type ScenarioId = (typeof PRICE_SCENARIOS)[number]["id"];
export const SCENARIO_IDS = PRICE_SCENARIOS.map((s) => s.id) as ScenarioId[];

/** A run's input cost (token units) under a scenario, from its measured cache behaviour. */
export function scenarioCost(costs: Costs, scenario: PriceScenario): number {
  if (scenario.kind === "openai") {
    const cached = costs.cachedTokens.openai;
    const written = costs.openaiWriteTokens;
    return cached * scenario.read + written * scenario.write + (costs.openaiTokens - cached - written);
  }
  const min4096 = "minTokens" in scenario && scenario.minTokens === 4096;
  const read = min4096 ? costs.anthropicMin4096.cached : costs.cachedTokens.anthropic;
  const write = min4096 ? costs.anthropicMin4096.write : costs.anthropicWriteTokens;
  const stepWrite = "stepWrite" in scenario && scenario.stepWrite !== undefined ? scenario.stepWrite : scenario.write;
  const short = stepWrite !== scenario.write && !min4096 ? costs.anthropicShortWriteTokens : 0;
  return read * scenario.read + (write - short) * scenario.write + short * stepWrite + (costs.tokens - read - write);
}

export function scenarioCosts(costs: Costs): Record<ScenarioId, number> {
  return Object.fromEntries(PRICE_SCENARIOS.map((s) => [s.id, scenarioCost(costs, s)])) as Record<ScenarioId, number>;
}

/** What one model call must show at least (bytes of the Anthropic body, by part), and the step it belongs to. */
export type FloorCall = {
  step: number;
  /** Tools (response format) and the prefix: instructions, intent, tasks. */
  fixed: number;
  /** Candidates and lookup responses: new on every call. */
  candidates: number;
  /** The newest event (the output the step reacts to). */
  newest: number;
};

/** The write price a scenario charges for a cached prefix (OpenAI before GPT-5.6 has no write premium). */
const writePrice = (s: PriceScenario) => s.write;

/**
 * The floor of a protocol under a scenario, in token units: every call shows the tools and prefix (written once,
 * read after), its candidates uncached, and the newest output. F2 lets the calls of a step that share one newest
 * event cache it (min(w + r(k - 1), k) per byte over its k calls); F1 (strict) counts each newest output once,
 * uncached, whatever the number of calls. No policy can pay less than F2 under this protocol.
 */
export function floorCost(
  calls: readonly FloorCall[],
  scenario: PriceScenario,
  { strict = false }: { strict?: boolean } = {},
): number {
  const w = writePrice(scenario);
  const r = scenario.read;
  let bytes = 0;
  calls.forEach((call, i) => {
    bytes += (i === 0 ? w : r) * call.fixed + call.candidates;
  });
  const groups = new Map<number, { k: number; n: number }>();
  for (const call of calls) {
    const g = groups.get(call.step) ?? { k: 0, n: call.newest };
    g.k += 1;
    groups.set(call.step, g);
  }
  for (const { k, n } of groups.values()) bytes += (strict ? 1 : Math.min(w + r * (k - 1), k)) * n;
  return bytes / BYTES_PER_TOKEN;
}

export type Floors = { f2: Record<ScenarioId, number>; f1: Record<ScenarioId, number> };

export function floorsOf(calls: readonly FloorCall[]): Floors {
  const each = (strict: boolean) =>
    Object.fromEntries(PRICE_SCENARIOS.map((s) => [s.id, floorCost(calls, s, { strict })])) as Record<
      ScenarioId,
      number
    >;
  return { f2: each(false), f1: each(true) };
}

export const emptyFloors = (): Floors => floorsOf([]);

export function addFloors(into: Floors, from: Floors): void {
  for (const id of SCENARIO_IDS) {
    into.f2[id] += from.f2[id];
    into.f1[id] += from.f1[id];
  }
}

/**
 * Recovery: a step whose action uses an identifier its request did not show pays one lookup call, modelled as its
 * request sent again with everything before the candidates read from the cache, and the candidates plus a 1 KiB
 * lookup response uncached.
 */
export const RECOVERY_RESPONSE_BYTES = 1024;

export type Recovery = { calls: number; cachedBytes: number; uncachedBytes: number };
export const emptyRecovery = (): Recovery => ({ calls: 0, cachedBytes: 0, uncachedBytes: 0 });

export function addRecovery(into: Recovery, from: Recovery): void {
  into.calls += from.calls;
  into.cachedBytes += from.cachedBytes;
  into.uncachedBytes += from.uncachedBytes;
}

export function recoveryCost(recovery: Recovery, scenario: PriceScenario): number {
  return (recovery.cachedBytes * scenario.read + recovery.uncachedBytes) / BYTES_PER_TOKEN;
}
