// Names as a file system holds them: bytes, not always UTF-8 (`test_\377.py` is a valid name on Linux, and Python's
// test runner runs it). A name is kept as a string that round-trips to its bytes: valid UTF-8 decodes as itself and
// each byte that is not part of a valid sequence becomes the lone surrogate U+DC00 + byte (Python's "surrogateescape",
// PEP 383) — which no valid UTF-8 decodes to, so two different names never meet as one string. Shown to a person or in
// a patch, such a name is quoted as git does: C-style escapes in double quotes, octal for the raw bytes.

const UTF8 = new TextEncoder();
const STRICT = new TextDecoder("utf-8", { fatal: true });
/** A byte kept as a lone surrogate (with the `u` flag, a surrogate pair is one code point and does not match). */
const RAW_BYTE = /[\uDC80-\uDCFF]/u;

/** The name of these bytes, each byte that is not valid UTF-8 kept as U+DC00 + byte. */
export function decodeName(bytes: Uint8Array): string {
  try {
    return STRICT.decode(bytes);
  } catch {
    return decodeEscaped(bytes);
  }
}

function decodeEscaped(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const first = bytes[i] as number;
    if (first < 0x80) {
      out += String.fromCharCode(first);
      i++;
      continue;
    }
    // The sequence's length and smallest code point by its first byte (0xC0, 0xC1 and past 0xF4 never start one).
    const [need, bits, min] = first >= 0xc2 && first <= 0xdf
      ? [1, first & 0x1f, 0x80]
      : first >= 0xe0 && first <= 0xef
      ? [2, first & 0x0f, 0x800]
      : first >= 0xf0 && first <= 0xf4
      ? [3, first & 0x07, 0x10000]
      : [0, 0, 0];
    let point = bits;
    let taken = 0;
    while (taken < need) {
      const next = bytes[i + 1 + taken];
      if (next === undefined || (next & 0xc0) !== 0x80) break;
      point = (point << 6) | (next & 0x3f);
      taken++;
    }
    if (need === 0 || taken < need || point < min || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) {
      out += String.fromCharCode(0xdc00 + first);
      i++;
      continue;
    }
    out += String.fromCodePoint(point);
    i += need + 1;
  }
  return out;
}

/** Whether a name holds a byte that is not UTF-8 (kept as a lone surrogate). */
export function hasRawBytes(name: string): boolean {
  return RAW_BYTE.test(name);
}

/** The bytes a name stands for (the inverse of decodeName). */
export function encodeName(name: string): Uint8Array {
  if (!hasRawBytes(name)) return UTF8.encode(name);
  const bytes: number[] = [];
  for (const char of name) {
    const point = char.codePointAt(0) as number;
    if (point >= 0xdc80 && point <= 0xdcff) bytes.push(point - 0xdc00);
    else bytes.push(...UTF8.encode(char));
  }
  return Uint8Array.from(bytes);
}

const ESCAPES: Record<number, string> = {
  0x07: "\\a",
  0x08: "\\b",
  0x09: "\\t",
  0x0a: "\\n",
  0x0b: "\\v",
  0x0c: "\\f",
  0x0d: "\\r",
  0x22: '\\"',
  0x5c: "\\\\",
};

const octal = (byte: number) => `\\${byte.toString(8).padStart(3, "0")}`;

/**
 * A path as git shows it: as it is when it needs no escape, else in double quotes with C-style escapes — a quote, a
 * backslash, control characters, and bytes that are not UTF-8 in octal (`"test_\377.py"`). `ascii` also escapes
 * every other non-ASCII byte, as git does in patches (core.quotePath); without it, readable UTF-8 stays as it is.
 */
export function quotedName(path: string, { ascii = false }: { ascii?: boolean } = {}): string {
  let out = "";
  let escaped = false;
  for (const char of path) {
    const point = char.codePointAt(0) as number;
    if (point >= 0xdc80 && point <= 0xdcff) {
      out += octal(point - 0xdc00);
      escaped = true;
    } else if (point < 0x20 || point === 0x7f || point === 0x22 || point === 0x5c) {
      out += ESCAPES[point] ?? octal(point);
      escaped = true;
    } else if (point >= 0x80 && ascii) {
      for (const byte of UTF8.encode(char)) out += octal(byte);
      escaped = true;
    } else out += char;
  }
  return escaped ? `"${out}"` : path;
}
