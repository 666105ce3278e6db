// loom completions bash|zsh|fish: a completion script generated from the command specs (commands/specs.ts), so every
// command, subcommand, flag, short flag and choice completes as the parser accepts it, with descriptions in zsh and fish.
import { type CommandSpec, type Flag, flagsOf, parseCommand } from "./cli-spec.ts";
import { UsageError } from "../lib/errors.ts";
import type { Io } from "./io.ts";
import { COMMAND_SPECS, COMPLETIONS_SPEC, SHELLS } from "./specs.ts";

export type Shell = (typeof SHELLS)[number];

type Entry = { path: string; spec: CommandSpec };

/** Every command and subcommand, as the words that name it. */
export function commandPaths(specs: Specs = COMMAND_SPECS, prefix = ""): Entry[] {
  return Object.entries(specs).flatMap(([name, spec]) => {
    const path = prefix ? `${prefix} ${name}` : name;
    return [{ path, spec }, ...commandPaths(spec.subcommands ?? {}, path)];
  });
}

/** The short description a shell shows beside a flag: its text up to the first parenthesis or semicolon. */
function brief(text: string): string {
  const [cut = text] = text.split(/ \(|; /);
  return cut.length > 70 ? `${cut.slice(0, 69)}…` : cut;
}

/** The words completed where a command takes positionals: its fixed words, then its subcommands. */
function positionalWords(spec: CommandSpec, specs: Specs): string[] {
  if (spec === specs.help) return Object.keys(specs);
  return [...(spec.words ?? []), ...Object.keys(spec.subcommands ?? {})];
}

type Specs = Readonly<Record<string, CommandSpec>>;

const filesAfter = (spec: CommandSpec) => spec.words === undefined && spec.positionalsAreFiles !== false;

function bash(entries: Entry[], specs: Specs): string {
  const top = Object.keys(specs);
  const paths = entries.map((e) => JSON.stringify(e.path)).join("|");
  const values: string[] = [];
  const cases: string[] = [];
  for (const { path, spec } of entries) {
    for (const [name, flag] of Object.entries(flagsOf(spec))) {
      if (flag.value === undefined) continue;
      const pattern = [`--${name}`, ...(flag.short ? [`-${flag.short}`] : [])].map((f) => `"${path}|${f}"`).join("|");
      const reply = flag.values
        ? `COMPREPLY=($(compgen -W "${flag.values.join(" ")}" -- "$cur"))`
        : flag.complete === "file"
        ? `COMPREPLY=($(compgen -f -- "$cur"))`
        : flag.complete === "folder"
        ? `COMPREPLY=($(compgen -d -- "$cur"))`
        : "COMPREPLY=()";
      values.push(`    ${pattern}) ${reply}; return ;;`);
    }
    const flags = Object.entries(flagsOf(spec)).flatMap((
      [name, f],
    ) => [`--${name}`, ...(f.short ? [`-${f.short}`] : [])]);
    cases.push(
      `    "${path}") flags="${flags.join(" ")}"; words="${positionalWords(spec, specs).join(" ")}"; files=${
        filesAfter(spec) ? 1 : 0
      } ;;`,
    );
  }
  return `# bash completion for loom: eval "$(loom completions bash)" or save it under bash-completion's completions/
_loom() {
  local cur prev cmdpath flags words files i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${top.join(" ")} --help --version" -- "$cur"))
    return
  fi
  # The command and its subcommand: the leading words that name one.
  cmdpath=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${cmdpath:+$cmdpath }\${COMP_WORDS[i]}" in
      ${paths}) cmdpath="\${cmdpath:+$cmdpath }\${COMP_WORDS[i]}" ;;
      *) break ;;
    esac
  done
  case "$cmdpath|$prev" in
${values.join("\n")}
  esac
  case "$cmdpath" in
${cases.join("\n")}
    *) flags=""; words=""; files=1 ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [ -n "$words" ]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  elif [ "$files" = 1 ]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  else
    COMPREPLY=()
  fi
}
complete -o filenames -F _loom loom
`;
}

const zshQuote = (text: string) => text.replace(/'/g, "'\\''").replace(/([[\]])/g, "\\$1");

function zshFlag(name: string, flag: Flag): string {
  const names = flag.short ? `{-${flag.short},--${name}}` : `--${name}`;
  const exclusive = flag.multiple ? "'*'" : flag.short ? `'(-${flag.short} --${name})'` : "";
  const action = flag.value === undefined
    ? ""
    : `:${zshQuote(flag.value).replace(/:/g, "\\:")}:${
      flag.values
        ? `(${flag.values.join(" ")})`
        : flag.complete === "file"
        ? "_files"
        : flag.complete === "folder"
        ? "_files -/"
        : " "
    }`;
  const described = `'[${zshQuote(brief(flag.description))}]${action}'`;
  return flag.short ? `${exclusive}${names}${described}` : `${exclusive}'--${name}${described.slice(1)}`;
}

function zsh(entries: Entry[], specs: Specs): string {
  const describe = (table: Specs) =>
    Object.entries(table).map(([name, s]) => `'${name}:${zshQuote(brief(s.summary)).replace(/:/g, "\\:")}'`).join(" ");
  const paths = entries.map((e) => JSON.stringify(e.path)).join("|");
  const cases = entries.map(({ path, spec }) => {
    const flagSpecs = Object.entries(flagsOf(spec)).map(([name, flag]) => zshFlag(name, flag));
    const words = positionalWords(spec, specs);
    const subs = spec.subcommands ? `local -a subcommands; subcommands=(${describe(spec.subcommands)}); ` : "";
    const positional = spec.subcommands
      ? `'*:argument:{_describe -t subcommands subcommand subcommands${filesAfter(spec) ? "; _files" : ""}}'`
      : words.length > 0
      ? `'*:${spec.word ?? "argument"}:(${words.join(" ")})'`
      : filesAfter(spec)
      ? `'*:file:_files'`
      : `'*:argument: '`;
    return `    (${JSON.stringify(path)}) ${subs}_arguments -s ${[...flagSpecs, positional].join(" ")} ;;`;
  }).join("\n");
  return `#compdef loom
# zsh completion for loom: save as _loom in a folder on $fpath, or eval "$(loom completions zsh)" after compinit
_loom() {
  local -a commands
  commands=(${describe(specs)})
  if (( CURRENT == 2 )); then
    _describe -t commands command commands
    return
  fi
  # The command and its subcommand: the leading words that name one ($path is zsh's PATH: not that name).
  local cmdpath="" i=2
  while (( i < CURRENT )); do
    case "\${cmdpath:+$cmdpath }\${words[i]}" in
      (${paths}) cmdpath="\${cmdpath:+$cmdpath }\${words[i]}"; (( i++ )) ;;
      (*) break ;;
    esac
  done
  words=(loom "\${(@)words[i,-1]}")
  (( CURRENT -= i - 2 ))
  case "$cmdpath" in
${cases}
  esac
}
compdef _loom loom
`;
}

const fishQuote = (text: string) => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

function fish(entries: Entry[], specs: Specs): string {
  const lines = [
    "# fish completion for loom: loom completions fish > ~/.config/fish/completions/loom.fish",
    "complete -c loom -f",
    ...Object.entries(specs).map(([name, spec]) =>
      `complete -c loom -n __fish_use_subcommand -a ${name} -d ${fishQuote(brief(spec.summary))}`
    ),
  ];
  for (const { path, spec } of entries) {
    const [command, sub] = path.split(" ");
    const siblings = Object.keys((command === undefined ? undefined : specs[command])?.subcommands ?? {});
    // A command's own flags apply until one of its subcommands is given; a subcommand's once it is.
    const when = sub
      ? `__fish_seen_subcommand_from ${command}; and __fish_seen_subcommand_from ${sub}`
      : siblings.length > 0
      ? `__fish_seen_subcommand_from ${command}; and not __fish_seen_subcommand_from ${siblings.join(" ")}`
      : `__fish_seen_subcommand_from ${command}`;
    const words = positionalWords(spec, specs);
    if (spec.subcommands) {
      for (const [name, s] of Object.entries(spec.subcommands)) {
        lines.push(`complete -c loom -n ${fishQuote(when)} -a ${name} -d ${fishQuote(brief(s.summary))}`);
      }
    } else if (words.length > 0) lines.push(`complete -c loom -n ${fishQuote(when)} -a ${fishQuote(words.join(" "))}`);
    if (filesAfter(spec)) lines.push(`complete -c loom -n ${fishQuote(when)} -F`);
    for (const [name, flag] of Object.entries(flagsOf(spec))) {
      const arg = flag.value === undefined
        ? ""
        : flag.values
        ? ` -x -a ${fishQuote(flag.values.join(" "))}`
        : flag.complete === "file"
        ? " -r -F"
        : flag.complete === "folder"
        ? " -x -a '(__fish_complete_directories)'"
        : " -x";
      lines.push(
        `complete -c loom -n ${fishQuote(when)}${flag.short ? ` -s ${flag.short}` : ""} -l ${name}${arg} -d ${
          fishQuote(brief(flag.description))
        }`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

export function completionScript(shell: Shell, specs: Specs = COMMAND_SPECS): string {
  const entries = commandPaths(specs);
  return shell === "bash" ? bash(entries, specs) : shell === "zsh" ? zsh(entries, specs) : fish(entries, specs);
}

export function completionsCommand(argv: string[], io: Io): Promise<number> {
  const { positionals } = parseCommand(COMPLETIONS_SPEC, argv, { command: "completions" });
  if (positionals.length !== 1) {
    throw new UsageError(`Expected one shell: ${SHELLS.join(", ")} (loom completions SHELL)`);
  }
  io.stdout(completionScript(positionals[0] as Shell));
  return Promise.resolve(0);
}
