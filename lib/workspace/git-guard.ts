// Nothing the model leaves in the workspace makes git run a program later. git, run by the user in the workspace or
// any folder below it, looks for `.git` (a folder, or a `gitdir:` file naming one) in that folder and each one above,
// and treats a folder shaped like a repository (HEAD, objects/, refs/) as a bare one; the config it finds there can
// name programs (core.fsmonitor, core.pager, diff.external, aliases …) and its hooks/ are programs. So:
// - write_file and edit_file refuse any path with a component git reads as `.git` or `.gitmodules` (isGitPath);
// - after each test or command process, a `.git` or a repository-shaped folder that was not there at the start is
//   removed, and config and hooks of the git folders that were there are put back as they were (GitGuard.check).
// The sandbox also mounts the git folders found at the start read-only where it matters (sandbox.ts, gitGuardArgs).
import { Buffer } from "node:buffer";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  type Stats,
  writeFileSync,
} from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";

/**
 * Characters HFS+ ignores in names (git's is_hfs_dotgit): `.g\u200cit` is `.git` there. Removed before comparing.
 */
const IGNORED_IN_NAMES = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * The name git would read a path component as, for the names that configure it: `.git` (also `.GIT`, `.git.`,
 * `.git ` and NTFS's short `git~1`), `.gitmodules` (`gitmo~1`), or null for any other name.
 */
function gitName(component: string): ".git" | ".gitmodules" | null {
  const name = component.replace(IGNORED_IN_NAMES, "").toLowerCase().replace(/[. ]+$/, "");
  if (name === ".git" || name === "git~1") return ".git";
  if (name === ".gitmodules" || name === "gitmo~1") return ".gitmodules";
  return null;
}

/** Whether a workspace-relative path is or is inside a name git reads as `.git` or `.gitmodules`. */
export function isGitPath(path: string): boolean {
  return path.split(/[\\/]+/).some((part) => gitName(part) !== null);
}

/**
 * Whether writing the file at a workspace-relative path would make a folder on its way shaped like a repository
 * (git would then take it for a bare one, and run what its config names): the last of HEAD, objects/, refs/ (or
 * commondir) put into a folder that did not have them all.
 */
export function makesRepository(root: string, path: string): boolean {
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  for (let i = 0; i < parts.length; i++) {
    const folder = join(root, ...parts.slice(0, i));
    const names = new Set(safeReaddir(folder).map((entry) => entry.name));
    if (repositoryShaped(names)) continue; // already one: not made by this write (and guarded since the start)
    if (repositoryShaped(names.add(parts[i] ?? ""))) return true;
  }
  return false;
}

/** Names a folder holds that make git take it for a repository: HEAD and objects/ and refs/, or HEAD and commondir. */
function repositoryShaped(names: ReadonlySet<string>): boolean {
  return names.has("HEAD") && ((names.has("objects") && names.has("refs")) || names.has("commondir"));
}

/** Files in a git folder that name programs; hooks/ is compared entry by entry. */
const CONFIG_FILES = ["config", "config.worktree", "commondir"];

type Found = { kind: "d" | "f" | "l" | "o" };

/** Git folders at and inside `dir` (submodules' under modules/, worktrees' under worktrees/), a few levels deep. */
function innerGitDirs(dir: string, depth = 0): string[] {
  const out = [dir];
  if (depth > 4) return out;
  for (const sub of ["modules", "worktrees"]) {
    for (const entry of safeReaddir(join(dir, sub))) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, sub, entry.name);
      const names = new Set(safeReaddir(path).map((e) => e.name));
      if (names.has("HEAD") || names.has("config")) out.push(...innerGitDirs(path, depth + 1));
      else if (sub === "modules") out.push(...innerGitDirs(path, depth + 1).slice(1)); // modules/a/b nests by name
    }
  }
  return out;
}

