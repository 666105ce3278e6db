// References into the result store and the archive: `sha256:<hex>` (whole, or the short form requests show: at least
// 12 hex digits) plus an optional selection.
import { clipEnd } from "../text/clip.ts";
import { REF_DIGEST_PATTERN } from "../text/digest.ts";

export type Selection =
  | { kind: "whole" }
  | { kind: "bytes"; start: number; end: number }
  | { kind: "lines"; start: number; end: number }
  | { kind: "pointer"; pointer: string };

/** `digest` is whole or a prefix of at least 12 hex digits (the store or the archive resolves it). */
export type Reference = { digest: string; selection: Selection };

export type ParseResult = { ok: true; reference: Reference } | { ok: false; error: string };

/** Parses `sha256:<hex>`, `…#bytes=START-END`, `…#lines=START-END` or `…#/json/pointer`. */
export function parseReference(text: unknown): ParseResult {
  if (typeof text !== "string") return { ok: false, error: `Reference must be a string, got ${typeof text}` };
  const hash = text.indexOf("#");
  const digest = hash === -1 ? text : text.slice(0, hash);
  if (!REF_DIGEST_PATTERN.test(digest)) {
    return {
      ok: false,
      error: `Malformed reference ${
        JSON.stringify(clip(text))
      }: expected "sha256:" and 12 to 64 lowercase hex digits (as the request shows it)`,
    };
  }
  if (hash === -1) return { ok: true, reference: { digest, selection: { kind: "whole" } } };
  const fragment = text.slice(hash + 1);
  if (fragment.startsWith("/")) {
    return { ok: true, reference: { digest, selection: { kind: "pointer", pointer: fragment } } };
  }
  const range = /^(bytes|lines)=(\d+)-(\d+)$/.exec(fragment);
  if (!range) {
    return {
      ok: false,
      error: `Malformed selection ${
        JSON.stringify(clip(fragment))
      }: expected bytes=START-END, lines=START-END or a JSON pointer`,
    };
  }
  const start = Number(range[2]);
  const end = Number(range[3]);
  if (range[1] === "bytes") {
    if (end < start) return { ok: false, error: `Byte range ${start}-${end} ends before it starts` };
    return { ok: true, reference: { digest, selection: { kind: "bytes", start, end } } };
  }
  if (start < 1 || end < start) {
    return { ok: false, error: `Line range ${start}-${end} must be 1-based and inclusive (START >= 1, END >= START)` };
  }
  return { ok: true, reference: { digest, selection: { kind: "lines", start, end } } };
}

export type SelectResult = { ok: true; content: string } | { ok: false; error: string };

const decoder = new TextDecoder("utf-8", { fatal: true });

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/**
 * Applies a selection to stored content. Byte ranges are clamped to the content's end and must not split a UTF-8
 * character (refused, naming the nearest whole-character range: a replacement character would be a silent lie); lines
 * are 1-based inclusive.
 */
export function select(content: string, selection: Selection): SelectResult {
  switch (selection.kind) {
    case "whole":
      return { ok: true, content };
    case "bytes": {
      const bytes = new TextEncoder().encode(content);
      if (selection.start > bytes.length) {
        return { ok: false, error: `Byte range starts at ${selection.start}, past the end (${bytes.length} bytes)` };
      }
      const end = Math.min(selection.end, bytes.length);
      let start = selection.start;
      let widenedEnd = end;
      while (start > 0 && isContinuation(bytes[start])) start--;
      while (widenedEnd < bytes.length && isContinuation(bytes[widenedEnd])) widenedEnd++;
      if (start !== selection.start || widenedEnd !== end) {
        return {
          ok: false,
          error: `Byte range ${selection.start}-${selection.end} splits a UTF-8 character; ` +
            `the whole characters are bytes=${start}-${widenedEnd}`,
        };
      }
      return { ok: true, content: decoder.decode(bytes.subarray(start, end)) };
    }
    case "lines": {
      const lines = content.split("\n");
      if (content.endsWith("\n")) lines.pop();
      if (selection.start > lines.length) {
        return { ok: false, error: `Line range starts at ${selection.start}, past the end (${lines.length} lines)` };
      }
      return { ok: true, content: lines.slice(selection.start - 1, selection.end).join("\n") };
    }
    case "pointer": {
      let document: unknown;
      try {
        document = JSON.parse(content);
      } catch {
        return { ok: false, error: "JSON pointer used on content that is not JSON" };
      }
      const found = resolvePointer(document, selection.pointer);
      if (!found.ok) return found;
      return { ok: true, content: typeof found.value === "string" ? found.value : JSON.stringify(found.value) };
    }
  }
}

/** RFC 6901. */
function resolvePointer(
  document: unknown,
  pointer: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  if (pointer === "") return { ok: true, value: document };
  if (!pointer.startsWith("/")) {
    return { ok: false, error: `JSON pointer ${JSON.stringify(pointer)} must start with "/"` };
  }
  let current: unknown = document;
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= current.length) {
        return { ok: false, error: `JSON pointer ${JSON.stringify(pointer)}: no array index ${JSON.stringify(token)}` };
      }
      current = current[Number(token)];
    } else if (current !== null && typeof current === "object" && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return { ok: false, error: `JSON pointer ${JSON.stringify(pointer)}: no member ${JSON.stringify(token)}` };
    }
  }
  return { ok: true, value: current };
}

function clip(text: string): string {
  return clipEnd(text, 101);
}
