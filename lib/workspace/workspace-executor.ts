// The real executor: files through workspace confinement, programs through runProcess. Bulk text goes to the store.
import { realpathSync } from "node:fs";
import { join, relative } from "node:path";
import type { z } from "zod";
import { type ActionArgs, ActionArguments, ActionName } from "../vocabulary/actions.ts";
import { clipText, MESSAGE_LIMIT } from "../text/clip.ts";
import { errorCode, InterruptedError } from "../errors.ts";
import type { ExecuteContext, Executor, LineChange } from "../vocabulary/executor.ts";
import type { ExecutionReport, ReportOf } from "../vocabulary/reports.ts";
import type { TestSpec } from "../slice.ts";
import type { ResultStore } from "../context/store.ts";
import { formatZodError } from "../text/zod-error.ts";
import { runProcess } from "./process.ts";
import type { Bubblewrap, SandboxPolicy } from "./sandbox.ts";
import { PathChangedError, statEntry, walkEntries, writeEntry, WriteRefusedError } from "./workspace-files.ts";
import { DEFAULT_WORKSPACE_IGNORE, WorkspaceFingerprint } from "./workspace-fingerprint.ts";
import { GitGuard } from "./git-guard.ts";
import { WorkspaceSnapshot } from "./workspace-snapshot.ts";
import type { FileChange } from "../vocabulary/reports.ts";
import type { SandboxState } from "../sandbox-state.ts";
import { nearestLines } from "./refusal-hints.ts";
import { ERRNO_REFUSALS, Refusal, type RefusalHints } from "./refusal.ts";
import { refuseExecutionConfig, refuseLoomFile, refusePlanted } from "./protected-paths.ts";
import { checkCommand } from "./allowed-commands.ts";
import { existingTarget, readText, resolveTarget } from "./workspace-target.ts";
import { listingLines, matchingLines, matchLine, MAX_SEARCH_MATCHES, searchableText } from "./workspace-search.ts";

export type WorkspaceExecutorConfig = {
  /** The workspace directory; nothing outside it is read, written or listed. */
  root: string;
  store: ResultStore;
  test: z.infer<typeof TestSpec>;
  /** argv prefixes run_command may run (element-wise); empty allows nothing. */
  commands: string[][];
  commandTimeoutMs: number;
  /** Variables never passed to test and command processes, even when named (the providers' key variables). */
  secretEnvNames?: string[];
  /** Host variables test and command processes get besides PATH, the locale, TZ, TERM and NO_COLOR. */
  passEnv?: string[];
  /** Run test and command processes in this sandbox; unsandboxed when absent (see docs/sandbox.md). */
  sandbox?: { bwrap: Bubblewrap; policy: SandboxPolicy };
  /** gitignore globs whose changes make no new revision (default: DEFAULT_WORKSPACE_IGNORE). */
  ignore?: readonly string[];
  /** Loom's own output files of the run inside the workspace (exact paths relative to the root): never a change. */
  ownFiles?: ReadonlySet<string>;
  /** The sandbox mode chosen for the run (reported; `sandbox` says whether one is in use). */
  sandboxMode?: SandboxState["mode"];
  /** Told, as it happens, what a process planted of git's and Loom removed (besides the step's refusal). */
  notice?: (message: string) => void;
};

export type WorkspaceExecutorOptions = {
  now?: () => number;
  /** The host environment test and command variables are picked from (default: process.env). */
  env?: Record<string, string | undefined>;
};

/** Each action's schema, seen as what it parses to: indexed by a generic action, tsc keeps the two together. */
const ARGUMENT_SCHEMAS: { readonly [A in ActionName]: z.ZodType<ActionArgs<A>> } = ActionArguments;
type Handlers = {
  readonly [A in ActionName]: (
    args: ActionArgs<A>,
    signal: AbortSignal | undefined,
  ) => Promise<ExecutionReport> | ExecutionReport;
};

// Actions after which the workspace may differ: the fingerprint is compared after each.
const MUTATING: ReadonlySet<ActionName> = new Set(["edit_file", "write_file", "run_tests", "run_command"]);

