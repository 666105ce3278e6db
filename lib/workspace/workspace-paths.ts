// Confinement: every path an action names must stay inside the workspace, symlinks included.
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { errorCode } from "../errors.ts";
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
    const detail = errorCode(error) ?? "symlink loop";
    return refuse("path_outside_workspace", `Path ${quoted} cannot be resolved inside the workspace (${detail})`);
  }
  if (!isWithin(relative(realRoot, real))) {
    return refuse("path_outside_workspace", `Path ${quoted} leads outside the workspace through a symlink`);
  }
  return { ok: true, absolute: real, relative: toPosix(rel), real: toPosix(relative(realRoot, real)), root: realRoot };
}

/** Workspace-relative, forward-slash form of an absolute path under root ("." for root itself). */
function toPosix(rel: string): string {
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
    const code = errorCode(error);
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
 * a relative path whose `..` segments climb above it (`..`, `../x`, `a b/../..`), the same glued to any letter of a
 * cluster of short options (`-t/x`, `-vt/x`, `-cvf/x`, `-C..`) or after `=` (`--dir=/x`, `NAME=/x`), each of these in
 * every whitespace-separated word of an argument with spaces (a script: `cat /etc/x`), or, given the workspace root,
 * an existing entry that leads outside through a symlink. Still a guard, not a sandbox: a program can reach outside
 * through its own defaults, a shell or an environment variable — the OS sandbox (docs/sandbox.md) is what makes
 * outside unreachable.
 */
export function outsidePathArgument(args: readonly string[], { root }: { root?: string } = {}): string | undefined {
  return args.find((arg) => {
    const words = /\s/.test(arg) ? [arg, ...arg.split(/\s+/).filter((word) => word !== "")] : [arg];
    return words.some((word) => {
      const candidates = [word];
      const equals = word.indexOf("=");
      if (equals !== -1) candidates.push(word.slice(equals + 1));
      // A cluster of short options (-cvf/x): what follows any of its letters may be that option's value.
      const cluster = /^-([A-Za-z][^-]\S*)$/.exec(word) ?? /^--?[A-Za-z](\S+)$/.exec(word);
      if (cluster) {
        const letters = word.slice(1);
        for (let i = 1; i <= letters.length; i++) candidates.push(letters.slice(i));
      }
      return candidates.some((value) =>
        value !== "" && (leadsOutside(value) || (root !== undefined && linksOutside(root, value)))
      );
    });
  });
}

/**
 * Why an argv runs something the path guard cannot see, or undefined: a sed script with a command that writes (`w`,
 * `W`, the `w` flag of `s`), reads (`r`, `R`) or executes (`e`, the `e` flag of `s`) — or one given in a file; git
 * told to take configuration (`-c`, `--config-env`, `config`) or programs (`--exec-path`, `--upload-pack`) from the
 * command line, which can make it run anything.
 */
export function unsafeProgramArgument(argv: readonly string[]): string | undefined {
  const program = (argv[0] ?? "").split(/[\\/]/).pop() ?? "";
  const args = argv.slice(1);
  if (program === "sed" || program === "gsed") return unsafeSed(args);
  if (program === "git") {
    const bad = args.find((arg) =>
      arg === "-c" || /^-c./.test(arg) || arg === "config" ||
      /^--(config-env|exec-path|upload-pack|receive-pack)/.test(arg)
    );
    return bad === undefined ? undefined : `git ${JSON.stringify(bad)} can make git run any program`;
  }
  return undefined;
}

function unsafeSed(args: readonly string[]): string | undefined {
  const scripts: string[] = [];
  let sawScript = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === undefined) continue; // i < length: it is there
    if (arg === "-f" || arg.startsWith("--file") || (/^-[a-zA-Z]*f/.test(arg) && !arg.startsWith("--"))) {
      return "sed scripts from a file are not checked; give the script as an argument";
    }
    if (arg === "-e" || arg === "--expression") {
      scripts.push(args[++i] ?? "");
      sawScript = true;
    } else if (arg.startsWith("--expression=")) {
      scripts.push(arg.slice("--expression=".length));
      sawScript = true;
    } else if (/^-[a-zA-Z]*e./.test(arg) && !arg.startsWith("--")) {
      scripts.push(arg.slice(arg.indexOf("e") + 1));
      sawScript = true;
    } else if (!arg.startsWith("-") && !sawScript) {
      scripts.push(arg);
      sawScript = true;
    }
  }
  for (const script of scripts) {
    const command = sedDangerousCommand(script);
    if (command) return `sed command ${JSON.stringify(command)} reads, writes or runs files the guard cannot check`;
  }
  return undefined;
}

/**
 * The first sed command in `script` that reads (r, R), writes (w, W) or executes (e), or an `s` with a `w` or `e` flag;
 * anything this reader cannot follow counts as dangerous (it is a guard: refusing a harmless script is the safe error).
 */
function sedDangerousCommand(script: string): string | undefined {
  let i = 0;
  const n = script.length;
  const skipSpace = () => {
    while (i < n && /[\s;]/.test(script.charAt(i))) i++;
  };
  const readRegex = (delimiter: string): boolean => {
    i++;
    while (i < n && script[i] !== delimiter) {
      if (script[i] === "\\") i++;
      if (script[i] === "\n") return false;
      i++;
    }
    if (i >= n) return false;
    i++;
    return true;
  };
  const readAddress = (): boolean => {
    if (script[i] === "$") i++;
    else if (/\d/.test(script[i] ?? "")) { while (/[\d~]/.test(script[i] ?? "")) i++; }
    else if (script[i] === "/") {
      if (!readRegex("/")) return false;
    } else if (script[i] === "\\") {
      i++;
      if (!readRegex(script[i] ?? "")) return false;
    }
    while (script[i] === "I" || script[i] === "M") i++;
    return true;
  };
  while (i < n) {
    skipSpace();
    if (i >= n) break;
    if (!readAddress()) return script;
    if (script[i] === ",") {
      i++;
      if (script[i] === "+" || script[i] === "~") i++;
      if (!readAddress()) return script;
    }
    while (script[i] === " " || script[i] === "!") i++;
    const command = script[i];
    if (command === undefined) break;
    if ("rRwWe".includes(command)) return command;
    if (command === "{" || command === "}") {
      i++;
      continue;
    }
    if (command === "#" || ":btTvlqQ".includes(command) || "aic".includes(command)) {
      // Labels, branches, comments and text run to the end of the line.
      while (i < n && script[i] !== "\n") i++;
      continue;
    }
    if (command === "s" || command === "y") {
      const delimiter = script[i + 1];
      if (delimiter === undefined || delimiter === "\n" || delimiter === "\\") return script;
      i++;
      if (!readRegex(delimiter)) return script;
      i--;
      if (!readRegex(delimiter)) return script;
      if (command === "s") {
        while (i < n && /[gpIiMm0-9we]/.test(script.charAt(i))) {
          if (script[i] === "w" || script[i] === "e") return `s…${script[i]}`;
          i++;
        }
      }
      continue;
    }
    if ("dDgGhHlnNpPxz=F".includes(command)) {
      i++;
      continue;
    }
    return script; // a command this reader does not know
  }
  return undefined;
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
