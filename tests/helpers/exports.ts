// Exported values no other module imports: an export is a promise to other modules, and one nobody takes is either
// dead code or a module's private helper that should say so. Types are left out (they cost nothing at run time).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

function modulesUnder(root: string, path: string): string[] {
  const full = join(root, path);
  if (!statSync(full).isDirectory()) return path.endsWith(".ts") ? [path] : [];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) =>
    entry.name === "node_modules" || entry.name === "fixtures" || entry.name.startsWith(".")
      ? []
      : modulesUnder(root, join(path, entry.name))
  );
}

function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** The names of the values a module exports (functions, constants, classes, enums, value re-exports). */
export function exportedValues(source: string): string[] {
  const code = stripComments(source);
  const names = new Set<string>();
  for (
    const m of code.matchAll(/^export\s+(?:async\s+)?(?:function\*?|const|let|var|class|enum)\s+([A-Za-z_$][\w$]*)/gm)
  ) {
    names.add(m[1]);
  }
  for (const m of code.matchAll(/^export\s*\{([^}]*)\}/gm)) {
    for (const part of m[1].split(",")) {
      const item = part.trim();
      if (item === "" || item.startsWith("type ")) continue;
      names.add(item.split(/\s+as\s+/).pop()!.trim());
    }
  }
  return [...names];
}

/**
 * What one module takes from others: module path -> the names (or "*" for all). Type-only imports count: a zod
 * schema and its type share a name and one export.
 */
export function importedNames(source: string): { specifier: string; names: string[] | "*" }[] {
  const code = stripComments(source);
  const found: { specifier: string; names: string[] | "*" }[] = [];
  const statement = /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*["'](\.[^"']+)["']/g;
  for (const m of code.matchAll(statement)) {
    const clause = m[3];
    if (/\*/.test(clause) && !/\{/.test(clause)) {
      found.push({ specifier: m[4], names: "*" });
      continue;
    }
    const braces = clause.match(/\{([^}]*)\}/);
    const names = (braces ? braces[1].split(",") : [])
      .map((part) => part.trim())
      .filter((part) => part !== "")
      .map((part) => part.replace(/^type\s+/, "").split(/\s+as\s+/)[0].trim());
    const defaultName = clause.replace(/\{[^}]*\}/, "").replace(/,/g, "").trim();
    if (defaultName && !defaultName.startsWith("*")) names.push("default");
    found.push({ specifier: m[4], names });
  }
  // A dynamic import takes whatever the importing module names.
  for (const m of code.matchAll(/\bimport\s*\(\s*["'](\.[^"']+)["']\s*\)/g)) {
    const words = [...new Set(code.match(/[A-Za-z_$][\w$]*/g) ?? [])];
    found.push({ specifier: m[1], names: words });
  }
  return found;
}

/**
 * Each exported value of a module under `exporters` that no module under `importers` imports, as "path: name".
 * `publicModules` are the library's surface: what they export is used by definition.
 */
export function unusedExports(
  root: string,
  { exporters, importers, publicModules }: { exporters: string[]; importers: string[]; publicModules: string[] },
): string[] {
  const used = new Map<string, Set<string>>();
  for (const module of importers.flatMap((p) => modulesUnder(root, p))) {
    for (const { specifier, names } of importedNames(readFileSync(join(root, module), "utf8"))) {
      const target = relative(root, resolve(root, dirname(module), specifier));
      const set = used.get(target) ?? new Set<string>();
      for (const name of names === "*" ? ["*"] : names) set.add(name);
      used.set(target, set);
    }
  }
  const unused: string[] = [];
  for (const module of exporters.flatMap((p) => modulesUnder(root, p))) {
    if (publicModules.includes(module)) continue;
    const taken = used.get(module) ?? new Set<string>();
    if (taken.has("*")) continue;
    for (const name of exportedValues(readFileSync(join(root, module), "utf8"))) {
      if (!taken.has(name)) unused.push(`${module}: ${name}`);
    }
  }
  return unused.sort();
}
