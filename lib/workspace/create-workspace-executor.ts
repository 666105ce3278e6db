// The real executors for one slice: where its processes run (the sandbox mode decided once, here) and what they see.
import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { StartupError } from "../errors.ts";
import type { SandboxSettings, SliceRequest } from "../slice.ts";
import type { ResultStore } from "../context/store.ts";
import { grantedSandbox, sandboxFloor } from "../settings/sandbox-grants.ts";
import type { SettingFlags } from "../settings/setting-table.ts";
import { type Bubblewrap, effectiveMode, findBubblewrap, readOnlyProblem, type SandboxMode } from "./sandbox.ts";
import { WorkspaceExecutor } from "./workspace-executor.ts";
import { sweepLeftoversOnce } from "./scratch.ts";

export type WorkspaceExecutorSettings = {
  /** The workspace directory (must exist). */
  root: string;
  /** --sandbox: the floor (default LOOM_SANDBOX, else "auto"); the slice's own mode may raise it, never lower it. */
  sandboxMode?: SandboxMode;
  /** Variables never passed to processes, even when the slice names them. */
  secretEnvNames: string[];
  /** Host environment processes pick their variables from (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Where LOOM_SANDBOX and LOOM_BWRAP are read (default: env): the command's environment. */
  settingsEnv?: Record<string, string | undefined>;
  /** Where "running without a sandbox" is said (once per process). */
  warn?: (message: string) => void;
  /** Loom's own output files of the run (report, recording, trace, diff), absolute: those inside the workspace never
   * make a revision. */
  ownFiles?: readonly string[];
  /**
   * What the user granted (the command line: --sandbox-network, --sandbox-env, --sandbox-read-only): the slice's
   * `sandbox.network`, `env` and `read_only` may ask for these only; more is refused (grantedSandbox).
   */
  grants?: Pick<SettingFlags, "sandbox_network" | "sandbox_env" | "sandbox_read_only">;
  /** The file the slice came from, as the user named it, for a refusal's one line (default "the request"). */
  source?: string;
};

let warned = false;

/**
 * bubblewrap for the slice's processes, or undefined when they run unsandboxed. `required` without a usable sandbox is
 * a startup failure (exit 3); `auto` without one says so once per process.
 */
export function chooseSandbox(
  mode: SandboxMode,
  { env = process.env, warn }: { env?: Record<string, string | undefined>; warn?: (message: string) => void } = {},
): Bubblewrap | undefined {
  if (mode === "off") return undefined;
  const probe = findBubblewrap(env);
  if (probe.found) return probe.found;
  if (mode === "required") {
    throw new StartupError(
      `The sandbox is required (--sandbox required) but unavailable: ${probe.reason}`,
      "sandbox_unavailable",
    );
  }
  if (!warned && warn) {
    warned = true;
    warn(
      `Test and command processes run without a sandbox: ${probe.reason}. ` +
        "See docs/sandbox.md; --sandbox off says this is intended, --sandbox required refuses to run.",
    );
  }
  return undefined;
}

export function createWorkspaceExecutor(
  slice: SliceRequest,
  store: ResultStore,
  { root, sandboxMode, secretEnvNames, env, settingsEnv, warn, ownFiles = [], grants = {}, source = "the request" }:
    WorkspaceExecutorSettings,
): WorkspaceExecutor {
  sweepLeftoversOnce(); // pids cgroups a killed Loom left behind
  const asked: SandboxSettings = slice.sandbox ?? {};
  const granted = grantedSandbox(asked, grants, source);
  const settings = {
    mode: asked.mode,
    network: granted.network,
    env: [...granted.env],
    read_only: [...granted.read_only],
  };
  const settingsFrom = settingsEnv ?? env ?? process.env;
  const mode = effectiveMode(sandboxMode ?? sandboxFloor({}, settingsFrom).value, settings.mode);
  (settings.read_only ?? []).forEach((path, i) => {
    const problem = readOnlyProblem(path, { workspace: root });
    if (problem) {
      throw new StartupError(
        `sandbox.read_only[${i}] ${JSON.stringify(path)} ${problem}; list only toolchain folders (docs/sandbox.md)`,
        "sandbox_mount_refused",
      );
    }
  });
  const bwrap = chooseSandbox(mode, { env: settingsFrom, warn });
  return new WorkspaceExecutor({
    root,
    store,
    test: slice.test,
    commands: slice.commands ?? [],
    commandTimeoutMs: slice.limits.command_timeout_ms ?? slice.test.timeout_ms,
    secretEnvNames,
    passEnv: settings.env ?? [],
    ...(slice.workspace_ignore ? { ignore: slice.workspace_ignore } : {}),
    ownFiles: insideWorkspace(root, ownFiles),
    sandboxMode: mode,
    ...(warn ? { notice: warn } : {}),
    ...(bwrap ? { sandbox: { bwrap, policy: { network: settings.network, readOnly: settings.read_only } } } : {}),
  }, env ? { env } : {});
}

/**
 * The paths of `files` inside `root`, relative to it (as the workspace scan names them). Both sides are compared as the
 * file system resolves them, so a workspace or an output named through a symlinked folder still matches.
 */
function insideWorkspace(root: string, files: readonly string[]): Set<string> {
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return resolve(path);
    }
  };
  const base = real(root);
  const inside = new Set<string>();
  for (const file of files) {
    const path = join(real(dirname(resolve(file))), basename(file));
    const rel = relative(base, path);
    if (rel !== "" && !rel.startsWith("..") && !isAbsolute(rel)) inside.add(rel.split(sep).join("/"));
  }
  return inside;
}
