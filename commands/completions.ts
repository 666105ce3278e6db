// loom completions bash|zsh|fish|powershell: a completion script generated from the command specs (commands/specs.ts),
// so every command, subcommand, flag, short flag and choice completes as the parser accepts it, at every position
// (loom help eval … included), with descriptions in zsh, fish and PowerShell. A command or flag added to the specs
// completes with no change here.
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
function positionalWords(spec: CommandSpec): string[] {
  return [...(spec.words ?? []), ...Object.keys(spec.subcommands ?? {})];
}

type Specs = Readonly<Record<string, CommandSpec>>;

const filesAfter = (spec: CommandSpec) => spec.words === undefined && spec.positionalsAreFiles !== false;

/**
 * `loom help …`: what may follow each command path after "help" (the command names after "help" itself, a command's
 * subcommands after it). Paths without subcommands have nothing to offer.
 */
function helpWords(entries: Entry[], specs: Specs): [string, string[]][] {
  return [
    ["", Object.keys(specs)],
    ...entries.filter((e) => e.spec.subcommands).map((e): [string, string[]] => [
      e.path,
      Object.keys(e.spec.subcommands!),
    ]),
  ];
}

/** Every spelling of each of a command's flags: --name, and -x for a short one. */
const spellings = (spec: CommandSpec) =>
  Object.entries(flagsOf(spec)).flatMap(([name, f]) => [`--${name}`, ...(f.short ? [`-${f.short}`] : [])]);

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
    if (spec === specs.help) continue;
    cases.push(
      `    "${path}") flags="${spellings(spec).join(" ")}"; words="${positionalWords(spec).join(" ")}"; files=${
        filesAfter(spec) ? 1 : 0
      } ;;`,
    );
  }
  const helps = helpWords(entries, specs).map(([path, words]) => `      "${path}") words="${words.join(" ")}" ;;`);
  return `# bash completion for loom: eval "$(loom completions bash)" or save it under bash-completion's completions/
_loom() {
  local cur prev cmdpath flags words files i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${top.join(" ")} --help --version" -- "$cur"))
    return
  fi
  # loom help COMMAND [SUBCOMMAND]: the words after help name a command; offer what may follow it.
  if [ "\${COMP_WORDS[1]}" = help ]; then
    cmdpath=""
    for ((i = 2; i < COMP_CWORD; i++)); do cmdpath="\${cmdpath:+$cmdpath }\${COMP_WORDS[i]}"; done
    case "$cmdpath" in
${helps.join("\n")}
      *) words="" ;;
    esac
    if [[ "$cur" == -* ]]; then words="--help -h"; fi
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
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
  else
    # A command's words (subcommands, schema names) and, where it takes files, the files too: "loom eval ev" may be
    # the evals/ folder as well as a subcommand.
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    if [ "$files" = 1 ]; then COMPREPLY+=($(compgen -f -- "$cur")); fi
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
  const tables = new Map<string, Specs>([
    ["", specs],
    ...entries.map((e): [string, Specs] => [e.path, e.spec.subcommands ?? {}]),
  ]);
  const helps = helpWords(entries, specs).map(([path]) =>
    `        (${JSON.stringify(path)}) local -a next; next=(${
      describe(tables.get(path)!)
    }); _describe -t commands command next ;;`
  );
  const cases = entries.map(({ path, spec }) => {
    if (spec === specs.help) {
      return `    ("help")\n      case "\${(j: :)words[2,CURRENT-1]}" in\n${helps.join("\n")}\n      esac ;;`;
    }
    const flagSpecs = Object.entries(flagsOf(spec)).map(([name, flag]) => zshFlag(name, flag));
    const words = positionalWords(spec);
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
# Autoloaded from $fpath the file's body is the first call: complete now. Evaluated, register the function.
if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _loom "$@"
else
  compdef _loom loom
fi
`;
}

const fishQuote = (text: string) => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

/**
 * fish: every completion is conditioned on the command path the line has reached (`__loom_at "eval validate"`,
 * from the same path walk as bash and zsh), so a subcommand position offers that subcommand's flags and words only,
 * and `loom help eval ` offers eval's subcommands (`__loom_help_at eval`).
 */
