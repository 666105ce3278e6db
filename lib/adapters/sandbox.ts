// The OS sandbox test and command processes run in (bubblewrap on Linux): only the workspace (read-write) and the
// toolchain (read-only) exist, in their own PID namespace with a fresh /proc, without network unless the slice asks,
// and everything they start dies with them. See docs/sandbox.md for what each mode guarantees per platform.
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join } from "node:path";

export const SANDBOX_MODES = ["auto", "required", "off"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** What one slice lets its processes see, on top of the workspace. */
export type SandboxPolicy = {
  /** Network inside the sandbox (default off). */
  network?: boolean;
  /** Absolute host paths mounted read-only at the same place (toolchains outside /usr, e.g. ~/.pyenv). */
  readOnly?: readonly string[];
};

/** Variables every child gets when set on the host; everything else must be named by the slice. */
export const BASE_ENV_NAMES: readonly string[] = ["PATH", "LANG", "LANGUAGE", "TZ", "TERM", "NO_COLOR"];
const LOCALE_VARIABLE = /^LC_[A-Z_]+$/;

/** HOME inside the sandbox: an empty, private directory on a fresh tmpfs. */
export const SANDBOX_HOME = "/tmp/home";

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

export type Bubblewrap = { path: string };

let probed: { key: string; found: Bubblewrap | null; reason: string } | undefined;

/**
 * bubblewrap when it is installed and can create namespaces here (it cannot in some containers), else why not.
 * Probed once per process and PATH.
 */
export function findBubblewrap(
  env: Record<string, string | undefined> = process.env,
): { found: Bubblewrap } | { found: null; reason: string } {
  if (process.platform !== "linux") {
    return { found: null, reason: `no OS sandbox is supported on ${process.platform} yet` };
  }
  const key = env.PATH ?? "";
  if (probed?.key !== key) probed = { key, ...probe(env) };
  return probed.found ? { found: probed.found } : { found: null, reason: probed.reason };
}

function probe(env: Record<string, string | undefined>): { found: Bubblewrap | null; reason: string } {
  const path = whichProgram("bwrap", env.PATH ?? "");
  if (!path) return { found: null, reason: "bubblewrap (bwrap) is not installed" };
  const trial = spawnSync(path, [...mountArgs({ root: "/tmp", policy: {}, programDirs: [] }), "--", "true"], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
    env: { PATH: "/usr/bin:/bin" },
  });
  if (trial.status === 0) return { found: { path }, reason: "" };
  const detail = trial.stderr?.toString().trim().split("\n")[0] || trial.error?.message || `exit ${trial.status}`;
  return { found: null, reason: `bubblewrap cannot create a sandbox here (${detail})` };
}

/** argv that runs `argv` in the sandbox, in `root` (the real workspace path, mounted read-write at the same place). */
export function sandboxedArgv(
  bwrap: Bubblewrap,
  { argv, root, env, policy }: {
    argv: readonly string[];
    root: string;
    env: Record<string, string>;
    policy: SandboxPolicy;
  },
): string[] {
  const program = argv[0] ?? "";
  const found = isAbsolute(program)
    ? program
    : program.includes("/")
    ? undefined
    : whichProgram(program, env.PATH ?? "");
  // The program's directory and its real one (node_modules/.bin links into the package). Not every PATH directory: a
  // half-mounted toolchain (pyenv's shims without pyenv) is worse than none, since PATH then finds the system's.
  const programDirs = found ? [dirname(found), dirname(realpathOr(found))] : [];
  const setenv = Object.entries(env).flatMap(([name, value]) => ["--setenv", name, value]);
  return [bwrap.path, ...mountArgs({ root, policy, programDirs }), "--clearenv", ...setenv, "--", ...argv];
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

function mountArgs(
  { root, policy, programDirs }: { root: string; policy: SandboxPolicy; programDirs: readonly string[] },
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
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME);
  const extra = [...programDirs, ...(policy.readOnly ?? [])].filter((p) => isAbsolute(p) && !underSystem(p));
  for (const path of new Set(extra)) args.push("--ro-bind-try", path, path);
  args.push("--bind", root, root, "--chdir", root);
  return args;
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
