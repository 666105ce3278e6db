// The workspaces of an evaluation: a fresh copy of a task's folder (or a commit checked out from a local repository
// without network) for every run, a snapshot of its files, and the run's changes as data that can be saved and
// applied again (loom eval rescore).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve, sep, win32 } from "node:path";
import { z } from "zod";
import { describeFsError, errorCode, errorMessage, StartupError, UsageError } from "../../errors.ts";
import { describeIssues } from "../../text/zod-error.ts";
import { linkEntry, PathChangedError, removeEntry, writeEntry } from "../../workspace/workspace-files.ts";
import { trustedPath } from "../../workspace/process.ts";
import type { ResolvedTask } from "../suite.ts";

/** Per file (relative path, "/"-separated): the sha256 of its bytes; a symbolic link hashes its target text. */
export type Snapshot = Map<string, string>;

/** What a run changed: new or changed files with their bytes (base64), and deleted files (null). */
const Changes = z.strictObject({
  files: z.record(
    z.string(),
    z.union([
      z.strictObject({ base64: z.base64().describe("The file's bytes") }),
      z.strictObject({ link: z.string().describe("A symbolic link's text") }),
      z.null().describe("Deleted"),
    ]),
  ).describe("Per workspace-relative path ('/'-separated): what it became"),
});
export type Changes = z.infer<typeof Changes>;

/** Fills `dest` (an empty or missing folder) with the task's initial workspace. */
export function createWorkspace(task: ResolvedTask, { suiteDir, dest }: { suiteDir: string; dest: string }): void {
  mkdirSync(dest, { recursive: true });
  if (task.source.kind === "folder") {
    const source = resolve(suiteDir, task.source.path);
    // Checked when the suite loads; a workspace that became a link or vanished since is the suite's fault, not the
    // run's (a suite error, never an infra failure retried).
    const entry = lstatSync(source, { throwIfNoEntry: false });
    if (!entry?.isDirectory()) {
      throw new UsageError(
        `Task ${JSON.stringify(task.id)}: workspace ${JSON.stringify(task.source.path)} ${
          entry ? "is not a folder (a link or a file)" : "does not exist"
        }`,
      );
    }
    try {
      cpSync(source, dest, { recursive: true, verbatimSymlinks: true, errorOnExist: false, force: true });
    } catch (error) {
      throw new StartupError(
        `Task ${JSON.stringify(task.id)}: cannot copy workspace ${JSON.stringify(task.source.path)}: ${
          errorMessage(error)
        }`,
        "workspace_copy_failed",
      );
    }
    return;
  }
  checkoutCommit({ repo: resolve(suiteDir, task.source.repo), commit: task.source.commit, dest, task: task.id });
}

/** Git without network or user configuration: local clones only, no prompts, no hooks from the host. */
const GIT_ENV = {
  GIT_ALLOW_PROTOCOL: "file",
  GIT_TERMINAL_PROMPT: "0",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

function git(args: string[], { cwd, task }: { cwd: string; task: string }): string {
  const result = spawnSync("git", args, {
    cwd,
    // Without relative PATH entries: they would resolve in the folder being checked out.
    env: { PATH: trustedPath(process.env.PATH ?? "/usr/bin:/bin", [cwd]), HOME: "/nonexistent", ...GIT_ENV },
    encoding: "utf8",
    timeout: 120_000,
  });
  if (result.status !== 0) {
    const why = result.error?.message ?? result.stderr.trim().split("\n")[0] ?? `exit ${result.status}`;
    throw new StartupError(`Task ${JSON.stringify(task)}: git ${args[0]} failed: ${why}`, "workspace_checkout_failed");
  }
  return result.stdout;
}

/** The commit's tree, checked out into `dest` from the local repository; the clone's .git is removed afterwards. */
function checkoutCommit({ repo, commit, dest, task }: { repo: string; commit: string; dest: string; task: string }) {
  git(["clone", "--quiet", "--no-checkout", "--no-hardlinks", "--", repo, dest], { cwd: dirname(dest), task });
  git(["-c", "advice.detachedHead=false", "checkout", "--quiet", commit], { cwd: dest, task });
  rmSync(join(dest, ".git"), { recursive: true, force: true });
}

/** The tree hash of a commit in a local repository: what a git task's content hash rests on. */
export function commitTree({ repo, commit, task }: { repo: string; commit: string; task: string }): string {
  return git(["rev-parse", `${commit}^{tree}`], { cwd: repo, task }).trim();
}

function walk(root: string, visit: (rel: string, abs: string) => void, dir = root): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) walk(root, visit, abs);
    else visit(relative(root, abs).split(sep).join("/"), abs);
  }
}

