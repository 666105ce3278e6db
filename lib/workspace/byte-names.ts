// Folder entries by the bytes of their names: a name need not be UTF-8 (`sub\377`), and a walk that reads names as
// text (U+FFFD for such a byte) cannot reach what is under it. A path here is a "byte string": each character one
// byte (latin1), turned into a Buffer for the file system only when it is not UTF-8. What the git guard walks with.
import { Buffer } from "node:buffer";
import { type Dirent, lstatSync, readdirSync, type Stats } from "node:fs";
import { join } from "node:path";

/** An entry's kind: folder, file, link, other; "?" a name this runtime cannot reach (not UTF-8, on Deno). */
export type Kind = "d" | "f" | "l" | "o" | "?";

/** Where a text and its byte string are the same (most names): no conversion. */
const ASCII = /^[^\u0080-\uffff]*$/;

/** A text as a byte string (each character one byte of its UTF-8). */
export function bytes(text: string): string {
  if (ASCII.test(text)) return text;
  return Buffer.from(text, "utf8").toString("latin1");
}

/** A byte string as text for messages: its UTF-8, a byte that is not shown as U+FFFD. */
export function shown(path: string): string {
  if (ASCII.test(path)) return path;
  return Buffer.from(path, "latin1").toString("utf8");
}

/** A byte string as the file system takes it: the text when it is UTF-8, else the bytes. */
export function fsPath(path: string): string | Buffer {
  if (ASCII.test(path)) return path;
  const raw = Buffer.from(path, "latin1");
  const text = raw.toString("utf8");
  return Buffer.from(text, "utf8").equals(raw) ? text : raw;
}

function kindOf(entry: Dirent | Stats): Kind {
  return entry.isDirectory() ? "d" : entry.isFile() ? "f" : entry.isSymbolicLink() ? "l" : "o";
}

/**
 * A folder's entries (byte-string names) and kinds, links not followed; empty when it cannot be read. Names are
 * listed as text (with their kinds, no stat); only when one is not UTF-8 are the bytes listed and those looked at.
 */
export function listNames(dir: string): { name: string; kind: Kind }[] {
  let typed: Dirent[];
  try {
    typed = readdirSync(fsPath(dir) as string, { withFileTypes: true });
  } catch {
    return [];
  }
  const odd = (name: string) => name.includes("\ufffd");
  const out = typed.filter((e) => !odd(e.name)).map((e) => ({ name: bytes(e.name), kind: kindOf(e) }));
  // The listing's own kind of each odd name as text (U+FFFD for its bytes): all that a runtime reading names as text
  // knows of it. Only "a file" is trusted, when every entry of that text is one: a file holds no `.git`.
  const fileByText = new Map<string, boolean>();
  for (const e of typed) if (odd(e.name)) fileByText.set(e.name, (fileByText.get(e.name) ?? true) && e.isFile());
  if (out.length === typed.length) return out;
  let raw: Buffer[];
  try {
    raw = readdirSync(fsPath(dir) as string, { encoding: "buffer" }) as unknown as Buffer[];
  } catch {
    return out;
  }
  for (const name of raw) {
    if (!odd(name.toString("utf8"))) continue;
    const path = join(dir, name.toString("latin1"));
    let kind: Kind;
    try {
      kind = kindOf(lstatSync(fsPath(path)));
    } catch {
      // listed, yet not reachable by its name (this runtime reads names as text): a file by the listing, else unknown
      kind = fileByText.get(name.toString("utf8")) === true ? "f" : "?";
    }
    out.push({ name: name.toString("latin1"), kind });
  }
  return out;
}
