// loom completions bash|zsh|fish: prints a completion script for the shell, built from the commands' own option
// tables so a new flag completes without touching this file.
import { UsageError } from "../lib/errors.ts";
import { SCHEMAS } from "../lib/schemas.ts";
import type { Io } from "./io.ts";
import { REPLAY_OPTIONS } from "./replay.ts";
import { REPORT_OPTIONS } from "./report.ts";
import { RUN_OPTIONS } from "./run.ts";
import { EVAL_OPTIONS } from "./eval.ts";

type OptionTable = Record<string, { type: "string" | "boolean"; short?: string }>;

export const SHELLS = ["bash", "zsh", "fish"] as const;

/** Every command with its flags; values are completed as files unless listed in VALUES. */
function commandFlags(): Record<string, OptionTable> {
  return {
    run: RUN_OPTIONS,
    replay: REPLAY_OPTIONS,
    report: REPORT_OPTIONS,
    eval: EVAL_OPTIONS,
    schema: {},
    completions: {},
    help: {},
    version: {},
  };
}

const VALUES: Record<string, string[]> = {
  "context-policy": ["legacy", "bounded"],
  "step-protocol": ["two-call", "single-call"],
  previews: ["compact", "balanced", "wide"],
  from: ["auto", "loom", "mini-swe-agent", "swe-agent", "openai-messages"],
  "output-format": ["text", "json", "stream-json"],
};

/** Words completed after the command itself (its positional choices), when it has a fixed set. */
function positionalWords(command: string): string[] {
  if (command === "schema") return Object.keys(SCHEMAS);
  if (command === "completions") return [...SHELLS];
  if (command === "help") return Object.keys(commandFlags()).filter((c) => c !== "help");
  return [];
}

function flagsOf(table: OptionTable): string[] {
  return Object.keys(table).map((name) => `--${name}`);
}

export function completionScript(shell: (typeof SHELLS)[number]): string {
  const commands = commandFlags();
  const names = Object.keys(commands);
  if (shell === "bash") {
    const cases = names.map((c) =>
      `    ${c}) flags="${flagsOf(commands[c]).join(" ")}"; words="${positionalWords(c).join(" ")}" ;;`
    ).join("\n");
    const values = Object.entries(VALUES).map(([flag, words]) =>
      `    --${flag}) COMPREPLY=($(compgen -W "${words.join(" ")}" -- "$cur")); return ;;`
    ).join("\n");
    return `# bash completion for loom: eval "$(loom completions bash)" or save it under bash-completion's completions/
_loom() {
  local cur prev command flags words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${names.join(" ")} --help --version" -- "$cur"))
    return
  fi
  command="\${COMP_WORDS[1]}"
  case "$prev" in
${values}
  esac
  case "$command" in
${cases}
    *) flags=""; words="" ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags --help" -- "$cur"))
  elif [ -n "$words" ]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _loom loom
`;
  }
  if (shell === "zsh") {
    const cases = names.map((c) => {
      const specs = Object.entries(commands[c]).map(([flag, option]) => {
        const values = VALUES[flag];
        const arg = option.type === "boolean" ? "" : values ? `:${flag}:(${values.join(" ")})` : `:${flag}:_files`;
        return `'--${flag}[${flag}]${arg}'`;
      });
      const words = positionalWords(c);
      const positional = words.length > 0 ? `'*:${c}:(${words.join(" ")})'` : `'*:file:_files'`;
      return `    ${c}) _arguments ${[...specs, positional].join(" ")} ;;`;
    }).join("\n");
    return `#compdef loom
# zsh completion for loom: save as _loom in a folder on $fpath, or eval "$(loom completions zsh)" after compinit
_loom() {
  if (( CURRENT == 2 )); then
    compadd -- ${names.join(" ")}
    return
  fi
  local command=\${words[2]}
  shift words; (( CURRENT-- ))
  case $command in
${cases}
  esac
}
compdef _loom loom
`;
  }
  const lines = [
    "# fish completion for loom: loom completions fish > ~/.config/fish/completions/loom.fish",
    "complete -c loom -f",
    `complete -c loom -n __fish_use_subcommand -a "${names.join(" ")}"`,
  ];
  for (const c of names) {
    const words = positionalWords(c);
    if (words.length > 0) lines.push(`complete -c loom -n "__fish_seen_subcommand_from ${c}" -a "${words.join(" ")}"`);
    else if (c === "run" || c === "replay" || c === "report") {
      lines.push(`complete -c loom -n "__fish_seen_subcommand_from ${c}" -F`);
    }
    for (const [flag, option] of Object.entries(commands[c])) {
      const values = VALUES[flag];
      const arg = option.type === "boolean" ? "" : values ? ` -x -a "${values.join(" ")}"` : " -r -F";
      lines.push(`complete -c loom -n "__fish_seen_subcommand_from ${c}" -l ${flag}${arg}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export function completionsCommand(argv: string[], io: Io): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
    io.stdout(
      `loom completions ${SHELLS.join("|")}\n\nPrints a completion script for the shell:\n` +
        `  bash  eval "$(loom completions bash)"  (e.g. in ~/.bashrc)\n` +
        `  zsh   loom completions zsh > "\${fpath[1]}/_loom"\n` +
        `  fish  loom completions fish > ~/.config/fish/completions/loom.fish\n`,
    );
    return Promise.resolve(0);
  }
  const [shell] = argv;
  if (argv.length !== 1 || !(SHELLS as readonly string[]).includes(shell)) {
    throw new UsageError(`Expected one shell: ${SHELLS.join(", ")} (loom completions SHELL)`);
  }
  io.stdout(completionScript(shell as (typeof SHELLS)[number]));
  return Promise.resolve(0);
}
