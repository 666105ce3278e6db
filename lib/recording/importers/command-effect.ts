// Whether an imported shell command may have changed the workspace. An imported run cannot be fingerprinted after the
// fact, so a command counts as a change (a new revision) unless it is plainly a read: every command in it is a known
// reader and nothing is redirected into a file. Wrongly counting a read as a change only makes tests_current false
// until the next test run; wrongly counting a change as a read would let a stale pass look current.

const READERS = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "wc",
  "pwd",
  "echo",
  "printf",
  "nl",
  "sort",
  "uniq",
  "cut",
  "tree",
  "file",
  "stat",
  "which",
  "diff",
  "cd",
  "true",
  "less",
  "more",
  "du",
  "df",
  "env",
  "date",
  "whoami",
  "realpath",
  "dirname",
  "basename",
  "test",
  "[",
  "type",
  "column",
  "tr",
  "od",
  "xxd",
  "hexdump",
]);
/** Readers only with these first arguments (git status, not git commit). */
const READING_SUBCOMMANDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["git", new Set(["status", "diff", "log", "show", "blame", "grep", "ls-files", "rev-parse", "branch"])],
]);
/** Readers unless given one of these options (sed -i, find -delete). */
const WRITING_OPTIONS: ReadonlyMap<string, RegExp> = new Map([
  ["sed", /^(-i|--in-place)/],
  ["find", /^-(delete|exec|execdir|ok|fprint)/],
]);

export function mayChangeFiles(argv: readonly string[]): boolean {
  const script = argv.length >= 3 && /(^|\/)(ba|z|da)?sh$/.test(argv[0] ?? "") && argv[1] === "-c"
    ? argv.slice(2).join(" ")
    : argv.join(" ");
  // Output redirected anywhere but /dev/null or another descriptor writes a file.
  const withoutHarmless = script.replace(/\d*>>?\s*(\/dev\/null|&\d)/g, "").replace(/<</g, "");
  if (/>/.test(withoutHarmless)) return true;
  if (/\$\(|`/.test(script)) return true; // command substitution: whatever it runs is unknown
  for (const part of script.split(/&&|\|\||[;|&\n]/)) {
    const words = part.trim().split(/\s+/).filter((w) => w !== "" && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
    const [program] = words;
    if (program === undefined) continue;
    const command = program.replace(/^.*\//, "");
    const sub = READING_SUBCOMMANDS.get(command);
    if (sub) {
      if (!sub.has(words[1] ?? "")) return true;
      continue;
    }
    const writing = WRITING_OPTIONS.get(command);
    if (writing) {
      if (words.slice(1).some((w) => writing.test(w))) return true;
      continue;
    }
    if (!READERS.has(command)) return true;
  }
  return false;
}
