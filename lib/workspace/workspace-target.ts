// A path an action names: resolved inside the workspace (a refusal when it leads out), required to exist as a file or
// a folder (a refusal naming the nearest paths that do), and a file's text read whole, within a cap, as strict UTF-8.
import { readEntry, statEntry, walkEntries } from "./workspace-files.ts";
import { resolveInside } from "./workspace-paths.ts";
import { nearestPaths } from "./refusal-hints.ts";
import { Refusal } from "./refusal.ts";

/** read_file and edit_file refuse larger files: the whole file is held in memory and in the result store. */
export const MAX_TEXT_FILE_BYTES = 16 * 1024 * 1024;

/** A path inside the workspace: as the model named it (`relative`), absolute, and real (links resolved). */
export type Target = { absolute: string; relative: string; real: string; root: string };

/** A target that exists, with its size and whether it is a folder. */
export type ExistingPath = { relative: string; real: string; root: string; size: number; isDirectory: boolean };

/** A path resolved inside the workspace (workspace-paths.ts); a refusal when it cannot be. */
export function resolveTarget(root: string, path: string): Target {
  const target = resolveInside(root, path);
  if (!target.ok) throw new Refusal(target.code, target.reason);
  return target;
}

/** A confined path that must exist and be a regular file, a directory, or either. */
export function existingTarget(
  root: string,
  path: string,
  { kind }: { kind: "file" | "directory" | "any" },
): ExistingPath {
  const target = resolveTarget(root, path);
  const info = statEntry(target.root, target.real);
  const quoted = JSON.stringify(target.relative);
  if (!info) {
    const near = nearestPaths(walkEntries(target.root, "."), target.relative);
    if (near.length === 0) throw new Refusal("not_found", `Path ${quoted} does not exist`);
    throw new Refusal("not_found", `Path ${quoted} does not exist; existing_paths names the nearest paths that do`, {
      existing_paths: near,
    });
  }
  if (kind === "directory" && !info.isDirectory()) {
    throw new Refusal("not_a_directory", `Path ${quoted} is not a directory`);
  }
  if (kind === "file" && !info.isFile()) throw new Refusal("not_a_file", `Path ${quoted} is not a regular file`);
  if (kind === "any" && !info.isFile() && !info.isDirectory()) {
    throw new Refusal("not_a_file", `Path ${quoted} is neither a regular file nor a directory`);
  }
  return { ...target, size: info.size, isDirectory: info.isDirectory() };
}

/** A regular file's text; refused when it is too large or not text, so the stored digest is that of its real bytes. */
export function readText(target: ExistingPath): string {
  const quoted = JSON.stringify(target.relative);
  const tooLarge = (size: number) =>
    new Refusal(
      "too_large",
      `File ${quoted} is ${size} bytes, over the ${MAX_TEXT_FILE_BYTES}-byte (16 MiB) cap; use search`,
    );
  if (target.size > MAX_TEXT_FILE_BYTES) throw tooLarge(target.size);
  const read = readEntry(target.root, target.real, { maxBytes: MAX_TEXT_FILE_BYTES });
  if ("tooLarge" in read) throw tooLarge(read.tooLarge); // grew since stat
  const { bytes } = read;
  if (bytes.includes(0)) throw new Refusal("not_text", `File ${quoted} is not text (it contains NUL bytes)`);
  const text = decodeUtf8(bytes);
  if (text === undefined) throw new Refusal("not_text", `File ${quoted} is not UTF-8 text`);
  return text;
}

/**
 * Strict UTF-8, BOM kept, or undefined: a replacement character would make the stored digest differ from the file's
 * bytes, and editing would corrupt the bytes it could not decode.
 */
function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
