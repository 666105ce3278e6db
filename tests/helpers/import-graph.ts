// The static import graph of the repository's TypeScript modules, and its cycles. Type-only imports count: a cycle
// of types is still two modules that cannot be understood (or moved) one without the other.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** Module path (relative to the root) -> the modules it imports, in source order. */
export type ImportGraph = Map<string, string[]>;

/** Removes comments, so an import named in a comment is not one; "//" inside a string (a URL) is kept. */
function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** The relative specifiers of a module's static imports and re-exports (type-only ones included). */
export function importSpecifiers(source: string): string[] {
  const code = stripComments(source);
  const found: string[] = [];
  const statement = /(?:^|[;\n}])\s*(?:import|export)\s+(?:type\s+)?(?:[^;'"]*?\sfrom\s*)?["'](\.[^"']+)["']/g;
  for (const match of code.matchAll(statement)) found.push(match[1]);
  return found;
}

function modulesUnder(root: string, path: string): string[] {
  const full = join(root, path);
  if (!statSync(full).isDirectory()) return path.endsWith(".ts") ? [path] : [];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) =>
    entry.name === "node_modules" || entry.name.startsWith(".") ? [] : modulesUnder(root, join(path, entry.name))
  );
}

/** The graph of every module under `paths` (files or folders, relative to `root`). */
export function importGraph(root: string, paths: string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const module of paths.flatMap((p) => modulesUnder(root, p))) {
    const source = readFileSync(join(root, module), "utf8");
    graph.set(
      module,
      importSpecifiers(source).map((specifier) => relative(root, resolve(root, dirname(module), specifier))),
    );
  }
  return graph;
}

/** Every cycle, once each, as the modules along it (the first repeated at the end). */
export function findCycles(graph: ImportGraph): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (module: string) => {
    state.set(module, "open");
    path.push(module);
    for (const next of graph.get(module) ?? []) {
      if (state.get(next) === "open") {
        const cycle = [...path.slice(path.indexOf(next)), next];
        const key = [...cycle.slice(0, -1)].sort().join(" ");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(cycle);
        }
      } else if (!state.has(next) && graph.has(next)) visit(next);
    }
    path.pop();
    state.set(module, "done");
  };
  for (const module of [...graph.keys()].sort()) if (!state.has(module)) visit(module);
  return cycles;
}
