// The OS sandbox test and command processes run in (bubblewrap on Linux): only the workspace (read-write) and the
// toolchain (read-only) exist, in their own PID namespace with a fresh /proc, without network unless the slice asks,
// and everything they start dies with them. See docs/sandbox.md for what each mode guarantees per platform.
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { SandboxMode } from "../sandbox-state.ts";

export type { SandboxMode };

const STRENGTH: Record<SandboxMode, number> = { off: 0, auto: 1, required: 2 };

/**
 * The mode a run uses: the floor (the command line, else LOOM_SANDBOX, else auto) raised by what the data asks
 * (a request's, catalog's or recording's `sandbox.mode`), never lowered by it.
 */
export function effectiveMode(floor: SandboxMode, asked: SandboxMode | undefined): SandboxMode {
  return asked !== undefined && STRENGTH[asked] > STRENGTH[floor] ? asked : floor;
}

/** What one slice lets its processes see, on top of the workspace. */
export type SandboxPolicy = {
  /** Network inside the sandbox (default off). */
  network?: boolean;
  /** Absolute host paths mounted read-only at the same place (toolchains outside /usr, e.g. ~/.pyenv). */
  readOnly?: readonly string[];
  /**
   * Folders Loom itself prepared for this process (an evaluation's hidden check, copied fresh beside the workspace
   * copy), mounted read-only as they are. Never taken from a request, catalog or recording: those go through
   * `readOnly` and its limits.
   */
  loomReadOnly?: readonly string[];
};

/** Variables every child gets when set on the host; everything else must be named by the slice. */
const BASE_ENV_NAMES: readonly string[] = ["PATH", "LANG", "LANGUAGE", "TZ", "TERM", "NO_COLOR"];
const LOCALE_VARIABLE = /^LC_[A-Z_]+$/;

/** HOME inside the sandbox: an empty, private directory on a fresh tmpfs. */
const SANDBOX_HOME = "/tmp/home";

/**
 * The environment of a test or command process, built from an allow-list: PATH, the locale, TZ, TERM, NO_COLOR, and
 * the variables the slice names. HOME (and TMPDIR) are the sandbox's own when sandboxed, the host's otherwise.
 */
export function childEnv(
  env: Record<string, string | undefined>,
  { pass = [], sandboxed }: { pass?: readonly string[]; sandboxed: boolean },
): Record<string, string> {
  const out: Record<string, string> = {};
  const wanted = new Set([...BASE_ENV_NAMES, ...pass]);
  if (!sandboxed) wanted.add("HOME").add("TMPDIR").add("SYSTEMROOT");
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (wanted.has(name) || LOCALE_VARIABLE.test(name))) out[name] = value;
  }
  if (sandboxed) {
    out.HOME = SANDBOX_HOME;
    out.TMPDIR = "/tmp";
  }
  return out;
}

export type Bubblewrap = {
  path: string; /** --size for the /tmp tmpfs is understood (bubblewrap 0.7+). */
  sizedTmp?: boolean;
};

/** Where bubblewrap is looked for, in order: fixed system locations, never PATH (a workspace could supply one). */
const TRUSTED_BWRAP_PATHS: readonly string[] = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

let probed: { key: string; found: Bubblewrap | null; reason: string } | undefined;

/**
 * bubblewrap when it is installed at a trusted place and can create namespaces here (it cannot in some containers),
 * else why not. The program is taken from a fixed system location (root-owned, not writable by anyone else), or
 * from LOOM_BWRAP when that is an absolute path held to the same rules; PATH is never searched. Probed once per process and setting.
 */
export function findBubblewrap(
  env: Record<string, string | undefined> = process.env,
): { found: Bubblewrap } | { found: null; reason: string } {
  if (process.platform !== "linux") {
    return { found: null, reason: `no OS sandbox is supported on ${process.platform} yet` };
  }
  const key = env.LOOM_BWRAP ?? "";
  if (probed?.key !== key) probed = { key, ...probe(env.LOOM_BWRAP) };
  return probed.found ? { found: probed.found } : { found: null, reason: probed.reason };
}

/** Why a program file cannot be trusted to be the system's (owned by root, writable by no one else), or null. */
function untrustedProgram(path: string): string | null {
  let info;
  try {
    info = statSync(path);
  } catch {
    return "does not exist";
  }
  if (!info.isFile() || (info.mode & 0o111) === 0) return "is not an executable file";
  for (let at = path;; at = dirname(at)) {
    const owner = statSync(at);
    if (owner.uid !== 0) return `${JSON.stringify(at)} is not owned by root`;
    if ((owner.mode & 0o022) !== 0 && !(owner.isDirectory() && (owner.mode & 0o1000) !== 0 && at !== path)) {
      return `${JSON.stringify(at)} is writable by others than root`;
    }
    if (dirname(at) === at) return null;
  }
}