export class WorkspaceExecutor implements Executor {
  readonly #config: WorkspaceExecutorConfig;
  readonly #now: () => number;
  readonly #env: Record<string, string | undefined> | undefined;
  #revision = 0;
  /** The sandbox mode this executor's processes run under, whether an OS sandbox is really in use, the ignore globs. */
  readonly sandboxState: SandboxState;
  readonly #fingerprint: WorkspaceFingerprint;
  /** git's entries as they were at the start: what a process plants or changes there is undone after it. */
  readonly #gitGuard: GitGuard;
  /** The workspace's text at the start and now: the run's changed files, lines and patch. */
  readonly #snapshot: WorkspaceSnapshot;
  /** Lines added and removed by the execute in progress (null: unknown). */
  #lines: LineChange | null = { added: 0, removed: 0 };
  #looked = false;

  constructor(config: WorkspaceExecutorConfig, { now = Date.now, env }: WorkspaceExecutorOptions = {}) {
    this.#config = config;
    this.#now = now;
    this.#env = env;
    this.#gitGuard = new GitGuard(config.root);
    this.#fingerprint = new WorkspaceFingerprint(config.root, {
      ...(config.ignore ? { ignore: config.ignore } : {}),
      ...(config.ownFiles ? { exclude: config.ownFiles } : {}),
    });
    this.#snapshot = new WorkspaceSnapshot(config.root);
    this.sandboxState = {
      mode: config.sandboxMode ?? (config.sandbox ? "auto" : "off"),
      active: config.sandbox !== undefined,
      workspace_ignore: [...(config.ignore ?? DEFAULT_WORKSPACE_IGNORE)],
    };
  }

  /** Whether the workspace changed since the last look (the first look only records it). */
  #changed(): boolean {
    const first = !this.#looked;
    this.#looked = true;
    const changed = this.#fingerprint.changed();
    // The snapshot takes in only what the walk found changed: an action costs what it changed (issue 43).
    const lines = first
      ? this.#snapshot.start(this.#fingerprint.entries())
      : this.#snapshot.apply(this.#fingerprint.delta());
    this.#lines = lines && this.#lines
      ? { added: this.#lines.added + lines.added, removed: this.#lines.removed + lines.removed }
      : null;
    return changed;
  }

  lines(): LineChange | null {
    return this.#lines;
  }

  /** The files that differ from the start, with lines added and removed (none before the first look). */
  changes(): FileChange[] {
    return this.#snapshot.changes();
  }

  /** A git-style patch of the run's changes, from Loom's own snapshot (`--diff FILE`). */
  patch(): string {
    return this.#snapshot.patch();
  }

  get revision(): string {
    return `r${this.#revision}`;
  }

  /**
   * One more look when the run ends: a change since the last action (a writer a test left behind, changing files
   * while the model was asked) makes a new revision, which no test has passed. Returns it, or null when nothing changed
   * (or the workspace was never looked at: no action could change it).
   */
  settle(): string | null {
    if (!this.#looked) return null;
    this.#gitGuard.check(); // a writer left behind planted one after the last action: removed all the same
    if (!this.#changed()) return null;
    return this.#bump();
  }

  async execute(
    action: ActionName,
    args: Record<string, unknown>,
    { step, signal }: ExecuteContext,
  ): Promise<ExecutionReport> {
    if (signal?.aborted) throw new InterruptedError();
    this.#lines = { added: 0, removed: 0 };
    // The last refusal rides in every bounded request, and a reason may quote a model's 100 KB path: keep it small.
    const refusal = (code: string, reason: string, hints: RefusalHints = {}): ExecutionReport => ({
      kind: "refusal",
      step,
      code,
      reason: clipText(oneLine(reason), MESSAGE_LIMIT),
      ...hints,
    });
    const name = ActionName.safeParse(action);
    if (!name.success) return refusal("unknown_action", `Unknown action ${JSON.stringify(action)}`);
    return await this.#run(name.data, args, refusal, signal);
  }

  /** The action's arguments parsed by its own schema, then handed to its handler with the type the parse gave. */
  async #run<A extends ActionName>(
    action: A,
    args: Record<string, unknown>,
    refusal: (code: string, reason: string, hints?: RefusalHints) => ExecutionReport,
    signal: AbortSignal | undefined,
  ): Promise<ExecutionReport> {
    // Arguments were validated upstream; checking again keeps a bad caller from reaching the file system.
    const parsed = ARGUMENT_SCHEMAS[action].safeParse(args);
    if (!parsed.success) {
      return refusal("invalid_arguments", `Invalid arguments for ${action}: ${formatZodError(parsed.error)}`);
    }
    // The baseline is taken before the first action that can change the workspace, so nothing before counts.
    if (!this.#looked && MUTATING.has(action)) this.#changed();
    if (!this.#gitGuard.started && MUTATING.has(action)) this.#gitGuard.start();
    try {
      return await this.#handlers[action](parsed.data, signal);
    } catch (error) {
      if (error instanceof Refusal) return refusal(error.code, error.message, error.hints);
      if (error instanceof PathChangedError) return refusal("path_outside_workspace", error.message);
      if (error instanceof WriteRefusedError) return refusal(error.refusal, error.message);
      const errno = ERRNO_REFUSALS[errorCode(error) ?? ""];
      if (!errno) throw error;
      const path = typeof args.path === "string" ? args.path : "";
      return refusal(errno[0], `Path ${JSON.stringify(path)} ${errno[1]}`);
    }
  }

  /** One handler per action, typed by its schema (tsc holds the table complete). */
  readonly #handlers: Handlers = {
    read_file: (args) => this.#read(args),
    list_files: (args) => this.#list(args),
    search: (args) => this.#search(args),
    edit_file: (args) => this.#edit(args),
    write_file: (args) => this.#write(args),
    run_tests: (_args, signal) => this.#runTests(signal),
    run_command: (args, signal) => this.#runCommand(args, signal),
    print: ({ text }) => ({ kind: "print", text: this.#config.store.put(text).digest }),
    finish: (args) => ({ kind: "finish", ...args }),
  };

  #read({ path }: ActionArgs<"read_file">): ReportOf<"read"> {
    const target = existingTarget(this.#config.root, path, { kind: "file" });
    const text = readText(target);
    return { kind: "read", path: target.relative, result: this.#config.store.put(text).digest };
  }

  #list({ path, include_ignored }: ActionArgs<"list_files">): ReportOf<"list"> {
    const target = existingTarget(this.#config.root, path, { kind: "directory" });
    const files = walkEntries(target.root, target.real, { includeIgnored: include_ignored === true })
      .map((file) => under(target.relative, file));
    const { count, lines } = listingLines(files);
    return { kind: "list", path: target.relative, count, result: this.#config.store.put(joinLines(lines)).digest };
  }

  #search({ query, path, include_ignored }: ActionArgs<"search">): ReportOf<"search"> {
    const target = existingTarget(this.#config.root, path, { kind: "any" });
    const files = target.isDirectory
      ? walkEntries(target.root, target.real, { includeIgnored: include_ignored === true })
        .map((file) => under(target.relative, file))
      : [target.relative];
    const lines: string[] = [];
    let matches = 0;
    for (const file of files) {
      const text = searchableText(this.#config.root, file);
      if (text === undefined) continue;
      for (const hit of matchingLines(text, query)) {
        matches++;
        if (lines.length < MAX_SEARCH_MATCHES) lines.push(matchLine(file, hit));
      }
    }
    if (matches > lines.length) lines.push(`[… ${matches - lines.length} more matches not shown …]`);
    return {
      kind: "search",
      query,
      path: target.relative,
      matches,
      result: this.#config.store.put(joinLines(lines)).digest,
    };
  }

  #edit({ path, old_text, new_text }: ActionArgs<"edit_file">): ReportOf<"edit"> {
    const target = existingTarget(this.#config.root, path, { kind: "file" });
    refuseExecutionConfig(target);
    refuseLoomFile(target, { ownFiles: this.#config.ownFiles });
    const content = readText(target);
    const count = countOccurrences(content, old_text);
    if (count === 0) {
      const near = nearestLines(content, old_text);
      const where = `The old text does not occur in ${JSON.stringify(target.relative)}`;
      if (near.length === 0) throw new Refusal("edit_text_not_found", where);
      throw new Refusal("edit_text_not_found", `${where}; nearest_lines shows the lines nearest it, as they are`, {
        nearest_lines: near,
      });
    }
    if (count > 1) {
      const where = JSON.stringify(target.relative);
      throw new Refusal(
        "edit_text_ambiguous",
        `The old text occurs more than once in ${where}; it must occur exactly once`,
      );
    }
    const at = content.indexOf(old_text);
    // Slicing, not String.replace: replacement patterns like "$&" in new_text must stay literal.
    writeEntry(target.root, target.real, content.slice(0, at) + new_text + content.slice(at + old_text.length));
    return this.#applied(target.relative);
  }

  #write({ path, content }: ActionArgs<"write_file">): ReportOf<"edit"> {
    const target = resolveTarget(this.#config.root, path);
    refuseExecutionConfig(target);
    refuseLoomFile(target, { ownFiles: this.#config.ownFiles });
    const existing = statEntry(target.root, target.real);
    if (existing && !existing.isFile()) {
      throw new Refusal("not_a_file", `Path ${JSON.stringify(target.relative)} is not a regular file`);
    }
    writeEntry(target.root, target.real, content);
    return this.#applied(target.relative);
  }

  async #runTests(signal: AbortSignal | undefined): Promise<ReportOf<"test">> {
    const revision = this.revision;
    const { command, timeout_ms } = this.#config.test;
    const result = await runProcess(
      { argv: command, cwd: this.#config.root, timeoutMs: timeout_ms },
      this.#processOptions(signal),
    );
    this.#guardGit("The test run");
    return {
      kind: "test",
      revision,
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      duration_ms: result.durationMs,
      output: this.#config.store.put(result.output).digest,
      ...(this.#changed() ? { revision_after: this.#bump() } : {}),
    };
  }

  async #runCommand(
    { argv }: ActionArgs<"run_command">,
    signal: AbortSignal | undefined,
  ): Promise<ReportOf<"command">> {
    checkCommand(argv, { commands: this.#config.commands, root: this.#config.root });
    const spec = { argv, cwd: this.#config.root, timeoutMs: this.#config.commandTimeoutMs };
    const revision_before = this.revision;
    const result = await runProcess(spec, this.#processOptions(signal));
    this.#guardGit(`Command ${JSON.stringify(argv)}`);
    return {
      kind: "command",
      argv,
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      output: this.#config.store.put(result.output).digest,
      ...(this.#changed() ? { revision_before, revision_after: this.#bump() } : {}),
    };
  }

  /**
   * After a process: what it planted or changed of git's entries is undone (GitGuard), and the step becomes a refusal
   * that says so. The workspace's new state is not looked at here, so the next look (the next action's, or the run's
   * last) counts every change the process made as a new revision: no test result carries over to it.
   */
  #guardGit(what: string): void {
    refusePlanted(what, this.#gitGuard.check(), { notice: this.#config.notice });
  }

  #processOptions(signal: AbortSignal | undefined) {
    const { secretEnvNames = [], passEnv = [], sandbox, root } = this.#config;
    const real = realpathSync(root);
    const gitPaths = this.#gitGuard.startingGitPaths.map((path) => join(real, relative(root, path)));
    return {
      signal,
      now: this.#now,
      removeEnv: secretEnvNames,
      passEnv,
      ...(sandbox ? { sandbox: { ...sandbox, root: real, gitPaths } } : {}),
      ...(this.#env ? { env: this.#env } : {}),
    };
  }

  #bump(): string {
    this.#revision++;
    return this.revision;
  }

  #applied(path: string): ReportOf<"edit"> {
    const revision_before = this.revision;
    this.#bump();
    // The edit is the change; the new baseline keeps it from counting again after the next command.
    this.#changed();
    return { kind: "edit", paths: [path], revision_before, revision_after: this.revision };
  }
}

function under(dir: string, file: string): string {
  return dir === "." ? file : `${dir}/${file}`;
}

function joinLines(lines: string[]): string {
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ").trim();
}

/**
 * Occurrences up to 2 (only none, one and several matter), overlapping ones included: "aa" occurs twice in "aaa", so
 * replacing it would be ambiguous. Stopping early keeps it to two linear scans on any file.
 */
export function countOccurrences(text: string, part: string): 0 | 1 | 2 {
  const first = text.indexOf(part);
  if (first === -1) return 0;
  return text.indexOf(part, first + 1) === -1 ? 1 : 2;
}