function fish(entries: Entry[], specs: Specs): string {
  const lines = [
    "# fish completion for loom: loom completions fish > ~/.config/fish/completions/loom.fish",
    `set -g __loom_paths ${entries.map((e) => fishQuote(e.path)).join(" ")}`,
    "# The command path the words before the cursor name: the leading words that are a command and its subcommand.",
    "function __loom_path",
    "    set -l tokens (commandline -opc)",
    "    set -l path ''",
    "    for token in $tokens[2..-1]",
    '        set -l next (string trim -- "$path $token")',
    "        contains -- $next $__loom_paths; or break",
    "        set path $next",
    "    end",
    "    echo $path",
    "end",
    "function __loom_at",
    "    set -l path (__loom_path)",
    '    test "$path" = "$argv[1]"',
    "end",
    "# loom help COMMAND …: the words after help name a command path.",
    "function __loom_help_at",
    "    set -l tokens (commandline -opc)",
    '    test "$tokens[2]" = help; or return 1',
    "    test (count $tokens) -gt 2; and set -l rest $tokens[3..-1]; or set -l rest",
    '    test "$rest" = "$argv[1]"',
    "end",
    "complete -c loom -f",
    ...Object.entries(specs).map(([name, spec]) =>
      `complete -c loom -n '__loom_at ""' -a ${name} -d ${fishQuote(brief(spec.summary))}`
    ),
    `complete -c loom -n '__loom_at ""' -l help -d 'show help'`,
    `complete -c loom -n '__loom_at ""' -l version -d 'print the version'`,
  ];
  const tables = new Map<string, Specs>([
    ["", specs],
    ...entries.map((e): [string, Specs] => [e.path, e.spec.subcommands ?? {}]),
  ]);
  for (const [path] of helpWords(entries, specs)) {
    for (const [name, s] of Object.entries(tables.get(path)!)) {
      lines.push(
        `complete -c loom -n ${fishQuote(`__loom_help_at ${JSON.stringify(path)}`)} -a ${name} -d ${
          fishQuote(brief(s.summary))
        }`,
      );
    }
  }
  for (const { path, spec } of entries) {
    const when = fishQuote(`__loom_at ${JSON.stringify(path)}`);
    if (spec === specs.help) {
      lines.push(`complete -c loom -n ${when} -l help -d 'show this help'`);
      continue;
    }
    if (spec.subcommands) {
      for (const [name, s] of Object.entries(spec.subcommands)) {
        lines.push(`complete -c loom -n ${when} -a ${name} -d ${fishQuote(brief(s.summary))}`);
      }
    }
    if (spec.words) lines.push(`complete -c loom -n ${when} -a ${fishQuote(spec.words.join(" "))}`);
    if (filesAfter(spec)) lines.push(`complete -c loom -n ${when} -F`);
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
        `complete -c loom -n ${when}${flag.short ? ` -s ${flag.short}` : ""} -l ${name}${arg} -d ${
          fishQuote(brief(flag.description))
        }`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

const psQuote = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * PowerShell (the Windows binary's shell): one native argument completer with a table per command path — its flags
 * with descriptions, each value flag's choices (or "file"/"folder": PowerShell then completes paths itself), its
 * words, and whether it takes files — walked the same way as the other shells.
 */
function powershell(entries: Entry[], specs: Specs): string {
  const table = (spec: CommandSpec | null) => {
    const flags = spec
      ? Object.entries(flagsOf(spec))
      : [["help", { description: "show help" }], ["version", { description: "print the version" }]] as [string, Flag][];
    const described = flags.flatMap(([name, f]) =>
      [`--${name}`, ...(f.short ? [`-${f.short}`] : [])].map((w) => `${psQuote(w)} = ${psQuote(brief(f.description))}`)
    );
    const values = flags.flatMap(([name, f]) => {
      if (f.value === undefined) return [];
      const v = f.values ? `@(${f.values.map(psQuote).join(", ")})` : psQuote(f.complete ?? "none");
      return [`--${name}`, ...(f.short ? [`-${f.short}`] : [])].map((w) => `${psQuote(w)} = ${v}`);
    });
    const words = spec ? positionalWords(spec) : Object.keys(specs);
    const summaries = spec ? spec.subcommands ?? {} : specs;
    const wordList = words.map((w) => `${psQuote(w)} = ${psQuote(brief(summaries[w]?.summary ?? w))}`);
    return `@{ flags = [ordered]@{ ${described.join("; ")} }; values = @{ ${values.join("; ")} }; words = [ordered]@{ ${
      wordList.join("; ")
    } }; files = $${spec !== null && filesAfter(spec)} }`;
  };
  const rows = [
    `    '' = ${table(null)}`,
    ...entries.filter((e) => e.spec !== specs.help).map((e) => `    ${psQuote(e.path)} = ${table(e.spec)}`),
  ];
  const tables = new Map<string, Specs>([
    ["", specs],
    ...entries.map((e): [string, Specs] => [e.path, e.spec.subcommands ?? {}]),
  ]);
  const helps = helpWords(entries, specs).map(([path]) =>
    `    ${psQuote(path)} = [ordered]@{ ${
      Object.entries(tables.get(path)!).map(([w, s]) => `${psQuote(w)} = ${psQuote(brief(s.summary))}`).join("; ")
    } }`
  );
  return `# PowerShell completion for loom: loom completions powershell | Out-String | Invoke-Expression (e.g. in $PROFILE)
Register-ArgumentCompleter -Native -CommandName loom, loom.exe -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  $paths = @{
${rows.join("\n")}
  }
  $helps = @{
${helps.join("\n")}
  }
  # The words before the one being completed, after "loom".
  $tokens = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
  if ($wordToComplete -ne '') { $tokens = @($tokens | Select-Object -SkipLast 1) }
  # The command and its subcommand: the leading words that name one.
  $path = ''
  $rest = @()
  for ($i = 0; $i -lt $tokens.Count; $i++) {
    $next = "$path $($tokens[$i])".Trim()
    if (-not $paths.ContainsKey($next) -and $next -ne 'help') { $rest = @($tokens | Select-Object -Skip $i); break }
    $path = $next
  }
  $candidates = [ordered]@{}
  if ($path -eq 'help') {
    $named = $rest -join ' '
    if ($helps.Contains($named)) { $candidates = $helps[$named] }
  } else {
    $entry = $paths[$path]
    $last = if ($tokens.Count -gt 0) { $tokens[-1] } else { '' }
    if ($entry.values.ContainsKey($last)) {
      $choices = $entry.values[$last]
      # A file or folder: nothing from here, so PowerShell completes paths.
      if ($choices -is [string]) { return }
      foreach ($c in $choices) { $candidates[$c] = $c }
    } elseif ($wordToComplete.StartsWith('-')) {
      $candidates = $entry.flags
    } else {
      $candidates = $entry.words
      if ($entry.files -and -not ($candidates.Keys | Where-Object { $_ -like "$wordToComplete*" })) { return }
    }
  }
  foreach ($key in $candidates.Keys) {
    if ($key -like "$wordToComplete*") {
      [System.Management.Automation.CompletionResult]::new($key, $key, 'ParameterValue', $candidates[$key])
    }
  }
}
`;
}

export function completionScript(shell: Shell, specs: Specs = COMMAND_SPECS): string {
  const entries = commandPaths(specs);
  const render = { bash, zsh, fish, powershell }[shell];
  return render(entries, specs);
}

export function completionsCommand(argv: string[], io: Io): Promise<number> {
  const { positionals } = parseCommand(COMPLETIONS_SPEC, argv, { command: "completions" });
  if (positionals.length !== 1) {
    throw new UsageError(`Expected one shell: ${SHELLS.join(", ")} (loom completions SHELL)`);
  }
  io.stdout(completionScript(positionals[0] as Shell));
  return Promise.resolve(0);
}
