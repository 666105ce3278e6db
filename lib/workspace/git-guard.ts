// Nothing the model leaves in the workspace makes git run a program later. git, run by the user in the workspace or
// any folder below it, looks for `.git` (a folder, or a `gitdir:` file naming one) in that folder and each one above,
// and treats a folder shaped like a repository (HEAD, objects/, refs/) as a bare one; the config it finds there can
// name programs (core.fsmonitor, core.pager, diff.external, aliases …) and its hooks/ are programs. So:
// - write_file and edit_file refuse any path with a component git reads as `.git` or `.gitmodules` (isGitPath);
// - after each test or command process, a `.git` or a repository-shaped folder that was not there at the start is
//   removed, and config and hooks of the git folders that were there are put back as they were (GitGuard.check).
// - the workspace root itself made repository-shaped (HEAD, objects/, refs/ put at the root) is undone by removing what
//   made it so; a root that was one at the start (a bare repository as the workspace) keeps its config and hooks;
// - `.loom` (Loom's own configuration, read from the workspace and every folder below it the user may run in) is
//   guarded the same way: write_file refuses it (isLoomPath), a new one is removed, a `.loom/config.jsonc` that was
//   there is put back as it was.
// Names are walked as bytes (byte-names.ts: `sub\377/.git` is found too); paths here are byte strings. A runtime that
// cannot reach such a name (Deno reads it as U+FFFD) reports it as planted all the same.
// The sandbox also mounts the git folders found at the start read-only where it matters (sandbox.ts, gitGuardArgs).
import { Buffer } from "node:buffer";
import { lstatSync, mkdirSync, readFileSync, realpathSync, rmSync, type Stats, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { bytes, fsPath, type Kind, listNames, shown } from "./byte-names.ts";

/**
 * Characters HFS+ ignores in names (git's is_hfs_dotgit): `.g\u200cit` is `.git` there. Removed before comparing.
 */
const IGNORED_IN_NAMES = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** A name as a case-insensitive file system (and Windows, trailing dots and spaces dropped) reads it. */
function foldName(component: string): string {
  return component.replace(IGNORED_IN_NAMES, "").toLowerCase().replace(/[. ]+$/, "");
}

/**
 * The name git would read a path component as, for the names that configure it: `.git` (also `.GIT`, `.git.`,
 * `.git ` and NTFS's short `git~1`), `.gitmodules` (`gitmo~1`), or null for any other name.
 */
function gitName(component: string): ".git" | ".gitmodules" | null {
  return gitNameFolded(foldName(component));
}

function gitNameFolded(name: string): ".git" | ".gitmodules" | null {
  if (name === ".git" || name === "git~1") return ".git";
  if (name === ".gitmodules" || name === "gitmo~1") return ".gitmodules";
  return null;
}

/** Whether a workspace-relative path is or is inside a name git reads as `.git` or `.gitmodules`. */
export function isGitPath(path: string): boolean {
  return path.split(/[\\/]+/).some((part) => gitName(part) !== null);
}

/** The folder Loom reads a project's configuration from (`.loom/config.jsonc`), in any spelling a file system folds. */
const LOOM_FOLDER = ".loom";
/** What Loom reads in a `.loom` folder; put back as it was after each process. */
const LOOM_FILES = ["config.jsonc"];

/**
 * Whether a workspace-relative path is or is inside `.loom` (`.LOOM`, `.loom.` …): Loom's own configuration, which the
 * user's next run in that folder or below reads. Not the model's to write.
 */
export function isLoomPath(path: string): boolean {
  return path.split(/[\\/]+/).some((part) => foldName(part) === LOOM_FOLDER);
}

/**
 * Whether writing the file at a workspace-relative path would make a folder on its way shaped like a repository
 * (git would then take it for a bare one, and run what its config names): the last of HEAD, objects/, refs/ (or
 * commondir) put into a folder that did not have them all.
 */
export function makesRepository(root: string, path: string): boolean {
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  for (let i = 0; i < parts.length; i++) {
    const folder = join(bytes(root), ...parts.slice(0, i).map(bytes));
    const names = new Set(listNames(folder).map((entry) => entry.name));
    if (repositoryShaped(names)) continue; // already one: not made by this write (and guarded since the start)
    if (repositoryShaped(names.add(parts[i] ?? ""))) return true;
  }
  return false;
}

/** The names that make a folder shaped like a repository. */
const SHAPE_NAMES = new Set(["HEAD", "objects", "refs", "commondir"]);

/** Names a folder holds that make git take it for a repository: HEAD and objects/ and refs/, or HEAD and commondir. */
function repositoryShaped(names: ReadonlySet<string>): boolean {
  return names.has("HEAD") && ((names.has("objects") && names.has("refs")) || names.has("commondir"));
}

/** Files in a git folder that name programs; hooks/ is compared entry by entry. */
const CONFIG_FILES = ["config", "config.worktree", "commondir"];

type Found = { kind: Kind };

/** Git folders at and inside `dir` (submodules' under modules/, worktrees' under worktrees/), a few levels deep. */
function innerGitDirs(dir: string, depth = 0): string[] {
  const out = [dir];
  if (depth > 4) return out;
  for (const sub of ["modules", "worktrees"]) {
    for (const entry of listNames(join(dir, sub))) {
      if (entry.kind !== "d") continue;
      const path = join(dir, sub, entry.name);
      const names = new Set(listNames(path).map((e) => e.name));
      if (names.has("HEAD") || names.has("config")) out.push(...innerGitDirs(path, depth + 1));
      else if (sub === "modules") out.push(...innerGitDirs(path, depth + 1).slice(1)); // modules/a/b nests by name
    }
  }
  return out;
}

function readOrNull(path: string): Buffer | null {
  try {
    const info = lstatSync(fsPath(path));
    return info.isFile() ? readFileSync(fsPath(path)) : Buffer.from(`\0${info.mode}`); // anything else differs from a file
  } catch {
    return null;
  }
}

/**
 * What the workspace's git entries were at the start, and the check after each process that undoes what changed.
 * `start()` records; `check()` removes new `.git` and `.loom` entries and repository-shaped folders (the root's
 * new shape names), restores the recorded git folders' config files and hooks and `.loom/config.jsonc`, and returns
 * the workspace-relative paths it acted on (empty: nothing to undo).
 */
export class GitGuard {
  /** The root, as a byte string. */
  readonly #root: string;
  /** The root, links resolved: what a path inside it resolves under. */
  readonly #realRoot: string;
  /** Git entries at the start: relative path → kind. */
  #entries = new Map<string, Found>();
  /** The root's names of SHAPE_NAMES at the start, with their kinds. */
  #rootShape = new Map<string, Kind>();
  /** Config files and hooks of the git folders at the start (absolute path → bytes, null when absent). */
  #saved = new Map<string, Buffer | null>();
  #hookDirs: string[] = [];
  #gitDirs: string[] = [];
  #started = false;
  /** The last scan's folder listings, by relative path (see #scan). */
  #listings = new Map<string, Listing>();

  constructor(root: string) {
    this.#root = bytes(resolve(root));
    try {
      this.#realRoot = bytes(realpathSync(resolve(root)));
    } catch {
      this.#realRoot = this.#root;
    }
  }

  /** Absolute paths of the git folders (and `gitdir:` files) inside the workspace at the start, root's `.git` too. */
  get startingGitPaths(): readonly string[] {
    const entries = [...this.#entries].filter(([path, found]) =>
      (found.kind === "d" || found.kind === "f") && !isLoomPath(shown(path))
    );
    const paths = [
      ...entries.map(([path]) => join(this.#root, path)),
      ...this.#gitDirs.filter((d) => d !== this.#root),
    ];
    // A path that is not UTF-8 cannot be named on bubblewrap's command line: guarded by check() alone.
    return [...new Set(paths)].filter((path) => typeof fsPath(path) === "string").map(shown);
  }

  get started(): boolean {
    return this.#started;
  }

  start(): void {
    this.#started = true;
    this.#entries = this.#scan();
    this.#rootShape = this.#rootShapeNow();
    const dirs: string[] = [];
    // A workspace that is itself a bare repository: its config and hooks are guarded like a .git folder's.
    if (repositoryShaped(new Set(this.#rootShape.keys()))) dirs.push(this.#root);
    for (const [path, found] of this.#entries) {
      const full = join(this.#root, path);
      if (isLoomPath(shown(path))) {
        if (found.kind === "d") {
          for (const name of LOOM_FILES) this.#saved.set(join(full, name), readOrNull(join(full, name)));
        }
      } else if (found.kind === "d") dirs.push(...innerGitDirs(full));
      else if (found.kind === "f") {
        const target = gitdirTarget(full);
        if (target !== undefined && isInside(this.#root, target)) dirs.push(...innerGitDirs(target));
      }
    }
    this.#gitDirs = [...new Set(dirs)];
    for (const dir of this.#gitDirs) {
      for (const name of CONFIG_FILES) this.#saved.set(join(dir, name), readOrNull(join(dir, name)));
      const hooks = join(dir, "hooks");
      this.#hookDirs.push(hooks);
      for (const entry of listNames(hooks)) {
        this.#saved.set(join(hooks, entry.name), readOrNull(join(hooks, entry.name)));
      }
    }
  }

  /** Undoes what a process did to git's entries (see the class); the relative paths acted on, sorted. */
  check(): string[] {
    if (!this.#started) return [];
    const acted = new Set<string>();
    const remove = (path: string) => {
      try {
        if (this.#reachable(path)) rmSync(fsPath(path), { recursive: true, force: true });
      } catch {
        // a mount point (the sandbox's), gone, or not reachable by its name: reported all the same
      }
      acted.add(relative(this.#root, path));
    };
    for (const [path, found] of this.#scan()) {
      const before = this.#entries.get(path);
      if (before !== undefined && before.kind === found.kind) continue;
      remove(join(this.#root, path));
    }
    // The root made a repository: what made it one goes (what was there at the start stays, and is not one).
    const shape = this.#rootShapeNow();
    if (!repositoryShaped(new Set(this.#rootShape.keys())) && repositoryShaped(new Set(shape.keys()))) {
      for (const [name, kind] of shape) if (this.#rootShape.get(name) !== kind) remove(join(this.#root, name));
    }
    for (const hooks of this.#hookDirs) {
      for (const entry of listNames(hooks)) {
        const path = join(hooks, entry.name);
        if (this.#saved.has(path)) continue;
        remove(path);
      }
    }
    for (const [path, bytes] of this.#saved) {
      const now = readOrNull(path);
      if (now === null && bytes === null) continue;
      if (now !== null && bytes !== null && now.equals(bytes)) continue;
      try {
        if (!this.#reachable(path)) throw new Error("a link on the way"); // reported, never written through
        rmSync(fsPath(path), { recursive: true, force: true });
        if (bytes !== null) {
          mkdirSync(fsPath(join(path, "..")), { recursive: true });
          writeFileSync(fsPath(path), bytes);
        }
      } catch {
        // read-only (the sandbox kept it) or unwritable: reported all the same
      }
      acted.add(relative(this.#root, path));
    }
    return [...acted].map(shown).sort();
  }

  /** The root's names of SHAPE_NAMES now, with their kinds (from the last scan's listing of the root). */
  #rootShapeNow(): Map<string, Kind> {
    return new Map(this.#listings.get("")?.shape ?? []);
  }

  /**
   * Whether the folder holding `path` is where it was, links resolved: the path as written leads to itself inside
   * the workspace. A folder a process swapped for a link (to outside) is never removed from or written through.
   */
  #reachable(path: string): boolean {
    const parent = dirname(path);
    try {
      const real = realpathSync(fsPath(parent), { encoding: "buffer" }).toString("latin1");
      return real === resolve(this.#realRoot, relative(this.#root, parent));
    } catch {
      return false;
    }
  }

  /**
   * The git entries under the root: names git reads as `.git` (any kind: folder, file, link), `.loom` and folders
   * shaped like a repository. None is entered; links are not followed. A folder whose stat (mtime, ctime, inode) is
   * as the last scan saw it holds the same names, so its listing is reused and only its subfolders are looked at:
   * after a command, one `lstat` per folder, and a listing only of the folders that changed (git's own untracked
   * cache idea): 10–47 ms for 100,000 files in 2,021 folders on a loaded 2-core machine, where the revision's walk
   * takes 1.4–3.1 s. A folder changed within a second of its listing is listed again next time (a change in the same
   * tick).
   */
  #scan(): Map<string, Found> {
    const found = new Map<string, Found>();
    const next = new Map<string, Listing>();
    const started = Date.now();
    const stack: string[] = [""];
    for (let dir = stack.pop(); dir !== undefined; dir = stack.pop()) {
      const full = dir === "" ? this.#root : join(this.#root, dir);
      let info;
      try {
        info = lstatSync(fsPath(full));
      } catch {
        continue; // gone
      }
      if (!info.isDirectory()) continue;
      const cached = this.#listings.get(dir);
      const listing = cached !== undefined && !cached.racy && cached.mtime === info.mtimeMs &&
          cached.ctime === info.ctimeMs && cached.ino === info.ino
        ? cached
        : listFolder(full, dir, info, started);
      next.set(dir, listing);
      if (listing.shaped) {
        found.set(dir, { kind: "d" });
        continue;
      }
      for (const [name, kind] of listing.git) found.set(dir === "" ? name : `${dir}/${name}`, { kind });
      for (const name of listing.folders) stack.push(dir === "" ? name : `${dir}/${name}`);
    }
    this.#listings = next;
    return found;
  }
}

/**
 * What the scan keeps of one folder: its stat, its `.git` and `.loom` entries (and those it cannot reach), its other
 * subfolders, whether it is a repository, its names of SHAPE_NAMES (byte-string names throughout).
 */
type Listing = {
  mtime: number;
  ctime: number;
  ino: number;
  racy: boolean;
  shaped: boolean;
  git: [name: string, kind: Kind][];
  folders: string[];
  shape: [name: string, kind: Kind][];
};

function listFolder(full: string, dir: string, info: Stats, started: number): Listing {
  const entries = listNames(full);
  const names = new Set(entries.map((e) => e.name));
  const git: Listing["git"] = [];
  const folders: string[] = [];
  for (const { name, kind } of entries) {
    const folded = foldName(shown(name));
    if (gitNameFolded(folded) === ".git" || folded === LOOM_FOLDER || kind === "?") git.push([name, kind]);
    else if (kind === "d") folders.push(name);
  }
  return {
    mtime: info.mtimeMs,
    ctime: info.ctimeMs,
    ino: info.ino,
    racy: Math.max(info.mtimeMs, info.ctimeMs) >= started - 1_000,
    shaped: dir !== "" && repositoryShaped(names),
    git,
    folders,
    shape: entries.filter((e) => SHAPE_NAMES.has(e.name)).map((e) => [e.name, e.kind]),
  };
}

/** Where a `gitdir:` file points (absolute, a byte string), or undefined. */
function gitdirTarget(file: string): string | undefined {
  try {
    const match = /^gitdir: (.+)$/m.exec(readFileSync(fsPath(file)).toString("latin1"));
    const dir = match?.[1]?.trim();
    if (!dir) return undefined;
    return isAbsolute(dir) ? dir : resolve(file, "..", dir);
  } catch {
    return undefined;
  }
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}
