// Side by side: legacy, bounded and the peers (observation masking, tool-result clearing) on one recording — request
// bytes, effective input cost under the caching models, and information visibility. Legacy's requests are replayed
// once and each peer is rendered from them, request by request, so every contender answers the same calls.
import { runNumbers } from "./workloads.ts";
import { utf8Length } from "../lib/digest.ts";
import type { Recording } from "../lib/recording.ts";
import type { PreviewSizes } from "../lib/render-event.ts";
import type { CompleteOptions, ModelAnswer, Provider, TurnRequest } from "../lib/turn.ts";
import { addCosts, type Costs, emptyCosts, RunCost } from "./cost.ts";
import { type Peer, PeerRun, PEERS } from "./peers.ts";
import { addVisibility, emptyVisibility, learnedIdentifiers, scoreStep, type Visibility } from "./visibility.ts";
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
};

export function emptyContenderRun(): ContenderRun {
  return { calls: 0, bytes: 0, maxBytes: 0, costs: emptyCosts(), visibility: emptyVisibility(), checkpoints: null };
}

export function addContenderRun(into: ContenderRun, from: ContenderRun): void {
  into.calls += from.calls;
  into.bytes += from.bytes;
  into.maxBytes = Math.max(into.maxBytes, from.maxBytes);
  addCosts(into.costs, from.costs);
  addVisibility(into.visibility, from.visibility);
  if (from.checkpoints !== null) into.checkpoints = (into.checkpoints ?? 0) + from.checkpoints;
}

/** Measures one contender's requests: bytes, cache costs, and visibility at the last request of each step. */
class Meter {
  readonly run = emptyContenderRun();
  readonly #cost = new RunCost();
  readonly #learned: Map<number, string[]>;
  #pending: { step: number; request: TurnRequest } | null = null;

  constructor(learned: Map<number, string[]>) {
    this.#learned = learned;
  }

  add(request: TurnRequest, step: number): void {
    const bytes = utf8Length(JSON.stringify(request));
    this.run.calls += 1;
    this.run.bytes += bytes;
    this.run.maxBytes = Math.max(this.run.maxBytes, bytes);
    this.#cost.add(request);
    if (this.#pending && this.#pending.step !== step) this.flush();
    this.#pending = { step, request };
  }

  flush(): void {
    if (this.#pending) scoreStep(this.run.visibility, this.#learned.get(this.#pending.step), this.#pending.request);
    this.#pending = null;
  }

  finish(): ContenderRun {
    this.flush();
    this.run.costs = this.#cost.totals;
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

/** Replays `recording` under legacy (rendering the peers from it) and bounded; one ContenderRun each. */
export async function compareRecording(recording: Recording): Promise<Record<Contender, ContenderRun>> {
  const learned = learnedIdentifiers(recording);
  const steps = recording.answers.map((a) => a.step);
  const legacy = new Meter(learned);
  const peerMeters = Object.fromEntries(PEERS.map((p) => [p, new Meter(learned)])) as Record<Peer, Meter>;
  const peers = new PeerRun();
  let rendered: Record<Peer, TurnRequest> | null = null;
  const meters = [
    { meter: legacy, render: (r: TurnRequest) => (rendered = peers.render(r), r) },
    ...PEERS.map((p) => ({ meter: peerMeters[p], render: () => rendered![p] })),
  ];
  await replayRecording(recording, "legacy", { wrap: (p) => new Observer(p, steps, meters) });
  const bounded = new Meter(learned);
  const boundedResult = await replayRecording(recording, "bounded", {
    wrap: (p) => new Observer(p, steps, [{ meter: bounded, render: (r) => r }]),
  });
  const out = {
    legacy: legacy.finish(),
    bounded: bounded.finish(),
    ...Object.fromEntries(PEERS.map((p) => [p, peerMeters[p].finish()])),
  } as Record<Contender, ContenderRun>;
  out.bounded.checkpoints = runNumbers(boundedResult).checkpoints;
  out.clearing.checkpoints = peers.clearings;
  return out;
}
