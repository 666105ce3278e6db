// What the model may never write, and what Loom undoes when a process writes it: git's execution configuration (a
// `.git`, `.gitmodules`, a folder shaped like a repository; git-guard.ts) and Loom's own files (`.loom`, the run's
// output files).
import { isGitPath, isLoomPath, makesRepository } from "./git-guard.ts";
import { Refusal } from "./refusal.ts";

/**
 * Refuses a write to any path git reads as (or inside) `.git` or `.gitmodules` — `.GIT`, `src/.git`, `.git/config`,
 * `.git/hooks/x`, a `.git` file with `gitdir:` — by the name the model gave or the real one: the next git command, the
 * user's, outside any sandbox, would run what a config or hook there names (git-guard.ts). Also the file that would
 * make a folder shaped like a repository (HEAD, objects/, refs/), which git takes for a bare one.
 */
export function refuseExecutionConfig(target: { relative: string; real: string; root: string }): void {
  for (const path of [target.relative, target.real]) {
    if (isGitPath(path) || makesRepository(target.root, path)) {
      throw new Refusal(
        "protected_path",
        `Path ${JSON.stringify(target.relative)} is or is inside .git (or .gitmodules), or would make a folder git ` +
          "takes for a repository; git reads what to run from there (config, hooks): Loom never writes it",
      );
    }
  }
}

/**
 * Refuses a write to Loom's own files: `.loom` at any depth (the project configuration the user's next run there
 * reads) and this run's outputs inside the workspace (`--record`, `--trace`, `--context-report`, `--diff`): what
 * Loom writes and reads is not the model's to write.
 */
export function refuseLoomFile(
  target: { relative: string; real: string },
  { ownFiles: own }: { ownFiles?: ReadonlySet<string> | undefined } = {},
): void {
  for (const path of [target.relative, target.real]) {
    if (isLoomPath(path)) {
      throw new Refusal(
        "loom_file",
        `Path ${JSON.stringify(target.relative)} is or is inside .loom, Loom's own configuration (the user's next ` +
          "run there reads it): Loom never writes it",
      );
    }
    if (own?.has(path)) {
      throw new Refusal(
        "loom_file",
        `Path ${JSON.stringify(target.relative)} is one of this run's own output files (record, trace, report or ` +
          "diff): Loom never writes it for the model",
      );
    }
  }
}

/**
 * What a process planted or changed and GitGuard undid (`undone`), as the step's refusal: `loom_file_planted` when
 * only Loom's configuration was touched, `git_planted` otherwise; `notice` is told as it happens. Nothing undone: no
 * refusal.
 */
export function refusePlanted(
  what: string,
  undone: string[],
  { notice }: { notice?: ((message: string) => void) | undefined } = {},
): void {
  if (undone.length === 0) return;
  const shown = undone.slice(0, 5).map((path) => JSON.stringify(path)).join(", ");
  const more = undone.length > 5 ? ` and ${undone.length - 5} more` : "";
  // Only .loom touched: Loom's own configuration; anything else is git's (a shape name at the root, a .git …).
  if (undone.every((path) => isLoomPath(path))) {
    notice?.(`${what} planted or changed Loom's configuration (${shown}${more}); removed or put back`);
    throw new Refusal(
      "loom_file_planted",
      `${what} planted or changed Loom's configuration (${shown}${more}); Loom removed it or put it back: ` +
        "a .loom/config.jsonc made in the workspace would be read by the user's next run there",
    );
  }
  notice?.(`${what} planted or changed what git runs (${shown}${more}); removed or put back`);
  throw new Refusal(
    "git_planted",
    `${what} planted or changed what git runs (${shown}${more}); Loom removed it or put it back: ` +
      "a .git, git config or hook made in the workspace (or the workspace made a repository) would run at the " +
      "user's next git command",
  );
}
