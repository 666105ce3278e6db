// The run-local, append-only archive of events from the first action. In memory only: nothing survives the run.
import { type Digest, DigestIndex, isDigest } from "../text/digest.ts";
import { type SealedEvent, summarizeEvent } from "./events.ts";

export const ARCHIVE_MAX_EVENTS = 4096;
const ARCHIVE_MAX_BYTES = 16 * 1024 * 1024;
const HISTORY_PAGE_SIZE = 32;

export type HistoryEntry = { seq: number; digest: Digest; kind: string; summary: string; bytes: number };
export type HistoryPage = { entries: HistoryEntry[]; next_offset: number | null };

export class Archive {
  readonly #events: SealedEvent[] = [];
  readonly #byDigest = new Map<Digest, SealedEvent>();
  readonly #index = new DigestIndex();
  #bytes = 0;
  readonly #maxEvents: number;
  readonly #maxBytes: number;

  constructor(
    { maxEvents = ARCHIVE_MAX_EVENTS, maxBytes = ARCHIVE_MAX_BYTES }: { maxEvents?: number; maxBytes?: number } = {},
  ) {
    this.#maxEvents = maxEvents;
    this.#maxBytes = maxBytes;
  }

  /** Whether one more event of this size fits the capacity. */
  fits(bytes: number): boolean {
    return this.#events.length + 1 <= this.#maxEvents && this.#bytes + bytes <= this.#maxBytes;
  }

  append(sealed: SealedEvent): void {
    if (!this.fits(sealed.bytes)) throw new RangeError("archive capacity exceeded");
    this.#events.push(sealed);
    this.#byDigest.set(sealed.digest, sealed);
    this.#index.add(sealed.digest);
    this.#bytes += sealed.bytes;
  }

  get length(): number {
    return this.#events.length;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get limits(): { events: number; bytes: number } {
    return { events: this.#maxEvents, bytes: this.#maxBytes };
  }

  at(index: number): SealedEvent | undefined {
    return this.#events[index];
  }

  get(digest: string): SealedEvent | undefined {
    return isDigest(digest) ? this.#byDigest.get(digest) : undefined;
  }

  /** The archived event's digest a whole or abbreviated digest names. */
  resolve(ref: string): Digest | undefined {
    return this.#index.resolve(ref);
  }

  /** A page of the listing from `offset` (0 = the first event); `next_offset` is null at the end. */
  list(offset: number, { pageSize = HISTORY_PAGE_SIZE }: { pageSize?: number } = {}): HistoryPage {
    const start = Math.max(0, Math.min(offset, this.#events.length));
    const slice = this.#events.slice(start, start + pageSize);
    const next = start + slice.length;
    return {
      entries: slice.map(({ event, digest, bytes }) => ({
        seq: event.seq,
        digest,
        kind: event.kind,
        summary: summarizeEvent(event),
        bytes,
      })),
      next_offset: next < this.#events.length ? next : null,
    };
  }

  clear(): void {
    this.#events.length = 0;
    this.#byDigest.clear();
    this.#index.clear();
    this.#bytes = 0;
  }
}
