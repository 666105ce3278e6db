// Text Loom prints or writes that may carry what it did not write: a URL with a password in it, or control characters
// (a newline, an ANSI escape) in a key, a path or a server's message. Errors pass through here once, when made.

// scheme://user:password@host or scheme://token@host: everything between "//" and "@" before the host.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;

/** Replaces the userinfo of every URL in the text with "***". */
export function redactUrlUserinfo(text: string): string {
  return text.replace(URL_USERINFO, "$1***@");
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
