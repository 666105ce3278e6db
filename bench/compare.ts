// Side by side: legacy, bounded and the peers (observation masking, tool-result clearing) on one recording — request
// bytes, effective input cost under the caching models, and information visibility. Legacy's requests are replayed
// once and each peer is rendered from them, request by request, so every contender answers the same calls.
import { runNumbers } from "./workloads.ts";
import { utf8Length } from "../lib/text/digest.ts";
import type { Recording } from "../lib/recording/recording.ts";
import { NEWEST_PREVIEW_BYTES, type PreviewSizes } from "../lib/context/render-event.ts";
import { DEFAULT_BUDGET } from "../lib/context/budget.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../lib/vocabulary/turn.ts";
import type { StepProtocol } from "../lib/policy.ts";
import { convertRecording } from "../lib/recording/replay.ts";
import { addCosts, type Costs, emptyCosts, RunCost } from "./cost.ts";
import {
  addFloors,
  addRecovery,
  emptyFloors,
  emptyRecovery,
  type FloorCall,
  type Floors,
  floorsOf,
  type Recovery,
  RECOVERY_RESPONSE_BYTES,
} from "./prices.ts";
import { type Peer, PeerRun, PEERS } from "./peers.ts";
import { addVisibility, emptyVisibility, learnedIdentifiers, scoreStep, type Visibility } from "./visibility.ts";
import { addSeedFloor, emptySeedFloor, type SeedCall, seedCall, type SeedFloor, seedFloorOf } from "./seed-floor.ts";
import { replayRecording } from "./workloads.ts";

export const CONTENDERS = ["legacy", "bounded", ...PEERS] as const;
export type Contender = (typeof CONTENDERS)[number];

export type ContenderRun = {
  calls: number;
  bytes: number;
  maxBytes: number;
  costs: Costs;
  visibility: Visibility;
  /** Bounded: checkpoints; clearing: clearings; legacy and masking: null (no such event). */
  checkpoints: number | null;
  /** Steps that made at least one model call. */
  steps: number;
  /** The lookup calls the steps whose request missed an identifier their action uses would pay. */
  recovery: Recovery;
  /** The floor of this run's step protocol (measured on legacy's requests; zero for the other contenders). */
  floors: Floors;
  /** Bounded: the seed-conformant floor F_seed of its own content (bench/seed-floor.ts); zero for the others. */
  seed: SeedFloor;
  /** Legacy and bounded: the run's outcome and canonical execution reports (to compare protocols and policies). */
  result?: { outcome: string; reports: string };
};

export function emptyContenderRun(): ContenderRun {
  return {
    calls: 0,
    bytes: 0,
    maxBytes: 0,
    costs: emptyCosts(),
    visibility: emptyVisibility(),
    checkpoints: null,
    steps: 0,
    recovery: emptyRecovery(),
    floors: emptyFloors(),
    seed: emptySeedFloor(),
  };
}

export function addContenderRun(into: ContenderRun, from: ContenderRun): void {
  into.calls += from.calls;
  into.bytes += from.bytes;
  into.maxBytes = Math.max(into.maxBytes, from.maxBytes);
  addCosts(into.costs, from.costs);
  addVisibility(into.visibility, from.visibility);
  if (from.checkpoints !== null) into.checkpoints = (into.checkpoints ?? 0) + from.checkpoints;
  into.steps += from.steps;
  addRecovery(into.recovery, from.recovery);
  addFloors(into.floors, from.floors);
  addSeedFloor(into.seed, from.seed);
}

/** Measures one contender's requests: bytes, cache costs, and visibility at the last request of each step. */
/**
 * The most of the newest event the floor counts: the 8 KiB of its output a bounded request must show (SPEC 3.2), and
 * 1 KiB for its action, arguments and status. Legacy shows more of a large output; no policy has to.
 */
export const FLOOR_NEWEST_MAX_BYTES = NEWEST_PREVIEW_BYTES + 1024;

class Meter {
  readonly run = emptyContenderRun();
  readonly #cost = new RunCost();
  readonly #learned: Map<number, string[]>;
  #pending: { step: number; request: TurnRequest; bytes: number; candidates: number } | null = null;
  /** What each call must show at least, for the floor (only for the contender that measures it). */
  readonly #floor: FloorCall[] | null;
  /** Bounded's calls as F_seed prices them (only for the contender that measures it). */
  readonly #seed: SeedCall[] | null;

  constructor(
    learned: Map<number, string[]>,
    { floor = false, seed = false }: { floor?: boolean; seed?: boolean } = {},
  ) {
    this.#learned = learned;
    this.#floor = floor ? [] : null;
    this.#seed = seed ? [] : null;
  }