function probe(override: string | undefined): { found: Bubblewrap | null; reason: string } {
  let path: string;
  if (override !== undefined && override !== "") {
    if (!isAbsolute(override)) {
      return { found: null, reason: `LOOM_BWRAP ${JSON.stringify(override)} is not an absolute path` };
    }
    if (!existsSync(override)) return { found: null, reason: `LOOM_BWRAP ${JSON.stringify(override)} does not exist` };
    // The same rules as the fixed locations, for the path as given (each folder on it, so no link on the way can be
    // swapped) and for the file it leads to: a LOOM_BWRAP that a project or the model could write is not a sandbox.
    const problem = untrustedProgram(override) ?? untrustedProgram(realpathOr(override));
    if (problem !== null) {
      return { found: null, reason: `LOOM_BWRAP ${JSON.stringify(override)} is not trusted: ${problem}` };
    }
    path = override;
  } else {
    const problems: string[] = [];
    const trusted = TRUSTED_BWRAP_PATHS.find((candidate) => {
      if (!existsSync(candidate)) return false;
      const problem = untrustedProgram(realpathOr(candidate));
      if (problem) problems.push(`${candidate}: ${problem}`);
      return problem === null;
    });
    if (!trusted) {
      const why = problems.length > 0 ? ` (${problems.join("; ")})` : "";
      return {
        found: null,
        reason: `bubblewrap (bwrap) is not installed at ${TRUSTED_BWRAP_PATHS.join(", ")}${why}`,
      };
    }
    path = trusted;
  }
  let detail = "";
  for (const sizedTmp of [true, false]) {
    const trial = spawnSync(
      path,
      [...mountArgs({ root: "/tmp", policy: {}, programDirs: [], sizedTmp }), "--", "true"],
      {
        stdio: ["ignore", "ignore", "pipe"],
        timeout: 10_000,
        env: {},
      },
    );
    if (trial.status === 0) return { found: { path, sizedTmp }, reason: "" };
    detail ||= trial.stderr?.toString().trim().split("\n")[0] || trial.error?.message || `exit ${trial.status}`;
  }
  return { found: null, reason: `bubblewrap cannot create a sandbox here (${detail})` };
}

/** argv that runs `argv` in the sandbox, in `root` (the real workspace path, mounted read-write at the same place). */
export function sandboxedArgv(
  bwrap: Bubblewrap,
  { argv, root, env, policy, gitPaths = [] }: {
    argv: readonly string[];
    /** The child's environment: only its PATH is read here; bubblewrap is spawned with it as its own. */
    root: string;
    env: Record<string, string>;
    policy: SandboxPolicy;
    /** Git folders and `gitdir:` files inside the workspace besides its own `.git`, guarded like it (gitGuardArgs). */
    gitPaths?: readonly string[];
  },
): [program: string, ...args: string[]] {
  const program = argv[0] ?? "";
  const found = isAbsolute(program)
    ? program
    : program.includes("/")
    ? undefined
    : whichProgram(program, env.PATH ?? "");
  // The program's directory and its real one (node_modules/.bin links into the package). Not every PATH directory: a
  // half-mounted toolchain (pyenv's shims without pyenv) is worse than none, since PATH then finds the system's.
  const programDirs = found ? [dirname(found), dirname(realpathOr(found))] : [];
  // No --setenv: the child's environment is bubblewrap's own (see spawnEnv), so no value is ever on an argument list
  // that `ps` shows to every user.
  return [bwrap.path, ...mountArgs({ root, policy, programDirs, sizedTmp: bwrap.sizedTmp, gitPaths }), "--", ...argv];
}

// Read-only system locations a toolchain needs; /etc only in part (never shadow files, keys or host configuration).
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const ETC_ENTRIES = [
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "ssl",
  "ca-certificates",
  "ca-certificates.conf",
  "resolv.conf",
  "hosts",
  "nsswitch.conf",
  "passwd",
  "group",
  "os-release",
  "mime.types",
].map((name) => `/etc/${name}`);

/** The sandbox's /tmp: a tmpfs of this size (the kernel's default is half the machine's memory). */
const SANDBOX_TMP_BYTES = 512 * 1024 * 1024;

