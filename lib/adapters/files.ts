// File effects shared by the run lifecycle and the commands: the one atomic writer, append-only recordings, and the
// check that an output path can be written before anything runs.
import {
  accessSync,
  appendFileSync,
  constants,
  mkdirSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";

/**
 * Writes a file so that readers see either the old file or the whole new one, never half of it. Missing folders are
 * created unless `createFolders` is false.
 */
export function writeFileAtomic(
  path: string,
  content: string,
  { createFolders = true }: { createFolders?: boolean } = {},
): void {
  if (createFolders) mkdirSync(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(temp, content, { flag: "wx" });
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

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** Why Loom could not create `dir` (with its missing parents) and write into it, or null when it can. */
function folderProblem(dir: string): string | null {
  let existing = dir;
  let stat = statOrNull(existing);
  while (stat === null && dirname(existing) !== existing) {
    existing = dirname(existing);
    stat = statOrNull(existing);
  }
  if (stat === null) return `its folder ${JSON.stringify(dir)} cannot be created`;
  if (!stat.isDirectory()) return `its folder cannot be created: ${JSON.stringify(existing)} is not a directory`;
  try {
    accessSync(existing, constants.W_OK);
  } catch {
    return `${JSON.stringify(existing)} is not writable`;
  }
  return null;
}

/**
 * Why a file Loom is asked to write (a report, a recording) could not be written, or null when it can: the path is
 * not a directory, and its folder exists or can be created. Checked before a run starts, so no run is wasted on a
 * report that cannot land.
 */
export function outputPathProblem(path: string): string | null {
  if (statOrNull(path)?.isDirectory()) return "is a directory, not a file";
  return folderProblem(dirname(path));
}

/** Why a folder Loom is asked to write files into could not be used, or null when it can. */
export function outputFolderProblem(dir: string): string | null {
  const stat = statOrNull(dir);
  if (stat !== null && !stat.isDirectory()) return "is not a directory";
  return folderProblem(dir);
}
