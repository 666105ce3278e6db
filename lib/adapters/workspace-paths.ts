// Confinement: every path an action names must stay inside the workspace, symlinks included.
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep, win32 } from "node:path";

export type PathRefusalCode = "path_outside_workspace" | "invalid_path" | "not_found";

export type ResolvedPath =
  | {
    ok: true;
    /** The real location to operate on (symlinks resolved; for a new file, its real parent plus its name). */
    absolute: string;
    /** Workspace-relative, normalised, forward slashes; "." for the root. */
    relative: string;
    /** `absolute` relative to the real workspace root, forward slashes: symlink-free, so it can be walked pinned. */
    real: string;
    /** The real workspace root. */
    root: string;
  }
  | { ok: false; code: PathRefusalCode; reason: string };

// Matches the kernel's limit on symlink hops, so a loop ends instead of recursing forever.
const MAX_SYMLINK_HOPS = 40;

/** Resolves a workspace-relative path, refusing anything that is, or leads, outside the real workspace root. */
export function resolveInside(root: string, relPath: string): ResolvedPath {
  const quoted = JSON.stringify(relPath);
  if (relPath.includes("\0")) return refuse("invalid_path", `Path ${quoted} contains a NUL byte`);
  if (relPath.trim() === "") return refuse("invalid_path", "Path is empty; give a path relative to the workspace");
  if (isAbsolute(relPath) || win32.isAbsolute(relPath)) {
    return refuse("path_outside_workspace", `Path ${quoted} is absolute; give a path relative to the workspace`);
  }
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return refuse("not_found", `Workspace ${JSON.stringify(root)} does not exist`);
  }
  const lexical = resolve(realRoot, relPath);
  const rel = relative(realRoot, lexical);
  if (!isWithin(rel)) return refuse("path_outside_workspace", `Path ${quoted} leads outside the workspace`);

  let real: string;
  try {
    real = realpathLoose(lexical, 0);
  } catch (error) {
    const detail = (error as NodeJS.ErrnoException).code ?? "symlink loop";
    return refuse("path_outside_workspace", `Path ${quoted} cannot be resolved inside the workspace (${detail})`);
  }
  if (!isWithin(relative(realRoot, real))) {
    return refuse("path_outside_workspace", `Path ${quoted} leads outside the workspace through a symlink`);
  }
  return { ok: true, absolute: real, relative: toPosix(rel), real: toPosix(relative(realRoot, real)), root: realRoot };
}

/** Workspace-relative, forward-slash form of an absolute path under root ("." for root itself). */
export function toPosix(rel: string): string {
  if (rel === "") return ".";
  return sep === "/" ? rel : rel.split(sep).join("/");
}

export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set([".git", "node_modules"]);

/** Plain code-unit order: stable across locales and runtimes. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function refuse(code: PathRefusalCode, reason: string): ResolvedPath {
  return { ok: false, code, reason };
}

function isWithin(rel: string): boolean {
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * realpath for paths that may not exist yet: the real path of the deepest existing ancestor plus the rest. A dangling
 * symlink is followed to where it points, since writing through it would create its target.
 */
function realpathLoose(path: string, hops: number): string {
  if (hops > MAX_SYMLINK_HOPS) throw Object.assign(new Error("Too many symlinks"), { code: "ELOOP" });
  try {
    return realpathSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const realParent = realpathLoose(parent, hops);
  const candidate = join(realParent, basename(path));
  let isLink = false;
  try {
    isLink = lstatSync(candidate).isSymbolicLink();
  } catch {
    return candidate; // does not exist: the new entry will live here
  }
  if (!isLink) return candidate;
  return realpathLoose(resolve(realParent, readlinkSync(candidate)), hops + 1);
}

/**
 * The first argument that names a place outside the working directory: an absolute or home path (`/`, `~/x`, `C:\x`),
 * a relative path whose `..` segments climb above it (`..`, `../x`, `a b/../..`), the same glued to a short option
 * (`-t/x`, `-C..`) or after `=` (`--dir=/x`, `NAME=/x`), or, given the workspace root, an existing entry that leads
 * outside through a symlink. Still a guard, not a sandbox: a program can reach outside through its own defaults, a
 * shell or an environment variable — the OS sandbox (docs/sandbox.md) is what makes outside unreachable.
 */
export function outsidePathArgument(args: readonly string[], { root }: { root?: string } = {}): string | undefined {
  return args.find((arg) => {
    const candidates = [arg];
    // Text with whitespace may be a script (`PATH=/usr/bin:$PATH && make`): checked as a whole path only.
    const equals = arg.indexOf("=");
    if (equals !== -1 && !/\s/.test(arg)) candidates.push(arg.slice(equals + 1));
    const glued = /^--?[A-Za-z](\S+)$/.exec(arg);
    if (glued) candidates.push(glued[1]);
    return candidates.some((value) => leadsOutside(value) || (root !== undefined && linksOutside(root, value)));
  });
}

/** An existing workspace entry that resolves outside (a symlink, or a path through one). */
function linksOutside(root: string, value: string): boolean {
  if (value === "" || value.includes("\0")) return false;
  try {
    lstatSync(resolve(root, value));
  } catch {
    return false;
  }
  const resolved = resolveInside(root, value);
  return !resolved.ok && resolved.code === "path_outside_workspace";
}

function leadsOutside(arg: string): boolean {
  if (arg.startsWith("/") || arg.startsWith("\\") || arg.startsWith("~") || win32.isAbsolute(arg)) return true;
  let depth = 0;
  for (const segment of arg.split(/[\\/]/)) {
    if (segment === "..") depth--;
    else if (segment !== "" && segment !== ".") depth++;
    if (depth < 0) return true;
  }
  return false;
}
