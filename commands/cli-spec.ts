// The command line as data: a CommandSpec per command (flags, types, choices, defaults, descriptions, examples) and
// the one engine that turns it into parsing, --help, usage lines, shell completions and did-you-mean, so the four
// cannot drift apart. The specs themselves are in commands/specs.ts.
import { UsageError } from "../lib/errors.ts";
import type { FlagSpec } from "../lib/settings/setting-table.ts";

/** A flag: its alias, placeholder, choices, completion, repetition, default, description and heading (the type is
 * lib/settings/setting-table.ts's, where the settings' flags are written). */
export type Flag = FlagSpec;

export type Flags = Readonly<Record<string, Flag>>;

export type CommandSpec = {
  /** One line for the command list of `loom --help`. */
  summary: string;
  /** The synopses, each after "loom COMMAND": `"TEXT" --model PROVIDER/MODEL [options]`. */
  usage: readonly string[];
  /** What the command does, in paragraphs (help wraps them; indented lines are kept as written). */
  description?: string;
  flags: Flags;
  /** The words a positional may be, when they are a fixed set (completed and checked); else positionals are files. */
  words?: readonly string[];
  /** What one of `words` is called in messages ("schema", "shell"). */
  word?: string;
  /** Positionals that are not paths (a prompt, a shell name): never completed as files. */
  positionalsAreFiles?: false;
  examples?: readonly { command: string; says: string }[];
  /** loom COMMAND SUBCOMMAND …: each its own spec. */
  subcommands?: Readonly<Record<string, CommandSpec>>;
};

/**
 * The values one command's flags parse to: strings, lists of strings for repeatable flags, true for switches. A flag
 * with a `values` list parses to its literal union: parseCommand refuses anything else, so no command checks again.
 */
export type Values<F extends Flags> = {
  -readonly [K in keyof F]?: F[K] extends { value: string }
    ? F[K] extends { multiple: true } ? ValueOf<F[K]>[] : ValueOf<F[K]>
    : true;
};
type ValueOf<F> = F extends { values: readonly (infer V extends string)[] } ? V : string;

export type Parsed<F extends Flags> = { values: Values<F>; positionals: string[]; help: boolean };

const HELP_FLAG: Flag = { short: "h", description: "show this help" };

/** The flags a command accepts, --help included. */
export function flagsOf(spec: CommandSpec): Flags {
  return { ...spec.flags, help: HELP_FLAG };
}

/** "legacy or bounded", "one of auto, required, off". */
function expectedValues(values: readonly string[]): string {
  return values.length === 2 ? `${values[0]} or ${values[1]}` : `one of ${values.join(", ")}`;
}

/**
 * Damerau distance (optimal string alignment), for did-you-mean: insertions, deletions, substitutions and swaps of
 * two neighbouring letters each cost 1, so "modle" is one edit from "model" and "rnu" one from "run".
 */
