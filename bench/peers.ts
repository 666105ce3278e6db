// The peers bounded is compared with, rendered in the same TurnRequest shape as legacy so bytes and costs compare.
// They live in the benchmark only. Each is derived from the legacy request (the whole transcript, outputs inline):
// - observation masking (SWE-agent, OpenHands, "The Complexity Trap", arXiv 2508.21433): the last M outputs whole,
//   every older output replaced by a one-line placeholder; M = 5 and 10.
// - tool-result clearing as Anthropic's context editing (clear_tool_uses) does it: when a request passes the trigger,
//   clear the oldest tool results, keeping the last 3, and only if at least the minimum is cleared (so invalidating
//   the cache is worth it). Once cleared, a result stays cleared. Anthropic's default trigger (100k tokens) is never
//   reached by most of these trajectories, so the trigger is bounded's own (48 KiB) and the minimum 16 KiB.
import { utf8Length } from "../lib/text/digest.ts";
import type { Section, TurnRequest } from "../lib/vocabulary/turn.ts";

export const PEERS = ["masking-5", "masking-10", "clearing"] as const;
export type Peer = (typeof PEERS)[number];

export const CLEARING = { triggerBytes: 48 * 1024, keep: 3, clearAtLeastBytes: 16 * 1024 } as const;

/** Fields of a legacy event that hold an observation (the execution's bulk output). */
const OUTPUT_FIELDS = ["output", "result", "text"] as const;

type Event = Record<string, unknown>;

function outputBytes(event: Event): number {
  let n = 0;
  for (const k of OUTPUT_FIELDS) if (typeof event[k] === "string") n += utf8Length(event[k] as string);
  return n;
}

function placeholder(event: Event, what: string): Event {
  const out: Event = { ...event };
  for (const k of OUTPUT_FIELDS) {
    const v = event[k];
    if (typeof v !== "string") continue;
    const lines = v === "" ? 0 : v.split("\n").length;
    out[k] = `${what} (${lines} line${lines === 1 ? "" : "s"})`;
  }
  return out;
}

function withEvents(request: TurnRequest, map: (events: Event[]) => Event[]): TurnRequest {
  const sections = request.sections.map((s): Section =>
    s.section === "events" ? { section: "events", events: map(s.events as Event[]) } : s
  );
  return { ...request, sections };
}

function eventsOf(request: TurnRequest): Event[] {
  const s = request.sections.find((x) => x.section === "events");
  return s && s.section === "events" ? (s.events as Event[]) : [];
}

/** Masking: the last `keep` outputs whole, older ones one line each. */
export function maskObservations(request: TurnRequest, keep: number): TurnRequest {
  return withEvents(
    request,
    (events) => events.map((e, i) => (i < events.length - keep ? placeholder(e, "Old output omitted") : e)),
  );
}

/** Clearing keeps state across a run's requests: how many of the oldest events have their results cleared. */
export class Clearing {
  #cleared = 0;
  clearings = 0;

  apply(request: TurnRequest): TurnRequest {
    const events = eventsOf(request);
    const render = () =>
      withEvents(request, (all) => all.map((e, i) => (i < this.#cleared ? placeholder(e, "Tool result cleared") : e)));
    let out = render();
    if (utf8Length(JSON.stringify(out)) > CLEARING.triggerBytes) {
      const until = Math.max(this.#cleared, events.length - CLEARING.keep);
      let freed = 0;
      for (let i = this.#cleared; i < until; i++) freed += outputBytes(events[i]);
      if (freed >= CLEARING.clearAtLeastBytes) {
        this.#cleared = until;
        this.clearings += 1;
        out = render();
      }
    }
    return out;
  }
}

/** A run's peer renderings, fed the legacy requests in order. */
export class PeerRun {
  readonly #clearing = new Clearing();

  render(legacy: TurnRequest): Record<Peer, TurnRequest> {
    return {
      "masking-5": maskObservations(legacy, 5),
      "masking-10": maskObservations(legacy, 10),
      clearing: this.#clearing.apply(legacy),
    };
  }

  get clearings(): number {
    return this.#clearing.clearings;
  }
}
