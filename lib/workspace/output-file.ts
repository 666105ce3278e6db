// Where a command's output goes while it runs: one file that its stdout and stderr both write to, never a pipe.
// A program that ends itself (Node's process.exit) drops what it still holds for a pipe or socket the reader has not
// emptied — Bun hands children a socket pair that fills after ~15 KB of line-sized writes — so a pipe kept less of
// the same output the busier the machine was. A write to a file is done when the call returns: every byte the command
// wrote is in the file when it exits, however slow Loom is to read it. The file is deleted as soon as it is open (the
// open descriptor keeps it readable) and its folder at the end, so nothing is left behind.
import { closeSync, fstatSync, openSync, readSync, rmSync } from "node:fs";
import { join } from "node:path";
import { makeScratch } from "./scratch.ts";

const READ_CHUNK_BYTES = 64 * 1024;

export type OutputFile = {
  /** The descriptor to give the child as its stdout and stderr. */
  fd: number;
  /** Bytes written so far. */
  size(): number;
  /** Feeds every byte written, from the start, to `push` in order. */
  readAll(push: (chunk: Uint8Array) => void): void;
  /** Closes the descriptor and removes the folder; safe to call twice. */
  close(): void;
};

export function openOutputFile(): OutputFile {
  const dir = makeScratch("output");
  let fd: number;
  try {
    const path = join(dir, "output");
    fd = openSync(path, "w+", 0o600);
    // Where an open file cannot be deleted (Windows), the folder goes at close.
    try {
      rmSync(path, { force: true });
    } catch { /* removed with its folder at close */ }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let open = true;
  return {
    fd,
    size: () => fstatSync(fd).size,
    readAll(push) {
      const buffer = new Uint8Array(READ_CHUNK_BYTES);
      for (let position = 0;;) {
        const n = readSync(fd, buffer, 0, buffer.length, position);
        if (n <= 0) return;
        push(buffer.slice(0, n));
        position += n;
      }
    },
    close() {
      if (!open) return;
      open = false;
      try {
        closeSync(fd);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
