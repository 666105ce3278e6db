// The keys this process holds (read from its environment, or handed to a provider), for the one redaction every text
// Loom prints or writes passes (lib/text/redact.ts): stdout and stderr (main.ts), every file Loom writes (files.ts),
// every provider error (post-json.ts).
import { redactSecrets } from "../text/redact.ts";

const held = new Set<string>();

/** Adds keys to those redacted from everything Loom prints or writes from now on. */
export function holdKeys(keys: Iterable<string | null | undefined>): void {
  for (const key of keys) if (key) held.add(key.trim());
}

export function heldKeys(): string[] {
  return [...held];
}

/** The text with every held key replaced (redactSecrets). */
export function redactHeld(text: string): string {
  return held.size === 0 ? text : redactSecrets(text, [...held]);
}
