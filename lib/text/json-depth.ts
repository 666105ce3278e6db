// Nesting depth of JSON text, measured before it is parsed: a recorded answer nested 50,000 levels deep parses, but
// every recursive walk after it (validation, canonical JSON, cloning) would overflow the stack.

/** Deeper input is refused as invalid; real answers, trajectories and recordings stay far below it. */
export const MAX_JSON_DEPTH = 512;

/** The deepest `[`/`{` nesting in the text, strings skipped; stops counting once past `limit`. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** The reason a text is too deeply nested to parse, or undefined when it is not. */
export function tooDeep(text: string): string | undefined {
  return jsonDepth(text) > MAX_JSON_DEPTH ? `JSON nested deeper than ${MAX_JSON_DEPTH} levels` : undefined;
}
