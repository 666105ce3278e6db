// Reads a suite file (or a folder holding suite.jsonc / suite.json), resolves its tasks against defaults and catalog
// slices, checks what only the filesystem can tell (folders exist, the check lives outside the workspace), and
// computes the content hashes that resume and merge compare.
import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { loadCatalog } from "../../catalog/catalog.ts";
import { canonicalJson, digestOf } from "../../text/digest.ts";
import { describeFsError, UsageError } from "../../errors.ts";
import { parseSuite, type ResolvedTask, resolveTask, type Suite } from "../suite.ts";
import { commitTree, folderHash } from "./eval-workspace.ts";

export type LoadedSuite = {
  /** The suite file's absolute path, and its name as the user gave it (for messages). */
  file: string;
  name: string;
  dir: string;
  text: string;
  suite: Suite;
  tasks: (ResolvedTask & { test: NonNullable<ResolvedTask["test"]> })[];
};

const SUITE_NAMES = ["suite.jsonc", "suite.json"];

export type SuiteLoadOptions = {
  cwd: string;
  /** Let suite paths (workspace, git.repo, check.files, solution, slice.catalog) lead outside the suite's folder. */
  allowOutside?: boolean;
};

export function loadSuiteFile(path: string, { cwd, allowOutside = false }: SuiteLoadOptions): LoadedSuite {
  let file = resolve(cwd, path);
  if (isDirectory(file)) {
    const found = SUITE_NAMES.map((name) => join(file, name)).find((candidate) => existsSync(candidate));
    if (!found) throw new UsageError(`Suite folder ${JSON.stringify(path)} has no ${SUITE_NAMES.join(" or ")}`);
    file = found;
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read suite ${JSON.stringify(path)}: ${describeFsError(error)}`, "suite_unreadable");
  }
  const name = relative(cwd, file) || file;
  const suite = parseSuite(text, { file: name });
  const dir = dirname(file);
  const realDir = realpathSync(dir);
  return {
    file,
    name,
    dir,
    text,
    suite,
    tasks: suite.tasks.map((task) => resolveChecked(suite, task, { dir, realDir, name, allowOutside })),
  };
}

/** Whether `path` is `folder` or inside it (both absolute, links resolved). */
function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/**
 * The real location of a path a suite names (data: a downloaded suite is no one's code), or why it is refused: it
 * must exist, be a folder or a file as the field needs, and resolve — links included — inside the suite's folder
 * (unless allowed); a task's workspace must not itself be a link.
 */
function suitePath(
  field: string,
  path: string,
  { dir, realDir, allowOutside, kind, where }: {
    dir: string;
    realDir: string;
    allowOutside: boolean;
    kind: "folder" | "file";
    where: (field: string) => string;
  },
): string {
  const quoted = JSON.stringify(path);
  const absolute = resolve(dir, path);
  const entry = lstatSync(absolute, { throwIfNoEntry: false });
  if (!entry) throw new UsageError(where(`${field}: ${quoted} does not exist (relative to the suite file)`));
  if (field === "workspace" && entry.isSymbolicLink()) {
    throw new UsageError(where(`${field}: ${quoted} is a symbolic link; a task's workspace must be a folder`));
  }
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch (error) {
    throw new UsageError(where(`${field}: ${quoted} cannot be resolved: ${describeFsError(error)}`));
  }
  if (!allowOutside && !within(real, realDir)) {
    throw new UsageError(
      where(
        `${field}: ${quoted} leads outside the suite's folder (to ${JSON.stringify(real)}); ` +
          "--allow-outside-suite allows it",
      ),
    );
  }
  const stat = statSync(real);
  if (kind === "folder" ? !stat.isDirectory() : !stat.isFile()) {
    throw new UsageError(where(`${field}: ${quoted} is not a ${kind} (relative to the suite file)`));
  }
  return real;
}

function resolveChecked(
  suite: Suite,
  raw: Suite["tasks"][number],
  { dir, realDir, name, allowOutside }: { dir: string; realDir: string; name: string; allowOutside: boolean },
): LoadedSuite["tasks"][number] {
  let task = resolveTask(suite, raw);
  const where = (field: string) => `Invalid suite ${JSON.stringify(name)}: task ${JSON.stringify(task.id)}: ${field}`;
  const place = (field: string, path: string, kind: "folder" | "file" = "folder") =>
    suitePath(field, path, { dir, realDir, allowOutside, kind, where });
  if (task.slice) {
    place("slice.catalog", task.slice.catalog, "file");
    task = fromSlice(task, { dir, where });
  }
  if (task.test === null) throw new UsageError(where("test: expected a test here, in defaults or from its slice"));
  const root = task.source.kind === "folder"
    ? place("workspace", task.source.path)
    : place("git.repo", task.source.repo);
  if (task.check.files !== undefined) {
    const check = place("check.files", task.check.files);
    if (within(check, root) || within(root, check)) {
      throw new UsageError(where("check.files: the hidden check must live outside the workspace"));
    }
  }
  if (task.solution !== null) place("solution", task.solution);
  return task as LoadedSuite["tasks"][number];
}

/** A catalog slice supplies what the task leaves out: instructions, actions, test, limits, commands. */
function fromSlice(
  task: ResolvedTask,
  { dir, where }: { dir: string; where: (field: string) => string },
): ResolvedTask {
  // "!": only tasks with a slice reach this loader (the caller checks task.slice)
  const { catalog, name } = task.slice!;
  let text: string;
  try {
    text = readFileSync(resolve(dir, catalog), "utf8");
  } catch (error) {
    throw new UsageError(where(`slice.catalog: cannot read ${JSON.stringify(catalog)}: ${describeFsError(error)}`));
  }
  const loaded = loadCatalog(text, { file: catalog });
  const slice = Object.hasOwn(loaded.slices, name) ? loaded.slices[name] : undefined;
  if (!slice) throw new UsageError(where(`slice.name: no slice ${JSON.stringify(name)} in ${JSON.stringify(catalog)}`));
  return {
    ...task,
    instructions: slice.instructions,
    actions: slice.actions,
    test: task.test ?? slice.test,
    max_steps: slice.limits.max_steps,
    commands: slice.commands ?? task.commands,
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const sha = (text: string): string => digestOf(text);

/** Per task: a hash of its check alone (its files, command and timeout). */
export function checkHashes(loaded: LoadedSuite): Record<string, string> {
  return Object.fromEntries(loaded.tasks.map((task) => {
    const files = task.check.files ? folderHash(resolve(loaded.dir, task.check.files)) : "";
    return [task.id, sha(canonicalJson({ files, check: task.check }))];
  }));
}

/**
 * Per task: a hash of its workspace files (or commit tree), its check's hash and its other settings; `checks` may
 * give other check hashes (rescore asks whether a task changed in anything but its check).
 */
export function taskHashes(
  loaded: LoadedSuite,
  { checks = checkHashes(loaded) }: { checks?: Record<string, string> } = {},
): Record<string, string> {
  return Object.fromEntries(loaded.tasks.map((task) => {
    const source = task.source.kind === "folder"
      ? folderHash(resolve(loaded.dir, task.source.path))
      : commitTree({ repo: resolve(loaded.dir, task.source.repo), commit: task.source.commit, task: task.id });
    const { solution: _, check: __, ...settings } = task;
    return [task.id, sha(canonicalJson({ source, check: checks[task.id] ?? "", settings }))];
  }));
}