function safeReaddir(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function readOrNull(path: string): Buffer | null {
  try {
    const info = lstatSync(path);
    return info.isFile() ? readFileSync(path) : Buffer.from(`\0${info.mode}`); // anything else differs from a file
  } catch {
    return null;
  }
}

/**
 * What the workspace's git entries were at the start, and the check after each process that undoes what changed.
 * `start()` records; `check()` removes new `.git` entries and repository-shaped folders, restores the recorded git
 * folders' config files and hooks, and returns the workspace-relative paths it acted on (empty: nothing to undo).
 */
export class GitGuard {
  readonly #root: string;
  /** The root, links resolved: what a path inside it resolves under. */
  readonly #realRoot: string;
  /** Git entries at the start: relative path → kind. */
  #entries = new Map<string, Found>();
  /** Config files and hooks of the git folders at the start (absolute path → bytes, null when absent). */
  #saved = new Map<string, Buffer | null>();
  #hookDirs: string[] = [];
  #gitDirs: string[] = [];
  #started = false;
  /** The last scan's folder listings, by relative path (see #scan). */
  #listings = new Map<string, Listing>();

  constructor(root: string) {
    this.#root = resolve(root);
    try {
      this.#realRoot = realpathSync(this.#root);
    } catch {
      this.#realRoot = this.#root;
    }
  }

  /** Absolute paths of the git folders (and `gitdir:` files) inside the workspace at the start, root's `.git` too. */
  get startingGitPaths(): readonly string[] {
    const entries = [...this.#entries].filter(([, found]) => found.kind === "d" || found.kind === "f");
    return [...new Set([...entries.map(([path]) => join(this.#root, path)), ...this.#gitDirs])];
  }

  get started(): boolean {
    return this.#started;
  }

  start(): void {
    this.#started = true;
    this.#entries = this.#scan();
    const dirs: string[] = [];
    for (const [path, found] of this.#entries) {
      const full = join(this.#root, path);
      if (found.kind === "d") dirs.push(...innerGitDirs(full));
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
      for (const entry of safeReaddir(hooks)) {
        this.#saved.set(join(hooks, entry.name), readOrNull(join(hooks, entry.name)));
      }
    }
  }

  /** Undoes what a process did to git's entries (see the class); the relative paths acted on, sorted. */
  check(): string[] {
    if (!this.#started) return [];
    const acted = new Set<string>();
    for (const [path, found] of this.#scan()) {
      const before = this.#entries.get(path);
      if (before !== undefined && before.kind === found.kind) continue;
      try {
        if (this.#reachable(join(this.#root, path))) rmSync(join(this.#root, path), { recursive: true, force: true });
      } catch {
        // a mount point (the sandbox's) or gone: reported all the same
      }
      acted.add(path);
    }
    for (const hooks of this.#hookDirs) {
      for (const entry of safeReaddir(hooks)) {
        const path = join(hooks, entry.name);
        if (this.#saved.has(path)) continue;
        if (this.#reachable(path)) rmSync(path, { recursive: true, force: true });
        acted.add(relative(this.#root, path));
      }
    }
    for (const [path, bytes] of this.#saved) {
      const now = readOrNull(path);
      if (now === null && bytes === null) continue;
      if (now !== null && bytes !== null && now.equals(bytes)) continue;
      try {
        if (!this.#reachable(path)) throw new Error("a link on the way"); // reported, never written through
        rmSync(path, { recursive: true, force: true });
        if (bytes !== null) {
          mkdirSync(join(path, ".."), { recursive: true });
          writeFileSync(path, bytes);
        }
      } catch {
        // read-only (the sandbox kept it) or unwritable: reported all the same
      }
      acted.add(relative(this.#root, path));
    }
    return [...acted].sort();
  }

  /**
   * Whether the folder holding `path` is where it was, links resolved: the path as written leads to itself inside
   * the workspace. A folder a process swapped for a link (to outside) is never removed from or written through.
   */
  #reachable(path: string): boolean {
    const parent = dirname(path);
    try {
      return realpathSync(parent) === resolve(this.#realRoot, relative(this.#root, parent));
    } catch {
      return false;
    }
  }

  /**
   * The git entries under the root: names git reads as `.git` (any kind: folder, file, link) and folders shaped like
   * a repository. Neither is entered; links are not followed. A folder whose stat (mtime, ctime, inode) is as the
   * last scan saw it holds the same names, so its listing is reused and only its subfolders are looked at: after a
   * command, one `lstat` per folder, and a listing only of the folders that changed (git's own untracked cache idea):
   * 10–47 ms for 100,000 files in 2,021 folders on a loaded 2-core machine, where the revision's walk takes 1.4–3.1 s.
   * A folder changed within a second of its listing is listed again next time (a change in the same tick).
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
        info = lstatSync(full);
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

/** What the scan keeps of one folder: its stat, its `.git` entries, its other subfolders, whether it is a repository. */
type Listing = {
  mtime: number;
  ctime: number;
  ino: number;
  racy: boolean;
  shaped: boolean;
  git: [name: string, kind: Found["kind"]][];
  folders: string[];
};

function listFolder(full: string, dir: string, info: Stats, started: number): Listing {
  const entries = safeReaddir(full);
  const names = new Set(entries.map((e) => e.name));
  const git: Listing["git"] = [];
  const folders: string[] = [];
  for (const entry of entries) {
    if (gitName(entry.name) === ".git") {
      git.push([entry.name, entry.isDirectory() ? "d" : entry.isFile() ? "f" : entry.isSymbolicLink() ? "l" : "o"]);
    } else if (entry.isDirectory()) folders.push(entry.name);
  }
  return {
    mtime: info.mtimeMs,
    ctime: info.ctimeMs,
    ino: info.ino,
    racy: Math.max(info.mtimeMs, info.ctimeMs) >= started - 1_000,
    shaped: dir !== "" && repositoryShaped(names),
    git,
    folders,
  };
}

/** Where a `gitdir:` file points (absolute), or undefined. */
function gitdirTarget(file: string): string | undefined {
  try {
    const match = /^gitdir: (.+)$/m.exec(readFileSync(file, "utf8"));
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
