import { createHash } from "node:crypto";

export type Digest = `sha256:${string}`;

export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

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
