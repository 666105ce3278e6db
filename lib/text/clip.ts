// Keeping text that comes from outside (a model's answer, a path it chose, a validation message quoting it) small
// wherever it is repeated into requests or the working state, so it can never crowd out mandatory content.
import { utf8Length } from "./digest.ts";

/** The most a message (refusal reason, validation error) may take, in UTF-8 bytes. */
export const MESSAGE_LIMIT = 512;
/** A model answer is repeated beside its lookup response only up to this size. */
const ECHO_LIMIT = 256;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Head and tail of `text`, `limit` bytes in all, cut on UTF-8 character boundaries. */
export function headAndTail(text: string, limit: number): { head: string; tail: string; omitted: number } | null {
  const total = utf8Length(text);
  if (total <= limit) return null;
  const half = Math.floor(limit / 2);
  if (total === text.length) {
    return { head: text.slice(0, half), tail: text.slice(text.length - (limit - half)), omitted: total - limit };
  }
  const bytes = encoder.encode(text);
  // Cut outward on a character boundary, so at least `limit` bytes are always shown.
  let headEnd = half;
  while (headEnd < bytes.length && ((bytes[headEnd] ?? 0) & 0xc0) === 0x80) headEnd++;
  let tailStart = bytes.length - (limit - half);
  while (tailStart > headEnd && ((bytes[tailStart] ?? 0) & 0xc0) === 0x80) tailStart--;
  if (tailStart <= headEnd) return null;
  return {
    head: decoder.decode(bytes.subarray(0, headEnd)),
    tail: decoder.decode(bytes.subarray(tailStart)),
    omitted: tailStart - headEnd,
  };
}

/** Head and tail of `text` within `limit` bytes, with an ellipsis between; short text is returned as is. */
export function clipText(text: string, limit: number): string {
  if (utf8Length(text) <= limit) return text;
  // the cut may widen by up to 3 bytes per side to stay on character boundaries; the ellipsis takes 3
  const cut = headAndTail(text, limit - 9);
  return cut ? `${cut.head}…${cut.tail}` : text;
}

/**
 * The start of `text` in at most `max` UTF-16 units, ending in "…" when cut; never splitting a surrogate pair (a
 * character outside the BMP is kept whole or left out). The one end-truncation: listings, messages, summaries.
 */
export function clipEnd(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = Math.max(0, max - 1);
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return `${text.slice(0, cut)}…`;
}

/** The model's answer as repeated in a lookup entry: whole when small, else a note of its size. */
export function echo(value: unknown): unknown {
  const json = JSON.stringify(value) ?? "null";
  const bytes = utf8Length(json);
  return bytes <= ECHO_LIMIT ? value : `(an answer of ${bytes} bytes, not repeated: ${clipText(json, 120)})`;
}