  add(request: TurnRequest, step: number): void {
    const bytes = utf8Length(JSON.stringify(request));
    this.run.calls += 1;
    this.run.bytes += bytes;
    this.run.maxBytes = Math.max(this.run.maxBytes, bytes);
    const parts = this.#cost.add(request);
    this.#floor?.push({
      step,
      fixed: parts["tools / response format"] + parts.prefix,
      candidates: parts.candidates + parts.lookups,
      newest: Math.min(parts.newest, FLOOR_NEWEST_MAX_BYTES),
    });
    this.#seed?.push(seedCall(request, step, bytes, parts));
    if (this.#pending && this.#pending.step !== step) this.flush();
    if (this.#pending?.step !== step) this.run.steps += 1;
    this.#pending = { step, request, bytes, candidates: parts.candidates + parts.lookups };
  }

  flush(): void {
    const pending = this.#pending;
    if (pending) {
      const missed = scoreStep(this.run.visibility, this.#learned.get(pending.step), pending.request);
      if (missed > 0) {
        this.run.recovery.calls += 1;
        this.run.recovery.cachedBytes += pending.bytes - pending.candidates;
        this.run.recovery.uncachedBytes += pending.candidates + RECOVERY_RESPONSE_BYTES;
      }
    }
    this.#pending = null;
  }

  finish(): ContenderRun {
    this.flush();
    this.run.costs = this.#cost.totals;
    if (this.#floor) this.run.floors = floorsOf(this.#floor);
    if (this.#seed) this.run.seed = seedFloorOf(this.#seed);
    return this.run;
  }
}

class Observer implements Provider {
  readonly name: string;
  readonly capabilities: Provider["capabilities"];
  readonly #inner: Provider;
  readonly #steps: number[];
  readonly #meters: { meter: Meter; render: (request: TurnRequest) => TurnRequest }[];
  #call = 0;

  constructor(
    inner: Provider,
    steps: number[],
    meters: { meter: Meter; render: (request: TurnRequest) => TurnRequest }[],
  ) {
    this.#inner = inner;
    this.name = inner.name;
    this.capabilities = inner.capabilities;
    this.#steps = steps;
    this.#meters = meters;
  }

  complete(request: TurnRequest, options: CompleteOptions): Promise<ModelAnswer> {
    const step = this.#steps[this.#call++] ?? -1;
    for (const { meter, render } of this.#meters) meter.add(render(request), step);
    return this.#inner.complete(request, options);
  }
}

/**
 * Replays `recording` under bounded with other preview sizes (the frontier: what spending more of the 32-48 KiB window
 * on previews buys in visibility, and costs).
 */
export async function measureBounded(recording: Recording, previews: PreviewSizes): Promise<ContenderRun> {
  const meter = new Meter(learnedIdentifiers(recording));
  const steps = recording.answers.map((a) => a.step);
  const result = await replayRecording(recording, "bounded", {
    wrap: (p) => new Observer(p, steps, [{ meter, render: (r) => r }]),
    previews,
  });
  const run = meter.finish();
  run.checkpoints = runNumbers(result).checkpoints;
  return run;
}

/**
 * Runs `f` with bounded's retirement target set to `target` bytes (the trigger, ceiling and previews unchanged), to
 * price the note's numbers. The loop takes no budget from its caller (only a local server's context sizes one), so
 * the default budget is set for the replays and put back after.
 */
export async function withRetirementTarget<T>(target: number, f: () => Promise<T>): Promise<T> {
  const saved = DEFAULT_BUDGET.target;
  DEFAULT_BUDGET.target = target;
  try {
    return await f();
  } finally {
    DEFAULT_BUDGET.target = saved;
  }
}

/**
 * Replays `recording` under legacy (rendering the peers from it) and bounded; one ContenderRun each. `protocol`
 * converts the recorded answers to that step protocol first (default: the recording's own).
 */
export async function compareRecording(
  original: Recording,
  { protocol }: { protocol?: StepProtocol } = {},
): Promise<Record<Contender, ContenderRun>> {
  const recording = protocol ? convertRecording(original, protocol) : original;
  const learned = learnedIdentifiers(recording);
  const steps = recording.answers.map((a) => a.step);
  const legacy = new Meter(learned, { floor: true });
  const peerMeters = Object.fromEntries(PEERS.map((p) => [p, new Meter(learned)])) as Record<Peer, Meter>;
  const peers = new PeerRun();
  let rendered: Record<Peer, TurnRequest> | null = null;
  const meters = [
    { meter: legacy, render: (r: TurnRequest) => (rendered = peers.render(r), r) },
    ...PEERS.map((p) => ({ meter: peerMeters[p], render: () => rendered![p] })),
  ];
  const legacyResult = await replayRecording(recording, "legacy", { wrap: (p) => new Observer(p, steps, meters) });
  const bounded = new Meter(learned, { seed: true });
  const boundedResult = await replayRecording(recording, "bounded", {
    wrap: (p) => new Observer(p, steps, [{ meter: bounded, render: (r) => r }]),
  });
  const out = {
    legacy: legacy.finish(),
    bounded: bounded.finish(),
    ...Object.fromEntries(PEERS.map((p) => [p, peerMeters[p].finish()])),
  } as Record<Contender, ContenderRun>;
  out.bounded.checkpoints = runNumbers(boundedResult).checkpoints;
  for (const [contender, result] of [["legacy", legacyResult], ["bounded", boundedResult]] as const) {
    const numbers = runNumbers(result);
    out[contender].result = { outcome: numbers.outcome, reports: numbers.reports };
  }
  out.clearing.checkpoints = peers.clearings;
  return out;
}
