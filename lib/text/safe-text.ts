// Text Loom prints or writes that may carry what it did not write: a URL with a password in it, or control characters
// (a newline, an ANSI escape) in a key, a path or a server's message. Errors pass through here once, when made.

// scheme:// and what follows up to whitespace: a URL's authority ends at the first "/", "?" or "#", and its userinfo
// runs up to the authority's last "@" (as URL parsers read it: a password may hold "@").
const URL_TAIL = /\b([a-z][a-z0-9+.-]*:\/\/)(\S*)/gi;

/** Replaces the userinfo of every URL in the text with "***" ("p@ss" in a password included). */
export function redactUrlUserinfo(text: string): string {
  return text.replace(URL_TAIL, (whole, scheme: string, rest: string) => {
    const end = rest.search(/[/?#]/);
    const at = (end === -1 ? rest : rest.slice(0, end)).lastIndexOf("@");
    return at === -1 ? whole : `${scheme}***@${rest.slice(at + 1)}`;
  });
}

/**
 * A URL without its user name and password, by parsing it (a password with "@", a space or "/" in it included), and
 * whether it had any; the text unchanged when it is not a URL.
 */
export function withoutCredentials(text: string): { url: string; had: boolean } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { url: text, had: false };
  }
  if (url.username === "" && url.password === "") return { url: text, had: false };
  url.username = "";
  url.password = "";
  return { url: url.href, had: true };
}

// C0 controls, DEL, C1 controls and the Unicode line and paragraph separators: none belongs on one line of output.
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\u001b": "\\e" };

/** Control characters written as escapes (`\n`, `\e`, `\u0007`), so a message stays one line and inert on a terminal. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** What every error message becomes: userinfo redacted, control characters escaped. */
export function safeMessage(text: string): string {
  return escapeControl(redactUrlUserinfo(text));
}

// Every control character but the newline and the tab.
// deno-lint-ignore no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * Output that stays inert on a terminal whatever names it carries: control characters other than newlines and tabs
 * escaped as `escapeControl` writes them. JSON keeps its value (`\u0085` and `\u2028` are JSON escapes of the same
 * characters; JSON.stringify already escapes the rest).
 */
export function inertOutput(text: string): string {
  return text.replace(CONTROL_BUT_LINES, escapeControl);
}
