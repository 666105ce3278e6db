// Completes command lines in real shells with a loom completion script, for tests: bash (the function called as
// bash-completion calls it), zsh (an interactive zsh in a pty, its completion widget run on each line) and fish
// (complete -C). Each takes many lines in one shell process and returns the candidates per line.
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./binary.ts";

export type Completed = Map<string, string[]>;

/** Whether a shell runs here. */
export const hasShell = (shell: string) => spawnSync(shell, ["-c", "exit 0"]).status === 0;

/** "LINE\tCANDIDATE" lines to candidates per line (a folder's trailing / dropped). */
function collect(lines: readonly string[], output: string): Completed {
  const found: Completed = new Map(lines.map((line) => [line, []]));
  for (const row of output.split("\n")) {
    const tab = row.indexOf("\t");
    if (tab === -1) continue;
    const candidate = row.slice(tab + 1).split("\t")[0].trim().replace(/\/$/, "");
    found.get(row.slice(0, tab))?.push(candidate);
  }
  return found;
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export function bashComplete(script: string, lines: readonly string[], { cwd }: { cwd: string }): Completed {
  const file = join(cwd, "complete-lines.bash");
  writeFileSync(
    file,
    [
      `source ${quote(script)}`,
      ...lines.map((line) => {
        const words = line.split(" ");
        return `COMP_WORDS=(${words.map(quote).join(" ")}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _loom; ` +
          `for w in "\${COMPREPLY[@]}"; do printf '%s\\t%s\\n' ${quote(line)} "$w"; done`;
      }),
    ].join("\n"),
  );
  return collect(lines, execFileSync("bash", [file], { cwd, encoding: "utf8" }));
}

export function zshComplete(folder: string, lines: readonly string[], { cwd }: { cwd: string }): Completed {
  const driver = join(ROOT, "tests/helpers/zsh-complete.zsh");
  const output = execFileSync("zsh", ["-f", driver, folder, ...lines], { cwd, encoding: "utf8", timeout: 600_000 });
  return collect(lines, output);
}

export function fishComplete(script: string, lines: readonly string[], { cwd }: { cwd: string }): Completed {
  const body = [
    `source ${quote(script)}`,
    ...lines.map((line) => `for c in (complete -C ${quote(line)}); printf '%s\\t%s\\n' ${quote(line)} $c; end`),
  ].join("\n");
  return collect(lines, execFileSync("fish", ["-c", body], { cwd, encoding: "utf8" }));
}