export function distance(a: string, b: string): number {
  // d[i][j]: the distance from a's first i letters to b's first j
  const d: number[][] = Array.from(
    { length: a.length + 1 },
    (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  // outside the table is out of reach
  const at = (i: number, j: number) => d[i]?.[j] ?? Infinity;
  for (const [i, row] of d.entries()) {
    if (i === 0) continue;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.length, b.length);
}

/** The closest of `candidates` to a mistyped word, when it is close enough to be what was meant. */
export function didYouMean(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null, bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = candidate.startsWith(word) && word.length >= 3 ? 0.5 : distance(word, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : null;
}

/**
 * argv against a command's spec. Every complaint is a one-line usage error naming the flag and what it expected;
 * a mistyped flag or value gets the closest one. A flag that takes a value takes the next word whatever it is, so
 * `--provider-deadline-ms -5` reaches the flag's own check (`expected a positive number…`).
 */
export function parseCommand<F extends Flags>(
  spec: CommandSpec & { flags: F },
  argv: readonly string[],
  { command }: { command: string },
): Parsed<F> {
  // argv is parsed once: main checks it before the command loads, and the command gets that parse.
  const known = PARSED.get(argv);
  if (known?.spec === spec) return known.parsed as Parsed<F>;
  const parsed = parseArgv(spec, argv, { command });
  PARSED.set(argv, { spec, parsed: Object.freeze(parsed) });
  return parsed;
}

/** Each argv's parse, by the spec it was parsed against (an argv array is parsed once). */
const PARSED = new WeakMap<readonly string[], { spec: CommandSpec; parsed: Parsed<Flags> }>();

/** How many times argv was parsed (tests count the parses of a command: one). */
export const parseCount = { parses: 0 };

function parseArgv<F extends Flags>(
  spec: CommandSpec & { flags: F },
  argv: readonly string[],
  { command }: { command: string },
): Parsed<F> {
  parseCount.parses++;
  const flags = flagsOf(spec);
  const byShort = new Map(Object.entries(flags).flatMap(([name, f]) => (f.short ? [[f.short, name]] : [])));
  const see = `(see loom ${command} --help)`;
  const values: Record<string, string | string[] | true> = {};
  const positionals: string[] = [];
  const set = (name: string, flag: Flag, value: string | true, shown: string) => {
    if (typeof value === "string") {
      if (value === "") throw new UsageError(`${shown} is empty; give a value ${see}`);
      if (flag.values && !flag.values.includes(value)) {
        const close = didYouMean(value, flag.values);
        throw new UsageError(
          `${shown} ${JSON.stringify(value)}: expected ${expectedValues(flag.values)}${
            close ? ` (did you mean ${close}?)` : ""
          }`,
        );
      }
    }
    if (flag.multiple) ((values[name] ??= []) as string[]).push(value as string);
    else values[name] = value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined, inline: string | undefined, shown: string;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
      shown = `--${name}`;
      if (!Object.hasOwn(flags, name)) {
        const close = didYouMean(name, Object.keys(flags));
        throw new UsageError(`Unknown option ${shown}${close ? `; did you mean --${close}?` : ""} ${see}`);
      }
    } else if (arg.startsWith("-") && arg.length > 1 && !/^-\d/.test(arg)) {
      name = byShort.get(arg.charAt(1));
      shown = `-${arg.charAt(1)}`;
      if (name === undefined) throw new UsageError(`Unknown option ${shown} ${see}`);
      if (arg.length > 2) inline = arg.charAt(2) === "=" ? arg.slice(3) : arg.slice(2);
    } else {
      positionals.push(arg);
      continue;
    }
    const flag = flags[name];
    if (flag === undefined) throw new Error(`${name} was looked up in the flags`);
    const next = argv[i + 1];
    if (flag.value === undefined) {
      if (inline !== undefined) throw new UsageError(`${shown} takes no value ${see}`);
      set(name, flag, true, shown);
    } else if (inline !== undefined) set(name, flag, inline, shown);
    else if (next !== undefined) {
      i++;
      set(name, flag, next, shown);
    } else throw new UsageError(`${shown} needs a value: ${shown} ${flag.value} ${see}`);
  }
  // An empty argument is never meant: as a path it would resolve to the current folder (`loom replay ""`).
  if (positionals.some((p) => p === "")) throw new UsageError(`An argument is empty; give a path ${see}`);
  if (spec.words && !values.help) {
    for (const word of positionals) {
      if (!spec.words.includes(word)) {
        const close = didYouMean(word, spec.words);
        throw new UsageError(
          `Unknown ${spec.word ?? "argument"} ${JSON.stringify(word)} (expected ${expectedValues(spec.words)})${
            close ? `; did you mean ${close}?` : ""
          }`,
        );
      }
    }
  }
  const help = values.help === true;
  delete values.help;
  // The loop above built exactly Values<F>: a flag's values list checked, a multiple flag's array, a switch's true.
  return { values: values as Values<F>, positionals, help };
}

// ---- help ----

/** "-m, --model PROVIDER/MODEL" as help and the usage lines show a flag. */
function flagSynopsis(name: string, flag: Flag): string {
  const placeholder = flag.value === undefined
    ? ""
    : flag.values && flag.values.join("|").length <= 28
    ? ` ${flag.values.join("|")}`
    : ` ${flag.value}`;
  return `${flag.short ? `-${flag.short}, ` : "    "}--${name}${placeholder}`;
}

/** A flag's description as help prints it: its text, its choices when the synopsis does not show them, its default. */
function flagDescription(flag: Flag): string {
  const shownChoices = flag.values && flag.values.join("|").length <= 28;
  const parts = [flag.description];
  if (flag.values && !shownChoices) parts.push(`(${expectedValues(flag.values)})`);
  if (flag.default !== undefined) parts.push(`(default: ${flag.default})`);
  // A note the description already makes is not repeated ("a model to evaluate (repeatable) (repeatable)").
  if (flag.multiple && !flag.description.includes("(repeatable)")) parts.push("(repeatable)");
  return parts.join(" ");
}

const WIDTH = 100;

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** The usage lines of a command (and of its subcommands), as `loom COMMAND …`. */
export function usageLines(path: string, spec: CommandSpec): string[] {
  return [
    ...spec.usage.map((u) => `loom ${path} ${u}`.trimEnd()),
    ...Object.entries(spec.subcommands ?? {}).flatMap(([name, sub]) => usageLines(`${path} ${name}`, sub)),
  ];
}

/** `loom COMMAND --help`: usage, description, the flags by group with their choices and defaults, examples. */
export function renderHelp(path: string, spec: CommandSpec): string {
  const usage = usageLines(path, spec);
  const out = [`Usage: ${usage[0]}`, ...usage.slice(1).map((u) => `       ${u}`), ""];
  // Paragraphs are wrapped to the width; a paragraph with indented lines (a table, commands) is kept as written.
  for (const paragraph of (spec.description ?? "").trim().split(/\n\s*\n/).filter(Boolean)) {
    out.push(...(/^ {2}/m.test(paragraph) ? paragraph.split("\n") : wrap(paragraph, WIDTH)), "");
  }
  const flags = Object.entries(flagsOf(spec));
  const column = Math.min(34, Math.max(...flags.map(([name, f]) => flagSynopsis(name, f).length)) + 4);
  const groups = [...new Set(flags.map(([, f]) => f.group ?? "Options"))];
  // The command's own groups first, the generic "Options" (with --help) last.
  groups.sort((a, b) => (a === "Options" ? 1 : 0) - (b === "Options" ? 1 : 0));
  for (const group of groups) {
    out.push(`${group}:`);
    for (const [name, flag] of flags.filter(([, f]) => (f.group ?? "Options") === group)) {
      const synopsis = `  ${flagSynopsis(name, flag)}`;
      const text = wrap(flagDescription(flag), WIDTH - column);
      const first = synopsis.length + 2 <= column ? [`${synopsis.padEnd(column)}${text.shift() ?? ""}`] : [synopsis];
      out.push(...first, ...text.map((l) => `${" ".repeat(column)}${l}`));
    }
    out.push("");
  }
  const subcommands = Object.entries(spec.subcommands ?? {});
  if (subcommands.length > 0) {
    out.push("Subcommands:");
    for (const [name, sub] of subcommands) out.push(`  ${name.padEnd(12)}${sub.summary}`);
    out.push(`Run "loom help ${path} SUBCOMMAND" for a subcommand's options.`, "");
  }
  if (spec.examples && spec.examples.length > 0) {
    out.push("Examples:");
    for (const example of spec.examples) {
      out.push(
        `  ${example.command}`,
        ...wrap(example.says, WIDTH - 6).map((l) => `      ${l}`),
      );
    }
    out.push("");
  }
  return `${out.join("\n").trimEnd()}\n`;
}

/** The spec at a command path ("eval validate"), or null with the word that matched nothing. */
export function findSpec(
  specs: Readonly<Record<string, CommandSpec>>,
  path: readonly string[],
): { spec: CommandSpec; path: string } | { unknown: string; known: string[] } {
  let table = specs, spec: CommandSpec | undefined, walked: string[] = [];
  for (const word of path) {
    // "loom help schema request": a command's own word (a schema, a shell) is that command's help.
    if (spec?.words?.includes(word) && !Object.hasOwn(table, word)) break;
    if (!Object.hasOwn(table, word)) {
      return { unknown: [...walked, word].join(" "), known: [...Object.keys(table), ...(spec?.words ?? [])] };
    }
    const found = table[word];
    if (found === undefined) return { unknown: [...walked, word].join(" "), known: Object.keys(table) };
    spec = found;
    walked = [...walked, word];
    table = found.subcommands ?? {};
  }
  return spec ? { spec, path: walked.join(" ") } : { unknown: "", known: Object.keys(specs) };
}

/** `loom --help`: every command's usage lines, the command list, and what each exit code means. */
export function renderMainUsage(
  specs: Readonly<Record<string, CommandSpec>>,
  { title, exitCodes }: { title: string; exitCodes: readonly (readonly [number, string])[] },
): string {
  const usage = Object.entries(specs).flatMap(([name, spec]) => usageLines(name, spec));
  const out = [title, "", "Usage:", ...usage.map((u) => `  ${u}`), "", "Commands:"];
  for (const [name, spec] of Object.entries(specs)) out.push(`  ${name.padEnd(13)}${spec.summary}`);
  out.push(
    "",
    `Run "loom help COMMAND" (or "loom COMMAND --help") for a command's options and examples.`,
    "",
    renderExitCodes(exitCodes),
  );
  return `${out.join("\n")}`;
}

/** The exit-code table as `loom --help` and the README show it. */
export function renderExitCodes(exitCodes: readonly (readonly [number, string])[]): string {
  return `Exit codes:\n${exitCodes.map(([code, meaning]) => `  ${String(code).padEnd(5)}${meaning}\n`).join("")}`;
}
