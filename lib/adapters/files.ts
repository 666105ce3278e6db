// File effects shared by commands: atomic writes and append-only recordings.
import { appendFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** Writes a file so that readers see either the old file or the whole new one, never half of it. */
export function writeFileAtomic(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  try {
    writeFileSync(temp, content);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** A JSONL sink: truncates the file, then appends one line per call (a crash leaves every whole line readable). */
export function openLineSink(path: string): (line: string) => void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "");
  return (line) => appendFileSync(path, line);
}
