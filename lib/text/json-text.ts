// The one reader of JSON text Loom is given (catalogs, requests, recordings, trajectories, reports): JSON plus
// comments and trailing commas, and every syntax error placed by line and column in the same words on every runtime.

export type JsoncResult = { ok: true; value: unknown } | { ok: false; line: number; column: number; message: string };

const MAX_DEPTH = 64;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Parses JSON with // and block comments and trailing commas. A small parser of our own rather than stripping and
 * calling JSON.parse: runtimes word (and place) JSON syntax errors differently, and duplicate keys must be errors,
 * not a silent last-one-wins.
 */
export function parseJsonc(text: string): JsoncResult {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  class Fail {
    constructor(readonly at: number, readonly message: string) {}
  }
  const fail = (message: string, at = i): never => {
    throw new Fail(at, message);
  };
  const describe =
    () => (i >= text.length ? "the end of the file" : text[i] === '"' ? "a string" : JSON.stringify(text[i]));
  const skip = () => {
    for (;;) {
      const c = text[i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r") i++;
      else if (c === "/" && text[i + 1] === "/") {
        while (i < text.length && text[i] !== "\n") i++;
      } else if (c === "/" && text[i + 1] === "*") {
        const end = text.indexOf("*/", i + 2);
        if (end === -1) fail("unterminated /* comment");
        i = end + 2;
      } else return;
    }
  };
  const string = (): string => {
    const start = i;
    for (i++;; i++) {
      if (i >= text.length || text[i] === "\n") fail("unterminated string", start);
      if (text[i] === "\\") i++;
      else if (text[i] === '"') break;
    }
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail("invalid string (bad escape or control character)", start);
    }
  };
  const value = (depth: number): unknown => {
    if (depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH} levels`);
    skip();
    const c = text[i];
    if (c === '"') return string();
    if (c === "{" || c === "[") {
      const object = c === "{";
      const close = object ? "}" : "]";
      const out: Record<string, unknown> | unknown[] = object ? {} : [];
      i++;
      for (;;) {
        skip();
        if (text[i] === close) break;
        if (object) {
          if (text[i] !== '"') fail(`expected a property name in double quotes or "}", found ${describe()}`);
          const at = i;
          const key = string();
          if (Object.hasOwn(out, key)) fail(`duplicate key ${JSON.stringify(key)}`, at);
          skip();
          if (text[i] !== ":") fail(`expected ":" after ${JSON.stringify(key)}, found ${describe()}`);
          i++;
          // defineProperty: a "__proto__" key is data, not a prototype change.
          Object.defineProperty(out, key, {
            value: value(depth + 1),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else (out as unknown[]).push(value(depth + 1));
        skip();
        if (text[i] === ",") i++;
        else if (text[i] !== close) fail(`expected "," or "${close}", found ${describe()}`);
      }
      i++;
      return out;
    }
    for (const [word, literal] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return literal;
      }
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number) {
      i += number[0].length;
      return Number(number[0]);
    }
    return fail(`expected a value, found ${describe()}`);
  };
  try {
    const result = value(0);
    skip();
    if (i < text.length) fail(`unexpected ${describe()} after the end of the value`);
    return { ok: true, value: result };
  } catch (error) {
    if (!(error instanceof Fail)) throw error;
    const before = text.slice(0, error.at);
    const line = before.split("\n").length;
    return { ok: false, line, column: error.at - before.lastIndexOf("\n"), message: error.message };
  }
}

/** "line 3, column 7: expected ..." — where and why a text is not JSON. */
export function describeJsonFailure(failure: { line: number; column: number; message: string }): string {
  return `line ${failure.line}, column ${failure.column}: ${failure.message}`;
}

/**
 * Parses JSON or JSONC. Large files take the runtime's JSON.parse first (fast); only when that fails does our parser
 * run, to accept comments and trailing commas and to place the error. `strictKeys` always runs our parser, so that
 * duplicate keys are errors (for the small files people write by hand: catalogs, requests).
 */
export function readJson(text: string, { strictKeys = false }: { strictKeys?: boolean } = {}): JsoncResult {
  if (!strictKeys) {
    try {
      return { ok: true, value: JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) };
    } catch {
      // fall through: our parser says where, or accepts comments
    }
  }
  return parseJsonc(text);
}
