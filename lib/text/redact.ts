// Keys never leave Loom in a message: every text Loom prints or writes passes one redaction of every key it holds, and
// a server's text is redacted whole before it is clipped (a key cut at the clip would otherwise survive but for its
// last characters). Pure: the keys are passed in (lib/io/held-keys.ts holds the process's).

/** What a key becomes. */
const REDACTED = "[redacted]";
/** Shorter values are not redacted: they would match ordinary text (and are no key). */
const MIN_KEY_CHARS = 8;
/** A run of this many characters of a key, anywhere in a short text, is taken for (part of) the key. */
const MIN_RUN_CHARS = 12;

/** Every occurrence of every key replaced with REDACTED (the longest key first, so none is left half-replaced). */
export function redactSecrets(text: string, keys: readonly string[]): string {
  let out = text;
  for (const key of usable(keys)) if (out.includes(key)) out = out.split(key).join(REDACTED);
  return out;
}

/**
 * redactSecrets, then every run of at least 12 characters of a key (a prefix a server echoed, a key cut by a clip) as
 * well. Quadratic in the text's length: for short texts (a clipped error detail), after redactSecrets on the whole.
 */
export function redactSecretRuns(text: string, keys: readonly string[]): string {
  let out = redactSecrets(text, keys);
  for (const key of usable(keys)) {
    if (key.length < MIN_RUN_CHARS) continue;
    let at = 0;
    let result = "";
    while (at < out.length) {
      let end = at;
      while (end < out.length && key.includes(out.slice(at, end + 1))) end++;
      if (end - at >= MIN_RUN_CHARS) {
        result += REDACTED;
        at = end;
      } else {
        result += out[at];
        at++;
      }
    }
    out = result;
  }
  return out;
}

function usable(keys: readonly string[]): string[] {
  return [...new Set(keys.map((k) => k.trim()).filter((k) => k.length >= MIN_KEY_CHARS))]
    .sort((a, b) => b.length - a.length);
}

/**
 * The key values an environment holds: every variable whose name ends in `_API_KEY`, `_TOKEN`, `_SECRET` or
 * `_ACCESS_KEY` (the providers' default key variables among them), and the variables named in `names` — when the
 * value looks like a key (16 characters or more, a letter among them): a short or numeric value would match ordinary
 * text, and redacting it could break the JSON Loom writes. (A provider's key is held whatever its shape: held-keys.)
 */
export function keyValuesOf(env: Record<string, string | undefined>, names: readonly string[] = []): string[] {
  const wanted = new Set(names);
  return Object.entries(env)
    .filter(([name, value]) => value !== undefined && (wanted.has(name) || KEY_VARIABLE.test(name)))
    .map(([, value]) => (value as string).trim())
    .filter((value) => value.length >= 16 && /[A-Za-z]/.test(value));
}

const KEY_VARIABLE = /(_API_KEY|_TOKEN|_SECRET|_SECRET_ACCESS_KEY|_ACCESS_KEY)$/;