export function snapshot(root: string): Snapshot {
  const out: Snapshot = new Map();
  walk(root, (rel, abs) => {
    const stat = lstatSync(abs);
    const bytes = stat.isSymbolicLink() ? `link:${readlinkSync(abs)}` : readFileSync(abs);
    out.set(rel, createHash("sha256").update(bytes).digest("hex"));
  });
  return out;
}

/** One hash over a folder's file names and contents (the task's content key). */
export function folderHash(root: string): string {
  const hash = createHash("sha256");
  for (const [path, digest] of snapshot(root)) hash.update(`${path}\u0000${digest}\n`);
  return hash.digest("hex");
}

/** What changed from `before` to the folder's current files. */
export function changesSince(before: Snapshot, root: string): Changes {
  const after = snapshot(root);
  const files: Changes["files"] = {};
  for (const [path, digest] of after) {
    if (before.get(path) === digest) continue;
    const abs = join(root, path);
    files[path] = lstatSync(abs).isSymbolicLink()
      ? { link: readlinkSync(abs) }
      : { base64: readFileSync(abs).toString("base64") };
  }
  for (const path of before.keys()) if (!after.has(path)) files[path] = null;
  return { files };
}

/** Why an entry of a changes file cannot name a place inside the workspace copy, or null when it can. */
function entryProblem(path: string): string | null {
  if (path.includes("\0")) return "contains a NUL byte";
  if (path.startsWith("/") || win32.isAbsolute(path)) return "is absolute";
  const parts = path.split("/");
  if (parts.some((part) => part === "..")) return "climbs out with ..";
  if (parts.some((part) => part === "" || part === ".")) return "is not a plain relative path";
  return null;
}

/**
 * Applies saved changes (data: a results folder may come from another machine) to a fresh workspace copy at `root`,
 * as the agent left it, without ever leaving the copy: deletions first, deepest first, then files and links, parents
 * before children; every entry is reached through the pinned, no-follow walk the file actions use. An entry that is
 * absolute, climbs out, or lies under a link or a file is refused: the error is one line naming `source` and the entry.
 */
function applyChanges(root: string, changes: Changes, { source = "changes.json" }: { source?: string } = {}) {
  const realRoot = realpathSync(root);
  const entries = Object.entries(changes.files);
  const refuse = (path: string, why: string) =>
    new UsageError(`${source}: entry ${JSON.stringify(path)} ${why}; refused (nothing is applied outside the copy)`);
  for (const [path] of entries) {
    const problem = entryProblem(path);
    if (problem) throw refuse(path, problem);
  }
  const depth = (path: string) => path.split("/").length;
  const deletions = entries.filter(([, change]) => change === null).sort(([a], [b]) => depth(b) - depth(a));
  const additions = entries.filter(([, change]) => change !== null).sort(([a], [b]) => depth(a) - depth(b));
  for (const [path, change] of [...deletions, ...additions]) {
    try {
      if (change === null) removeEntry(realRoot, path);
      else if ("link" in change) linkEntry(realRoot, path, change.link); // its text, as it was; never followed
      else {
        removeEntry(realRoot, path); // a folder the agent replaced by a file, say
        writeEntry(realRoot, path, Buffer.from(change.base64, "base64"));
      }
    } catch (error) {
      if (error instanceof PathChangedError) throw refuse(path, "lies under a link");
      const code = errorCode(error);
      if (code === "ENOTDIR" || code === "EEXIST") throw refuse(path, "lies under a file");
      throw error;
    }
  }
}

/**
 * Lays a suite's reference solution (its files replace or add workspace files) over the copy at `root`, through the
 * same no-follow walk: a solution file under a link the task's workspace holds is refused, never written through.
 */
export function applySolution(root: string, folder: string, { source }: { source: string }): void {
  applyChanges(root, changesSince(new Map(), folder), { source });
}

/** Reads a run's changes.json (data, parsed at the edge) and applies it to the copy at `root` (see applyChanges). */
export function applyChangesFile(root: string, path: string): void {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read ${JSON.stringify(path)}: ${describeFsError(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path}: not JSON (${errorMessage(error)})`);
  }
  const parsed = Changes.safeParse(json);
  if (!parsed.success) throw new UsageError(`${path}: ${describeIssues(parsed.error)[0]}`);
  applyChanges(root, parsed.data, { source: path });
}

/** A short readable listing of the changes (for humans; changes.json is what rescore applies). */
export function describeChanges(changes: Changes): string {
  const lines = Object.entries(changes.files).map(([path, change]) =>
    change === null
      ? `deleted  ${path}`
      : "link" in change
      ? `link     ${path} -> ${change.link}`
      : `written  ${path} (${Buffer.from(change.base64, "base64").length} bytes)`
  );
  return lines.length ? `${lines.join("\n")}\n` : "(no changes)\n";
}
