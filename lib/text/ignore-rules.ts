// gitignore patterns (https://git-scm.com/docs/gitignore): `*`, `?`, `[a-z]`, `**`, a leading `/` or an inner `/`
// anchoring a pattern to its folder, a trailing `/` for folders only, `!` re-including, `\` escaping, `#` comments.
// Used for `.gitignore` files in list_files and search, and for the globs a slice says do not change its revision.

export type IgnoreRule = { negate: boolean; directoryOnly: boolean; regex: RegExp; pattern: string };

/** The rules of one gitignore text; `base` is the folder (workspace-relative, "" for the top) they apply under. */
export function parseIgnore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const rule = parseLine(raw);
    if (rule) rules.push(rule);
  }
  return rules;
}

function parseLine(raw: string): IgnoreRule | undefined {
  // Trailing spaces are dropped unless escaped.
  let line = raw.replace(/(?<!\\)\s+$/, "");
  if (line === "" || line.startsWith("#")) return undefined;
  let negate = false;
  if (line.startsWith("!")) {
    negate = true;
    line = line.slice(1);
  } else if (line.startsWith("\\!") || line.startsWith("\\#")) line = line.slice(1);
  let directoryOnly = false;
  if (line.endsWith("/") && !line.endsWith("\\/")) {
    directoryOnly = true;
    line = line.replace(/\/+$/, "");
  }
  if (line === "") return undefined;
  const anchored = line.includes("/");
  if (line.startsWith("/")) line = line.slice(1);
  const body = globToRegex(line);
  const regex = new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`);
  return { negate, directoryOnly, regex, pattern: raw.trim() };
}

function globToRegex(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charAt(i);
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const before = i === 0 || glob[i - 1] === "/";
        const after = i + 2 === glob.length || glob[i + 2] === "/";
        if (before && after) {
          if (i + 2 === glob.length) out += ".*"; // trailing /**: everything inside
          else {
            out += "(?:.*/)?"; // leading **/ or inner /**/: zero or more folders
            i++; // the slash after ** is part of the group
          }
          i++;
          continue;
        }
      }
      out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end === -1) out += "\\[";
      else {
        let set = glob.slice(i + 1, end);
        if (set.startsWith("!")) set = `^${set.slice(1)}`;
        out += `[${set.replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else if (c === "\\" && i + 1 < glob.length) {
      out += escapeRegex(glob.charAt(++i));
    } else out += escapeRegex(c);
  }
  return out;
}

function escapeRegex(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

/** Rules with the folder they were read in (workspace-relative, "" for the top). */
export type ScopedRules = { base: string; rules: IgnoreRule[] };

/**
 * Whether `path` (workspace-relative, "/"-separated) is ignored by the scoped rule sets, in order (later sets and later
 * rules win, as git does). A folder's contents are not looked at once the folder is ignored: the caller stops there.
 */
export function isIgnored(scopes: readonly ScopedRules[], path: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const { base, rules } of scopes) {
    let relative: string;
    if (base === "") relative = path;
    else if (path.startsWith(`${base}/`)) relative = path.slice(base.length + 1);
    else continue;
    for (const rule of rules) {
      if (rule.directoryOnly && !isDirectory) continue;
      if (rule.negate === ignored && rule.regex.test(relative)) ignored = !rule.negate;
    }
  }
  return ignored;
}