function mountArgs(
  { root, policy, programDirs, sizedTmp = false, gitPaths = [] }: {
    root: string;
    policy: SandboxPolicy;
    programDirs: readonly string[];
    sizedTmp?: boolean;
    gitPaths?: readonly string[];
  },
): string[] {
  const args = [
    "--unshare-all",
    ...(policy.network ? ["--share-net"] : []),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
  ];
  for (const dir of SYSTEM_DIRS) {
    const link = symlinkTarget(dir);
    if (link !== undefined) args.push("--symlink", link, dir);
    else if (existsSync(dir)) args.push("--ro-bind", dir, dir);
  }
  for (const entry of ETC_ENTRIES) if (existsSync(entry)) args.push("--ro-bind", entry, entry);
  args.push("--proc", "/proc", "--dev", "/dev");
  if (sizedTmp) args.push("--size", String(SANDBOX_TMP_BYTES));
  args.push("--tmpfs", "/tmp", "--dir", SANDBOX_HOME);
  const extra = [...programDirs, ...(policy.readOnly ?? [])].filter((p) =>
    isAbsolute(p) && !underSystem(p) && readOnlyProblem(p, { workspace: root }) === null
  );
  for (const path of new Set(extra)) args.push("--ro-bind-try", path, path);
  for (const path of policy.loomReadOnly ?? []) args.push("--ro-bind", path, path);
  args.push("--bind", root, root);
  for (const path of new Set([join(root, ".git"), ...gitPaths])) args.push(...gitGuardArgs(path));
  args.push("--chdir", root);
  return args;
}

/**
 * The files of a git folder in the workspace that make git run programs (`config`: fsmonitor, diff.external,
 * hooksPath, aliases; `hooks/`), mounted read-only over the workspace. The folder itself is bound onto itself first,
 * which makes it a mount point: it cannot be renamed or removed, so a fresh `config` cannot be put in its place. For
 * the workspace's `.git` and every git folder or `gitdir:` file found inside it at the run's start (git-guard.ts); a
 * new one a process makes is removed after it.
 */
function gitGuardArgs(dotGit: string): string[] {
  const info = lstatSync(dotGit, { throwIfNoEntry: false });
  if (!info) return [];
  if (!info.isDirectory()) return ["--ro-bind", dotGit, dotGit]; // a `gitdir:` file: where the repository is
  const args = ["--bind", dotGit, dotGit];
  for (const name of ["config", "hooks", "info", "commondir", "config.worktree"]) {
    const path = join(dotGit, name);
    const entry = lstatSync(path, { throwIfNoEntry: false });
    if (entry && !entry.isSymbolicLink()) args.push("--ro-bind", path, path);
    // No hooks folder: an empty read-only one takes its place, so none can be created (bubblewrap makes the folder).
    else if (!entry && name === "hooks") args.push("--tmpfs", path, "--remount-ro", path);
  }
  return args;
}

/** Folders never mounted from `sandbox.read_only`: the system's own views and secrets. */
const FORBIDDEN_MOUNTS = ["/proc", "/sys", "/dev", "/etc", "/root", "/run", "/var/run", "/boot", "/tmp"];

/**
 * Why a `sandbox.read_only` path may not be mounted, or null: it must be absolute, exist, and (links resolved) not
 * be `/`, `/proc`, `/sys`, `/dev`, `/etc`, `/root`, `/run`, `/boot` or `/tmp` or inside them, nor the home folder or
 * one of its ancestors, nor an ancestor of the workspace (which would show what lies beside it).
 */
export function readOnlyProblem(
  path: string,
  { workspace, home = homedir() }: { workspace: string; home?: string },
): string | null {
  if (!isAbsolute(path)) return "is not an absolute path";
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return "does not exist";
  }
  const shown = real === path ? "" : ` (${JSON.stringify(real)})`;
  if (real === sep || real === "/") return `is the root of the file system${shown}`;
  const forbidden = FORBIDDEN_MOUNTS.find((dir) => real === dir || real.startsWith(`${dir}/`));
  if (forbidden) return `is ${real === forbidden ? "" : "inside "}${forbidden}${shown}, which is never mounted`;
  const realHome = realpathOr(resolve(home));
  if (realHome !== "/" && isAncestorOrSame(real, realHome)) return `is the home folder or holds it${shown}`;
  if (isAncestorOrSame(real, realpathOr(workspace))) return `holds the workspace${shown}`;
  return null;
}

function isAncestorOrSame(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

function underSystem(path: string): boolean {
  return SYSTEM_DIRS.some((dir) => path === dir || path.startsWith(`${dir}/`));
}

function symlinkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The first executable named `program` on PATH, as the shell would find it. */
export function whichProgram(program: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, program);
    try {
      const info = statSync(candidate);
      if (info.isFile() && (info.mode & 0o111) !== 0) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
