import { createHash } from "node:crypto";

export type Digest = `sha256:${string}`;

/** Whether a string has a digest's form (it may still name nothing a store holds). */
export function isDigest(text: string): text is Digest {
  return text.startsWith("sha256:");
}

/** A reference names a digest whole or by a prefix of at least this many hex digits. */
const SHORT_DIGEST_HEX = 12;
export const REF_DIGEST_PATTERN = /^sha256:[0-9a-f]{12,64}$/;

const PREFIX = "sha256:".length;

/**
 * Digests in the order a run first saw them, each with its short form: the shortest prefix of at least 12 hex digits
 * that no digest seen before it shares. A short form resolves to the first digest seen with that prefix — the one it
 * was made for — so the short forms a request shows stay valid for the whole run. 64 hex digits cost a model some 40
 * tokens; 12 (48 bits) leave a collision between two digests of one run far below one in a billion.
 */
export class DigestIndex {
  /** Digests by their first 12 hex digits, in the order seen (almost always one each). */
  readonly #buckets = new Map<string, Digest[]>();
  readonly #short = new Map<Digest, string>();

  add(digest: Digest): void {
    if (this.#short.has(digest)) return;
    const key = digest.slice(0, PREFIX + SHORT_DIGEST_HEX);
    const bucket = this.#buckets.get(key);
    let length = PREFIX + SHORT_DIGEST_HEX;
    for (const earlier of bucket ?? []) {
      let shared = PREFIX;
      while (shared < digest.length && earlier[shared] === digest[shared]) shared++;
      length = Math.max(length, shared + 1);
    }
    if (bucket) bucket.push(digest);
    else this.#buckets.set(key, [digest]);
    this.#short.set(digest, digest.slice(0, length));
  }

  /** The short form of a digest this index holds (any other string is returned as it is). */
  abbreviate(digest: string): string {
    return (isDigest(digest) ? this.#short.get(digest) : undefined) ?? digest;
  }

  /** The digest a whole or abbreviated digest names, if this index holds one. */
  resolve(ref: string): Digest | undefined {
    if (ref.length - PREFIX < SHORT_DIGEST_HEX) return undefined;
    if (isDigest(ref) && this.#short.has(ref)) return ref;
    return this.#buckets.get(ref.slice(0, PREFIX + SHORT_DIGEST_HEX))?.find((d) => d.startsWith(ref));
  }

  clear(): void {
    this.#buckets.clear();
    this.#short.clear();
  }
}

/** `sha256:<hex>` of the UTF-8 bytes of a string (or of raw bytes). */
export function digestOf(content: string | Uint8Array): Digest {
  return `sha256:${createHash("sha256").update(content).digest("hex")}`;
}

/** JSON with object keys sorted, so equal values always give equal bytes (and digests). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const keys = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${
    keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")
  }}`;
}

/** UTF-8 byte length without allocating a buffer for ASCII-only strings. */
export function utf8Length(text: string): number {
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
