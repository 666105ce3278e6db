// The files one command writes, checked together before anything runs (issue 43): two outputs naming one file would
// leave one of them (a 0-byte report, a lost recording), an output naming an input would destroy it, and an output
// naming an existing file of the workspace that Loom did not write would overwrite the user's source.
import { closeSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { UsageError } from "../lib/errors.ts";

/** What Loom writes to an output: told from a file's first bytes when the file already exists. */
export type OutputKind = "report" | "recording" | "trace" | "diff" | "html";

/** One file a command writes (an absolute path) or reads, by the flag or argument that named it. */
export type NamedPath = { flag: string; path: string; kind?: OutputKind };

/**
 * A file's identity: the device and inode of an existing file (links and hard links name one file), else the real
 * path of its deepest existing folder joined with the rest (so `./x`, `x` and `link-to-dir/x` agree).
 */
function fileIdentity(path: string): string {
  const absolute = resolve(path);
  try {
    const stat = statSync(absolute);
    return `inode ${stat.dev}:${stat.ino}`;
  } catch {
    return `path ${realPathOf(absolute)}`;
  }
}

/** The real path of `path`: links resolved along its deepest existing folder, the missing rest appended. */
export function realPathOf(path: string): string {
  const absolute = resolve(path);
  const missing: string[] = [];
  let at = absolute;
  for (;;) {
    try {
      return join(realpathSync(at), ...missing.reverse());
    } catch {
      const parent = dirname(at);
      if (parent === at) return absolute;
      missing.push(basename(at));
      at = parent;
    }
  }
}

/**
 * Refuses, in one line, two outputs naming one file, and an output naming a file the command reads. Outputs that are
 * undefined were not asked for.
 */
export function refuseCollisions(
  outputs: readonly (NamedPath | undefined)[],
  { inputs = [] }: { inputs?: readonly (NamedPath | undefined)[] } = {},
): void {
  const seen = new Map<string, NamedPath>();
  for (const input of inputs) if (input) seen.set(fileIdentity(input.path), input);
  for (const output of outputs) {
    if (!output) continue;
    const identity = fileIdentity(output.path);
    const earlier = seen.get(identity);
    if (earlier) {
      const [first, second] = [describe(earlier), describe(output)];
      const isInput = inputs.includes(earlier);
      throw new UsageError(
        isInput
          ? `${second} is ${first}, which Loom reads: writing it would destroy it; name another file`
          : `${first} and ${second} name one file: one output would overwrite the other; give each its own file`,
      );
    }
    seen.set(identity, output);
  }
}

/**
 * Refuses an output naming an existing file inside `workspace` that is not one Loom writes (by its first bytes): a
 * source file of the user's, which the output would overwrite.
 */
export function refuseWorkspaceFiles(
  outputs: readonly (NamedPath | undefined)[],
  { workspaces }: { workspaces: readonly string[] },
): void {
  const roots = workspaces.map(realPathOf);
  for (const output of outputs) {
    if (!output?.kind) continue;
    let isFile = false;
    try {
      isFile = statSync(output.path).isFile();
    } catch {
      continue; // a new file: nothing of the user's is there
    }
    if (!isFile) continue;
    const real = realPathOf(output.path);
    const root = roots.find((r) => real === r || real.startsWith(r.endsWith(sep) ? r : r + sep));
    if (root === undefined || looksWritten(output.path, output.kind)) continue;
    throw new UsageError(
      `${describe(output)} is an existing file of the workspace (${JSON.stringify(relative(root, real))}) that Loom ` +
        `did not write: it would be overwritten; name a new file or one outside the workspace`,
    );
  }
}

function describe({ flag, path }: NamedPath): string {
  return `${flag} ${JSON.stringify(path)}`;
}

/** Whether an existing file holds what Loom writes for `kind` (so writing it again loses nothing of the user's). */
function looksWritten(path: string, kind: OutputKind): boolean {
  const head = firstBytes(path, 512);
  switch (kind) {
    case "report":
      return /^\{\s*"schema_version"/.test(head);
    case "recording":
      return head.startsWith("{") && head.split("\n")[0]!.includes('"loom-recording"');
    case "trace":
      return head.startsWith('{"trace_version"');
    case "diff":
      // An empty file is Loom's only as a patch's name says (an empty source file is the user's too).
      return head.startsWith("diff --git ") || (head === "" && /\.(diff|patch)$/.test(path));
    case "html":
      return head.startsWith("<!doctype html>");
  }
}

function firstBytes(path: string, size: number): string {
  let fd: number | null = null;
  try {
    fd = openSync(path, "r");
    const buffer = new Uint8Array(size);
    const read = readSync(fd, buffer, 0, size, 0);
    return new TextDecoder().decode(buffer.subarray(0, read));
  } catch {
    return "";
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * Refuses an output folder that is, or lies inside, one of `folders` (an evaluation's task workspaces, checks and
 * solutions): what Loom writes there would change the files it evaluates.
 */
export function refuseFolderInside(
  output: NamedPath,
  folders: readonly { what: string; path: string }[],
): void {
  const real = realPathOf(output.path);
  for (const folder of folders) {
    const root = realPathOf(folder.path);
    if (real === root || real.startsWith(root.endsWith(sep) ? root : root + sep)) {
      throw new UsageError(
        `${describe(output)} lies inside ${folder.what} ${JSON.stringify(folder.path)}: Loom's files would change ` +
          `what it evaluates; choose a folder outside it`,
      );
    }
  }
}
